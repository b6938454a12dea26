"""The ``nic_config`` collector reads the NIC configuration files every ``interval_s`` seconds and exports the values
of the last clean read in between; it reads again at once when a file under them is written (inotify, on a local file
system such as this replay root's), when an interface or RDMA device appears or goes, and after a read that had a
problem. Runs on real replay trees; the monotonic clock is a counter the test moves. ``notify=False`` makes the
collector behave as on sysfs, where inotify sees no driver-side change and only the interval counts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from metrics_text import metric_value

from fabricd.collectors.core import Registry
from fabricd.collectors.host import host_collectors
from fabricd.collectors.nic_config import NicConfigCollector
from fabricd_lab.replay import ReplayHost

CNP_DSCP = 'fabricd_nic_dcqcn_parameter{interface="eth0",point="np",name="cnp_dscp"}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def success(text: str) -> float | None:
    return metric_value(text, 'fabricd_scrape_collector_success{collector="nic_config"}')


@pytest.fixture
def host(tmp_path: Path) -> ReplayHost:
    h = ReplayHost.mlx5(tmp_path, 2, channels=1)
    h.build()
    return h


def registry(host: ReplayHost, clock: Clock, interval_s: float, notify: bool | None = False) -> Registry:
    return Registry([NicConfigCollector(host.root, interval_s=interval_s, monotonic=clock, notify=notify)])


class Counting(NicConfigCollector):
    reads = 0

    def _read(self, *args: Any) -> None:
        self.reads += 1
        super()._read(*args)


def cnp_dscp(host: ReplayHost) -> Path:
    return Path(host.root, "sys/class/net/eth0/ecn/roce_np/cnp_dscp")


def test_values_are_held_for_the_interval_then_read_again(host: ReplayHost) -> None:
    clock = Clock()
    reg = registry(host, clock, 60)
    first = reg.exposition()
    before = metric_value(first, CNP_DSCP)
    assert before is not None and before != "10"
    cnp_dscp(host).write_text("10\n")
    clock.now += 59.9
    held = reg.exposition()
    assert metric_value(held, CNP_DSCP) == before
    assert success(held) == 1
    clock.now += 0.1
    assert metric_value(reg.exposition(), CNP_DSCP) == 10


def test_interval_zero_reads_every_scrape(host: ReplayHost) -> None:
    reg = registry(host, Clock(), 0)
    reg.exposition()
    cnp_dscp(host).write_text("12\n")
    assert metric_value(reg.exposition(), CNP_DSCP) == 12


def test_a_new_or_removed_interface_is_read_at_once(host: ReplayHost, tmp_path: Path) -> None:
    clock = Clock()
    reg = registry(host, clock, 60)
    assert metric_value(reg.exposition(), 'fabricd_nic_mtu_bytes{interface="eth1"}') is not None
    shutil.rmtree(Path(host.root, "sys/class/net/eth1"))
    shutil.rmtree(Path(host.root, "sys/class/infiniband/mlx5_1"))
    text = reg.exposition()
    assert metric_value(text, 'fabricd_nic_mtu_bytes{interface="eth1"}') is None
    assert metric_value(text, 'fabricd_nic_roce_tos{device="mlx5_1",port="1"}') is None
    assert metric_value(text, 'fabricd_nic_mtu_bytes{interface="eth0"}') is not None


def test_a_read_with_a_problem_is_not_held(host: ReplayHost) -> None:
    clock = Clock()
    reg = registry(host, clock, 60)
    cnp_dscp(host).write_text("garbage\n")
    assert success(reg.exposition()) == 0
    cnp_dscp(host).write_text("24\n")
    text = reg.exposition()  # no time has passed: read again because the last read was not clean
    assert success(text) == 1
    assert metric_value(text, CNP_DSCP) == 24


def test_host_collectors_default_holds_and_negative_interval_is_refused(host: ReplayHost) -> None:
    (config,) = [c for c in host_collectors(host.root, replay=True) if isinstance(c, NicConfigCollector)]
    assert config.interval_s == 60
    with pytest.raises(ValueError, match="0 or more seconds, got -1"):
        NicConfigCollector(host.root, interval_s=-1)


def test_writes_on_a_local_file_system_are_read_at_once_and_nothing_else_is_reread(host: ReplayHost) -> None:
    clock = Clock()
    collector = Counting(host.root, interval_s=60, monotonic=clock)
    assert collector.notify  # tmp_path is on a local file system
    reg = Registry([collector], clock=lambda: 0.0)  # durations fixed: expositions compare whole
    first = reg.exposition()
    for _ in range(3):
        clock.now += 1
        assert reg.exposition() == first
    assert collector.reads == 1
    cnp_dscp(host).write_text("10\n")  # in place
    assert metric_value(reg.exposition(), CNP_DSCP) == 10
    tmp = cnp_dscp(host).with_name(".new")
    tmp.write_text("11\n")
    os.replace(tmp, cnp_dscp(host))  # replaced by rename
    assert metric_value(reg.exposition(), CNP_DSCP) == 11
    enable = Path(host.root, "sys/class/net/eth1/ecn/roce_rp/enable/5")
    enable.write_text("1\n")  # a file that changes another interface
    assert metric_value(reg.exposition(), 'fabricd_nic_ecn_enabled{interface="eth1",point="rp",priority="5"}') == 1
    tos = Path(host.root, "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos")
    tos.write_text("104\n")  # configfs (RDMA-CM ToS)
    assert metric_value(reg.exposition(), 'fabricd_nic_roce_tos{device="mlx5_1",port="1"}') == 104
    reads = collector.reads
    assert reads == 5
    clock.now += 1
    reg.exposition()
    assert collector.reads == reads  # nothing written since: held


def test_a_replay_root_without_inotify_is_read_every_scrape_and_a_live_root_is_held(host: ReplayHost) -> None:
    """A replay root where inotify cannot see writes (NFS, FUSE) keeps the replay contract by reading every scrape;
    a live root (sysfs, no events for driver-side changes) is held for the interval."""
    clock = Clock()
    replay = Registry([NicConfigCollector(host.root, interval_s=60, monotonic=clock, notify=False, replay=True)])
    live = Registry([NicConfigCollector(host.root, interval_s=60, monotonic=clock, notify=False, replay=False)])
    replay.exposition()
    live.exposition()
    cnp_dscp(host).write_text("14\n")
    assert metric_value(replay.exposition(), CNP_DSCP) == 14
    assert metric_value(live.exposition(), CNP_DSCP) != "14"
    (config,) = [c for c in host_collectors(host.root, replay=True) if isinstance(c, NicConfigCollector)]
    assert config.replay and config.notify


def test_configfs_appearing_later_on_a_replay_root_is_read_at_once(tmp_path: Path) -> None:
    """A root without RDMA-CM configfs at first: the nearest existing parent is watched, so the ToS appears at the
    next scrape rather than after the interval."""
    host = ReplayHost.mlx5(tmp_path, 1)
    host.build()
    cm = Path(host.root, "sys/kernel/config")
    saved = tmp_path.parent / f"{tmp_path.name}-configfs"
    shutil.move(cm, saved)
    clock = Clock()
    reg = Registry([NicConfigCollector(host.root, interval_s=60, monotonic=clock)])
    series = 'fabricd_nic_roce_tos{device="mlx5_0",port="1"}'
    assert metric_value(reg.exposition(), series) is None
    shutil.move(saved, cm)
    clock.now += 1
    assert metric_value(reg.exposition(), series) is not None


def test_serve_passes_its_config_interval_to_the_host_collectors(tmp_path: Path, lab_inventory: Path) -> None:
    from fabricd.inventory import load_inventory
    from fabricd.service.serve import ServeOptions, Service
    from fabricd.service.wiring import RootSpec
    from fabricd_lab.replay import ReplayNic

    ReplayHost(tmp_path, [ReplayNic("ens1f0np0", "mlx5_0", channels=0)]).build()
    options = ServeOptions(
        roots=[RootSpec.parse(f"gpu1={tmp_path}")], switches=False, drift=False, config_interval_s=5.0
    )
    service = Service(load_inventory(lab_inventory), options)
    (config,) = [c for c in service.registry.collectors if isinstance(c, NicConfigCollector)]
    assert config.interval_s == 5.0 and config.replay and config.notify
