"""What a platform pack declares for gNMI streaming: :class:`GnmiTable`, one per switch OS
(``fabricd/nos/<id>/gnmi.py``).

A table is data, pure (L1): the subscriptions the gNMI collector sends (path, origin, target, encoding, SAMPLE or
ON_CHANGE, the interval floor and default the NOS documents), and ``to_counters``, which turns the latest value of
every subscribed path into the same :class:`~fabricd.readers.switch.model.SwitchCounters` the pack's SSH parsers
produce, so the exporter emits the same series whichever transport read them. Every entry names its source
(the repository path or vendor page). A counter the NOS does not publish over gNMI
is listed in ``ssh_only`` (read over SSH by the SSH collector, or missing when the switch streams) and never
reported as 0. ``mapped`` False: the paths are recorded but the collector cannot read this NOS over gNMI yet (the
inventory refuses ``telemetry.transport: gnmi`` for it, naming this table).

The collector (fabricd.collectors.gnmi, L2) is the only module that imports grpc and the gNMI stubs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fabricd.model import Platform
from fabricd.readers.common import Direction
from fabricd.readers.switch.model import InterfaceCounter, LinkStat, SwitchCounters

Mode = Literal["SAMPLE", "ON_CHANGE"]
Encoding = Literal["JSON", "JSON_IETF", "PROTO"]


@dataclass(frozen=True)
class GnmiPath:
    """One subscribed path. ``path`` is slash-separated gNMI elements (keys as ``name[key=value]``); ``origin`` and
    ``target`` go in the request's prefix; ``group`` names the Subscribe stream the path belongs to (one
    subscription per group: origins are never mixed in one request, EOS refuses that)."""

    path: str
    mode: Mode
    source: str
    origin: str = ""
    target: str = ""
    group: str = "counters"
    interval_s: float | None = None
    """SAMPLE: the interval this path is streamed at by default (None: the table's default); the switch's own counter
    refresh is the floor that makes sense (SONiC queues refresh every 10 s)."""


@dataclass(frozen=True)
class GnmiPart:
    """One independent piece of ``to_counters``: it reads only the path keys ``reads``, so a collector converts it
    again only when one of those values changed (SONiC's queue tables change every 10 s, its ports every 1 s)."""

    reads: tuple[str, ...]
    convert: Callable[[Mapping[str, Any]], SwitchCounters]


@dataclass(frozen=True)
class GnmiTable:
    """A NOS's gNMI table. ``port``: the NOS's default gNMI port; ``encoding``: what its JSON values need;
    ``min_interval_s``: the shortest SAMPLE interval the NOS accepts (``None``: unverified); ``default_interval_s``:
    what the NOS uses when the request gives 0 or none; ``supports_get``: False where the NOS refuses Get (Cumulus);
    ``ssh_only``: counter -> why it is not streamed (read over SSH, or missing when streaming);
    ``missing_when_streaming``: the prefixes of the switch series (``fabricd_switch_...``) the SSH collector exports
    for this NOS and a streaming switch does not: absent, never 0, while the switch is read over gNMI;
    ``only_when_streaming``: the series prefixes a streaming switch exports and the SSH collector does not (the
    NOS publishes that counter over gNMI only); ``unverified``: what no published payload or document confirmed.
    An entry of either list is a series-name prefix, optionally narrowed to one label value:
    ``fabricd_switch_queue_ecn_marked_packets_total{type=multicast}`` (:meth:`declared`)."""

    platform: Platform
    port: int
    encoding: Encoding
    paths: tuple[GnmiPath, ...]
    min_interval_s: float | None
    default_interval_s: float
    to_counters: Callable[[Mapping[str, Any]], SwitchCounters] | None
    source: str
    supports_get: bool = True
    ssh_only: Mapping[str, str] = field(default_factory=dict)
    missing_when_streaming: tuple[str, ...] = ()
    only_when_streaming: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    parts: tuple[GnmiPart, ...] = ()
    """``to_counters`` in independent pieces (optional): merged, they give what ``to_counters`` gives."""

    @property
    def mapped(self) -> bool:
        """True when the collector can turn this NOS's notifications into counters."""
        return self.to_counters is not None

    @staticmethod
    def declared(entries: tuple[str, ...], name: str, labels: Mapping[str, str]) -> bool:
        """True when the series ``name{labels}`` falls under one of ``entries`` (``missing_when_streaming`` or
        ``only_when_streaming``): a name prefix, with ``{label=value}`` the series whose label has that value."""
        for entry in entries:
            prefix, _, narrow = entry.partition("{")
            if not name.startswith(prefix):
                continue
            label, _, value = narrow.rstrip("}").partition("=")
            if not narrow or labels.get(label) == value:
                return True
        return False

    def groups(self) -> dict[str, tuple[GnmiPath, ...]]:
        """The paths by subscription group (one Subscribe stream each), in table order."""
        out: dict[str, list[GnmiPath]] = {}
        for p in self.paths:
            out.setdefault(p.group, []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    def interval(self, path: GnmiPath, requested_s: float | None) -> float:
        """The SAMPLE interval for ``path``: the inventory's ``requested_s`` (or the path's/table's default), never
        under the NOS's floor."""
        value = requested_s if requested_s is not None else (path.interval_s or self.default_interval_s)
        if self.min_interval_s is not None:
            value = max(value, self.min_interval_s)
        return value


def path_key(target: str, origin: str, path: str) -> str:
    """The key a decoded update is stored under: ``[origin:]`` ``[target/]`` path (what ``to_counters`` reads)."""
    key = f"{target}/{path}" if target else path
    return f"{origin}:{key}" if origin else key


# -- OpenConfig-style trees: one update per leaf (EOS, NX-OS, Cumulus) ------------------------------------------------

_WILD_KEY = re.compile(r"\[([^=\]]+)=\*\]")


@functools.lru_cache(maxsize=64)
def _container_regex(origin: str, pattern: str) -> re.Pattern[str]:
    """``a/b[k=*]/c`` -> a regex of the key a concrete path under it is stored with (:func:`path_key`): one group
    per ``*`` key, then the leaf path below the container (optional: a whole container sent as one JSON value)."""
    parts = _WILD_KEY.split(pattern)  # text, key name, text, key name, ..., text
    body = "".join(
        re.escape(part) if i % 2 == 0 else re.escape(f"[{part}=") + r"([^\]]*)\]" for i, part in enumerate(parts)
    )
    head = f"(?:{re.escape(origin)}:)?" if origin else ""  # a switch may or may not echo the origin
    return re.compile(f"^{head}{body}(?:/(.+))?$")


@functools.lru_cache(maxsize=1 << 16)
def _match(regex: re.Pattern[str], key: str) -> tuple[str | None, ...] | None:
    m = regex.match(key)
    return None if m is None else m.groups()


def _flatten(value: Mapping[str, Any], into: dict[str, Any], prefix: str = "") -> None:
    for name, member in value.items():
        leaf = f"{prefix}{name}"
        if isinstance(member, Mapping):
            _flatten(member, into, leaf + "/")
        else:
            into[leaf] = member


def containers(values: Mapping[str, Any], pattern: str, *, origin: str = "") -> dict[tuple[str, ...], dict[str, Any]]:
    """The instances of the container ``pattern`` (keys written ``[name=*]``, in path_text's sorted key order) in
    ``values``: (the ``*`` key values, in order) -> {leaf path below the container -> value}. A leaf sent on its own
    (one update per leaf, as EOS answers, hellt/netdevops.me docs/posts/2020/gnmi-arista.md) and a container sent
    as one JSON object give the same result."""
    regex = _container_regex(origin, pattern)
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for key, value in values.items():
        groups = _match(regex, key)
        if groups is None:
            continue
        keys, leaf = tuple(g or "" for g in groups[:-1]), groups[-1]
        leaves = out.setdefault(keys, {})
        if leaf is not None:
            leaves[leaf] = value
        elif isinstance(value, Mapping):
            _flatten(value, leaves)
    return out


def subscription_of(paths: tuple[GnmiPath, ...], key: str) -> GnmiPath | None:
    """The subscribed path an update's key (:func:`path_key`) falls under (a wildcard key matches any value)."""
    for p in paths:
        if _match(_container_regex(p.origin, path_key(p.target, "", p.path)), key) is not None:
            return p
    return None


def counter(value: Any) -> int | None:
    """A counter leaf as an int: JSON numbers, uint64 as a decimal string (RFC 7951), ``None`` otherwise (never 0)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def leaf_counters(leaves: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, int | None]:
    """Each counter of ``names`` (model field -> leaf) read from a container's ``leaves`` (:func:`counter`: absent
    or not a number is None, never 0)."""
    return {field: counter(leaves.get(leaf)) for field, leaf in names.items()}


def interface_counters(
    values: Mapping[str, Any], path: str, leaves: Mapping[str, tuple[Direction, str]]
) -> SwitchCounters:
    """OpenConfig's per-port counters container at ``path`` (``interfaces/interface[name=*]/state/counters``, EOS
    and Cumulus): each leaf of ``leaves`` (leaf -> direction, counter) the switch sent, and its
    ``carrier-transitions`` as the port's flaps."""
    ifs: list[InterfaceCounter] = []
    link: list[LinkStat] = []
    for (port,), sent in sorted(containers(values, path).items()):
        for leaf, (direction, name) in leaves.items():
            if leaf in sent:
                ifs.append(InterfaceCounter(port, direction, name, counter(sent[leaf])))
        flaps = counter(sent.get("carrier-transitions"))
        if flaps is not None:
            link.append(LinkStat(port, "carrier_transitions", float(flaps)))
    return SwitchCounters(interfaces=tuple(ifs), link=tuple(link))
