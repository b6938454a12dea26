"""The watchdog on a live host reads ethtool statistics through ``LiveEthtoolSource.values`` (a name -> value lookup
over the GSTATS array) instead of a dict built per read. This checks that HostSource produces the same samples from
that lookup as from the dict, while a replay writer drives PFC pause and traffic on mlx5-like NICs. The GSTATS ioctl
cannot produce mlx5 counters on this machine (veth has none), so a provider parsing the replay tree's ethtool text
stands in for it here; the ioctl path itself is in tests/integration/test_export_live_netns.py."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fabricd.readers.ethtool import _STAT_LINE, EthtoolInfo, NamesLayout, StatsValues, names_layout
from fabricd.watchdog.sources import HostSource, RawStats
from fabricd_lab.replay import ReplayHost


def providers(root: Path) -> tuple[RawStats, RawStats]:
    layouts: dict[str, NamesLayout] = {}

    def pairs(iface: str) -> list[tuple[str, str]]:
        return _STAT_LINE.findall((root / "ethtool" / f"{iface}.stats").read_text())

    def as_dict(iface: str) -> Mapping[str, int] | None:
        return {name: int(v) for name, v in pairs(iface)} or None

    def as_values(iface: str) -> Mapping[str, int] | None:
        got = pairs(iface)
        names = [n for n, _ in got]
        layout = layouts.get(iface)
        if layout is None or layout.names != names:
            layout = layouts[iface] = names_layout(names, EthtoolInfo(driver="mlx5_core"))
        return StatsValues(layout.index, [int(v) for _, v in got]) or None

    return as_dict, as_values


def test_same_samples_from_the_name_lookup_as_from_a_dict(tmp_path: Path) -> None:
    host = ReplayHost.mlx5(tmp_path, 2, channels=2)
    host.build()
    as_dict, as_values = providers(tmp_path)
    old = HostSource(tmp_path, "h", priorities=[3], raw_stats=as_dict)
    new = HostSource(tmp_path, "h", priorities=[3], raw_stats=as_values)
    seen = 0
    for step in range(6):
        host.pause("eth0", 3, frames=10 * step, duration_us=2000 * step)
        host.traffic("eth1", 3, packets=100 * step)
        host.flush()
        t = float(step)
        a, b = old.poll(t), new.poll(t)
        assert a.pause == b.pause and a.drops == b.drops and a.problems == b.problems == []
        seen += len(a.pause)
    assert seen >= 12  # rx and tx on priority 3 of both NICs, every poll
