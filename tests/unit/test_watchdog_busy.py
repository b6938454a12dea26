"""Busy ports on a replay root with inotify: a statistics file replaced at every poll (a port with traffic) is
stat-ed, not watched again at every poll, and gets its watch back once it stops changing
(``fabricd.watchdog.changes.ChangeTracker.rewatch``; the CPU figures are in docs/PERFORMANCE.md, watchdog).

Real parts: a replay tree on disk, the kernel's inotify, the host source and the detector."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.sources import notify
from fabricd.watchdog.detector import Detector
from fabricd.watchdog.params import WatchdogParams
from fabricd.watchdog.sources import HostSource
from fabricd_lab.replay import ReplayHost, ReplayNic


def test_a_port_with_traffic_is_stat_ed_and_watched_again_when_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not notify.notifies(str(tmp_path)):
        pytest.skip(f"{tmp_path} is not on a local file system with inotify")
    nics = [ReplayNic("eth0", "mlx5_0", channels=0), ReplayNic("eth1", "mlx5_1", channels=0)]
    host = ReplayHost(tmp_path, nics)
    host.build()
    src = HostSource(tmp_path, "h")
    det = Detector(WatchdogParams(0.2, 0.2, 0.05))
    adds: list[str] = []
    real_add = notify.Watch.add

    def add(self: notify.Watch, key: str, path: str) -> bool:
        adds.append(key)
        return real_add(self, key, path)

    monkeypatch.setattr(notify.Watch, "add", add)

    def poll(t: float) -> None:
        for s in src.poll(t, det.settled).pause:
            det.observe(s, s.t)

    def traffic_on_eth0() -> None:
        host.traffic("eth0", 3, direction="tx", packets=250)
        host.flush(rdma=False)

    poll(1.0)
    files = src._changes._files
    assert files is not None
    for k in range(2, 8):  # eth0's file is replaced before every poll; eth1's never
        traffic_on_eth0()
        poll(k * 0.05 + 1.0)
    # eth0 turned busy after two polls in a row that found new bytes: since then no watch was set on it
    assert adds.count("eth0") <= 3
    assert not files.watching("eth0")
    assert files.watching("eth1")
    state = src.state_of("eth0")
    assert state is not None and state.vals is not None
    assert state.vals[state.files.where[b"tx_prio3_packets"]] == host.get("eth0", "tx_prio3_packets")

    before = len(adds)
    poll(1.5)  # unchanged: it cools down ...
    poll(1.55)  # ... and is watched again, and stays so while it does not change
    poll(1.6)
    assert files.watching("eth0")
    assert adds[before:] == ["eth0"]
    traffic_on_eth0()  # a single change is read through its watch, as before
    poll(1.65)
    assert state.vals[state.files.where[b"tx_prio3_packets"]] == host.get("eth0", "tx_prio3_packets")
