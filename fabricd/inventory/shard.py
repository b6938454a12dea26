"""Shards of the switches by a stable hash of the switch name, the way Prometheus' ``hashmod`` relabel action does it,
so N replicas of ``fabricd serve`` / ``fabricd export switches`` split a fabric with no coordination of their own.

The hash is Prometheus' exactly (prometheus/prometheus model/relabel/relabel.go, ``case HashMod``)::

    hash := md5.Sum([]byte(val))
    mod := binary.BigEndian.Uint64(hash[8:]) % cfg.Modulus

that is: the MD5 digest of the UTF-8 switch name, its last 8 bytes read as a big-endian unsigned 64-bit integer,
modulo N. A switch belongs to shard K when that number is K. So a Prometheus ``relabel_configs`` entry
``{source_labels: [switch], action: hashmod, modulus: N, target_label: shard}`` gives every ``fabricd_switch_*`` series
the shard number of the replica that exports it (Prometheus' own test vectors, ``baz`` -> 976 and ``foo\\nbar`` ->
734 modulo 1000, are in tests/unit/test_shard.py; tests/integration/test_shards.py asks a real Prometheus).

A switch's shard depends on its name and N only: adding or removing a switch moves no other switch; changing N
moves most of them (hashmod is not a consistent hash, as in Prometheus).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabricd.errors import UsageError

_ORDINAL = re.compile(r"-(\d+)$")


def hashmod(value: str, modulus: int) -> int:
    """Prometheus' ``hashmod`` of ``value``: the low 64 bits (last 8 bytes, big-endian) of its MD5 digest, modulo
    ``modulus`` (>= 1)."""
    if modulus < 1:
        raise ValueError(f"modulus must be at least 1, got {modulus}")
    digest = hashlib.md5(value.encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(digest[8:], "big") % modulus


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (0-based) of ``count``: the switches whose :func:`hashmod` of the name is ``index``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, name: str) -> bool:
        return hashmod(name, self.count) == self.index

    def select(self, names: Iterable[str]) -> list[str]:
        """The names this shard owns, in the given order."""
        return [n for n in names if self.owns(n)]


def parse_shard(text: str, *, option: str = "shard") -> Shard:
    """``K/N`` (0 <= K < N) -> :class:`Shard`; anything else is a :class:`UsageError` about the setting ``option``."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if m is None:
        raise UsageError(
            f"{text!r}: expected K/N (this replica's shard K of N, K from 0)",
            option=option,
            hint="e.g. 0/2 and 1/2 on two replicas",
        )
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or index >= count:
        raise UsageError(
            f"{text!r}: K must be in 0..N-1 and N at least 1; got K={index}, N={count}",
            option=option,
            hint=f"the shards of N={max(count, 1)} are 0/{max(count, 1)} .. {max(count, 1) - 1}/{max(count, 1)}",
        )
    return Shard(index, count)


def shard_from_hostname(count: int, hostname: str, *, option: str = "shard_from_hostname") -> Shard:
    """Shard K of ``count`` where K is the pod ordinal a Kubernetes StatefulSet puts at the end of the hostname
    (``fabricd-switches-1`` -> 1). A hostname without ``-<number>`` at its end, or an ordinal >= ``count`` (more
    replicas than shards), is a :class:`UsageError`."""
    if count < 1:
        raise UsageError(
            f"{count}: the number of shards must be at least 1",
            option=option,
            hint="give the StatefulSet's replicas, e.g. 2",
        )
    m = _ORDINAL.search(hostname)
    if m is None:
        raise UsageError(
            f"{count}: hostname {hostname!r} does not end in -<ordinal>",
            option=option,
            hint="run it in a StatefulSet pod (name-0, name-1, ...) or give the shard as K/N instead",
        )
    index = int(m.group(1))
    if index >= count:
        raise UsageError(
            f"{count}: hostname {hostname!r} is ordinal {index}, not below {count} shards",
            option=option,
            hint="set it to the StatefulSet's replicas (FABRICD_SHARD_FROM_HOSTNAME)",
        )
    return Shard(index, count)
