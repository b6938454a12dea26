"""Shards of the switches by Prometheus' hashmod (fabricd/inventory/shard.py, the CLI's --shard options).

The reference numbers are Prometheus' own test vectors (prometheus/prometheus model/relabel/relabel_test.go: the
value ``baz`` hashes to 976 and ``foo\\nbar`` to 734, modulus 1000); tests/integration/test_shards.py has a running
Prometheus relabel 200 switch names and compares."""

from __future__ import annotations

import pytest

from fabricd.cli.common import render_error
from fabricd.cli.shard_opts import resolve_shard
from fabricd.errors import UsageError
from fabricd.inventory.shard import Shard, hashmod, parse_shard, shard_from_hostname

NAMES = [f"leaf{i:03d}" for i in range(200)]


@pytest.mark.parametrize(("value", "modulus", "expected"), [("baz", 1000, 976), ("foo\nbar", 1000, 734)])
def test_hashmod_matches_prometheus_test_vectors(value: str, modulus: int, expected: int) -> None:
    assert hashmod(value, modulus) == expected


def test_hashmod_uses_the_low_64_bits_big_endian() -> None:
    # md5("baz") = 73feffa4b7f6bb68e44cf984c85f6e88: the last 8 bytes, big-endian, mod 2**32 is 0xc85f6e88
    assert hashmod("baz", 2**32) == 0xC85F6E88
    assert hashmod("baz", 2**64 - 1) != hashmod("baz", 2**63)  # all 64 bits take part


def test_shards_partition_the_switches() -> None:
    for n in (1, 2, 3, 7):
        parts = [Shard(k, n).select(NAMES) for k in range(n)]
        assert sorted(n for p in parts for n in p) == NAMES
        assert sum(len(p) for p in parts) == len(NAMES)
    two = [Shard(k, 2).select(NAMES) for k in range(2)]
    assert min(len(p) for p in two) > 70  # md5 spreads 200 names roughly evenly


def test_adding_or_removing_a_switch_moves_no_other() -> None:
    before = {n: hashmod(n, 3) for n in NAMES}
    after = {n: hashmod(n, 3) for n in [*NAMES, "spine-new"]}
    assert {n for n in after if before.get(n) != after[n]} == {"spine-new"}
    fewer = {n: hashmod(n, 3) for n in NAMES[1:]}
    assert all(fewer[n] == before[n] for n in fewer)


def test_parse_shard() -> None:
    assert parse_shard("1/2") == Shard(1, 2)
    assert parse_shard(" 0 / 1 ") == Shard(0, 1)
    for bad in ("2/2", "1", "a/b", "-1/2", "0/0", "1/2/3"):
        with pytest.raises(UsageError) as err:
            parse_shard(bad)
        assert err.value.option == "shard" and render_error(err.value).startswith(f"--shard {bad!r}: "), bad


def test_shard_from_statefulset_hostname() -> None:
    assert shard_from_hostname(3, "fabricd-switches-2") == Shard(2, 3)
    assert shard_from_hostname(2, "fabricd-switches-0") == Shard(0, 2)
    with pytest.raises(UsageError, match="does not end in -<ordinal>"):
        shard_from_hostname(2, "fabricd-switches")
    with pytest.raises(UsageError, match="ordinal 3, not below 2") as err:
        shard_from_hostname(2, "fabricd-switches-3")
    assert render_error(err.value).startswith("--shard-from-hostname 2: hostname 'fabricd-switches-3' is ordinal 3")


def test_resolve_shard_options() -> None:
    assert resolve_shard(None, None) is None
    assert resolve_shard("0/4", None) == Shard(0, 4)
    assert resolve_shard(None, 4, "sw-exporter-3") == Shard(3, 4)
    with pytest.raises(UsageError, match="both given"):
        resolve_shard("0/2", 2, "x-0")
