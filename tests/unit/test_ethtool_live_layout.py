"""The live ETHTOOL_GSTATS fast path (:func:`fabricd.readers.ethtool.names_layout`) selects the same counters, in the
same order and with the same values, as :func:`normalise` of the ``{name: value}`` dict the slow path builds, on every
real ``ethtool -S`` capture (tests/golden/readers/ethtool, from ../shared/fixtures) and on the replay mlx5 set (753
names), including a repeated name;
:class:`StatsValues` reads like that dict. Pure functions over name lists: the ioctl itself is tested in
tests/integration/test_export_live_netns.py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fabricd.readers.ethtool import _STAT_LINE, EthtoolInfo, StatsValues, names_layout, normalise
from fabricd_lab.replay import ReplayHost

CAPTURES = sorted((Path(__file__).resolve().parent.parent / "golden" / "readers" / "ethtool").glob("*.txt"))


def name_lists(tmp_path: Path) -> list[tuple[str, str, list[str]]]:
    out = []
    for path in CAPTURES:
        driver = path.name.split("-", 1)[0]
        out.append((path.name, driver, [n for n, _ in _STAT_LINE.findall(path.read_text())]))
    host = ReplayHost.mlx5(tmp_path, 1)
    host.build()
    text = (tmp_path / "ethtool" / "eth0.stats").read_text()
    out.append(("replay mlx5", "mlx5_core", [n for n, _ in _STAT_LINE.findall(text)]))
    return out


def slow(names: list[str], values: list[int], info: EthtoolInfo) -> list[tuple[object, str, int]]:
    raw = {name: values[i] for i, name in enumerate(names)}  # what the live source built before
    return [(c.key, c.source, c.value) for c in normalise("eth0", raw, info.driver, info=info).counters]


def fast(names: list[str], values: list[int], info: EthtoolInfo) -> list[tuple[object, str, int]]:
    layout = names_layout(names, info)
    return [(key, name, values[p]) for (key, name), p in zip(layout.selection, layout.positions, strict=True)]


def test_captures_are_there() -> None:
    assert len(CAPTURES) >= 4, CAPTURES


def test_same_counters_as_normalise_on_every_capture(tmp_path: Path) -> None:
    rng = random.Random(7)
    checked = 0
    for label, driver, names in name_lists(tmp_path):
        info = EthtoolInfo(driver=driver)
        values = [rng.randrange(2**40) for _ in names]
        got = fast(names, values, info)
        assert got == slow(names, values, info), label
        checked += len(got)
    assert checked > 60  # pause, priority and discard counters were selected, not nothing


def test_repeated_name_takes_its_last_value_at_its_first_place(tmp_path: Path) -> None:
    (_, driver, names) = name_lists(tmp_path)[-1]
    info = EthtoolInfo(driver=driver)
    first = fast(names, list(range(len(names))), info)[0]
    repeated = [*names, first[1]]  # the first selected name again, last
    values = list(range(len(repeated)))
    got = fast(repeated, values, info)
    assert got == slow(repeated, values, info)
    assert got[0] == (first[0], first[1], len(repeated) - 1)


@pytest.mark.parametrize("name", ["rx_prio3_pause", "nosuch"])
def test_stats_values_reads_like_the_dict(tmp_path: Path, name: str) -> None:
    (_, driver, names) = name_lists(tmp_path)[-1]
    values = list(range(100, 100 + len(names)))
    layout = names_layout(names, EthtoolInfo(driver=driver))
    mapping = StatsValues(layout.index, values)
    expected = {n: values[i] for i, n in enumerate(names)}
    assert dict(mapping) == expected and len(mapping) == len(expected)
    assert mapping.get(name) == expected.get(name)
    assert (name in mapping) == (name in expected)
