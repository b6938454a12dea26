"""The host collectors' kept-file path (layouts cached, every file re-read through kept-open descriptors,
:mod:`fabricd.sources.kept`) gives exactly the exposition of the open-every-file path, on every golden tree and
while the tree is rewritten between scrapes: in place, by rename, with files appearing, vanishing or turning bad.

The layouts' clock is set 10 s ahead so that freshly built trees are past the racy window (a test cannot wait for
real directories to age); each test sleeps past one timestamp tick before it changes the tree.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from capture_host import build_capture_host
from metrics_text import metric_value

from fabricd.collectors.core import Collector, Registry
from fabricd.collectors.host import HostReading, host_collectors
from fabricd.collectors.nic import NicCollector, ReplayEthtoolSource
from fabricd.collectors.nic_config import NicConfigCollector
from fabricd.collectors.rdma import RdmaCollector
from fabricd.sources.kept import Layouts
from fabricd_lab.replay import ReplayHost


def ahead() -> int:
    return time.time_ns() + 10_000_000_000


def frozen() -> float:
    return 0.0


def tick() -> None:
    """Let the file-timestamp clock move on (a kernel tick is at most 10 ms)."""
    time.sleep(0.03)


def layouts_of(collector: Collector) -> Layouts[str, object]:
    if isinstance(collector, NicCollector):
        assert isinstance(collector.source, ReplayEthtoolSource)
        return collector.source.files.layouts  # type: ignore[return-value]
    assert isinstance(collector, RdmaCollector | NicConfigCollector)
    return collector.files.layouts  # type: ignore[return-value]


class Pair:
    """The same root scraped with and without kept files; every scrape must render the same text."""

    def __init__(self, root: Path) -> None:
        # the shipped config interval: on this local file system every write must still show at the next scrape
        self.kept = Registry(host_collectors(root, replay=True, reading=HostReading(clock=ahead)), clock=frozen)
        plain = HostReading(kept_files=False, config_interval=0)
        self.plain = Registry(host_collectors(root, replay=True, reading=plain), clock=frozen)

    def scrape(self) -> str:
        kept, plain = self.kept.exposition(), self.plain.exposition()
        assert kept == plain
        return kept

    def layouts(self) -> dict[str, int]:
        """Layouts per collector that keeps files open (``link`` reads its few files plainly on every scrape)."""
        return {c.name: len(layouts_of(c)) for c in self.kept.collectors if c.name != "link"}


def line(text: str, series: str) -> str | None:
    v = metric_value(text, series)  # tests/metrics_text.py: the one reader; the value as the exposition writes it
    return None if v is None else (str(int(v)) if float(v).is_integer() else repr(float(v)))


@pytest.fixture
def host(tmp_path: Path) -> ReplayHost:
    h = ReplayHost.mlx5(tmp_path, 2, channels=2)
    h.build()
    h.pause("eth0", 3, frames=100, duration_us=5000)
    h.hw_add("mlx5_0", "out_of_sequence", 7)
    h.flush()
    return h


def test_captures_host_same_exposition(tmp_path: Path) -> None:
    pair = Pair(build_capture_host(tmp_path))
    for _ in range(3):
        pair.scrape()
    used = pair.layouts()
    assert used["rdma"] == 6 and used["nic_config"] == 1 and used["nic"] == 10


def test_replay_host_same_exposition_while_driven(host: ReplayHost) -> None:
    pair = Pair(host.root)
    first = pair.scrape()
    assert pair.layouts() == {"nic": 2, "rdma": 2, "nic_config": 2}
    for step in range(1, 4):
        tick()
        host.pause("eth0", 3, frames=10 * step, duration_us=1000)
        host.traffic("eth1", 3, packets=50)
        host.hw_add("mlx5_1", "np_cnp_sent", step)
        host.flush()  # atomic rewrites by rename: the directories' stamps change
        text = pair.scrape()
        assert text != first
    pair.scrape()  # again on the rewritten tree: layouts rebuilt where the tree is not racy


def test_in_place_rewrite_is_read_through_kept_descriptor(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    rdma = pair.kept.collectors[1]
    assert isinstance(rdma, RdmaCollector)
    before = rdma.files.layouts.get("mlx5_0", ahead())
    assert before is not None
    counter = host.root / "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence"
    with open(counter, "w") as f:  # same inode, truncated and rewritten: no directory change
        f.write("12345\n")
    text = pair.scrape()
    assert line(text, 'fabricd_rdma_out_of_sequence_total{device="mlx5_0",port="1"}') == "12345"
    after = rdma.files.layouts.get("mlx5_0", ahead())
    assert after is not None and after[0] is before[0]  # still the same kept descriptors


def test_ethtool_text_rewritten_in_place_is_parsed_again(host: ReplayHost) -> None:
    """A text read again byte for byte is not parsed again; one digit changed in place (same length, same inode,
    no directory change) must still show."""
    pair = Pair(host.root)
    series = 'fabricd_nic_pfc_pause_frames_total{interface="eth0",priority="3",direction="rx"}'
    first = pair.scrape()
    assert pair.scrape() == first
    assert line(first, series) == "100"
    stats = host.root / "ethtool/eth0.stats"
    text = stats.read_bytes()
    assert text.count(b"rx_prio3_pause: 100\n") == 1
    with open(stats, "r+b") as f:
        f.write(text.replace(b"rx_prio3_pause: 100\n", b"rx_prio3_pause: 900\n"))
    assert line(pair.scrape(), series) == "900"
    files = pair.kept.collectors[0]
    assert isinstance(files, NicCollector) and isinstance(files.source, ReplayEthtoolSource)
    assert files.source.files.layouts.get("eth0", ahead()) is not None  # still the kept layout


def test_renamed_file_is_reopened(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    tick()
    counter = host.root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_discards"
    tmp = counter.with_name(".new")
    tmp.write_text("42\n")
    os.replace(tmp, counter)
    text = pair.scrape()
    assert line(text, 'fabricd_rdma_port_discards_total{device="mlx5_0",port="1",direction="tx"}') == "42"


def test_new_counter_file_is_exported_and_removed_one_is_absent(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    tick()
    hw = host.root / "sys/class/infiniband/mlx5_0/ports/1/hw_counters"
    (hw / "rx_new_counter").write_text("9\n")
    (hw / "rp_cnp_handled").unlink()
    text = pair.scrape()
    assert line(text, 'fabricd_rdma_hw_counters_total{device="mlx5_0",port="1",counter="rx_new_counter"}') == "9"
    assert line(text, 'fabricd_rdma_cnp_handled_total{device="mlx5_0",port="1"}') is None  # absent, not 0
    assert line(text, 'fabricd_rdma_cnp_handled_total{device="mlx5_1",port="1"}') is not None


def test_new_ethtool_counter_and_driver_change(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    stats = host.root / "ethtool/eth1.stats"
    with open(stats, "a") as f:  # in place: the text layout changes, the directory does not
        f.write("     rx_prio5_pause: 77\n")
    text = pair.scrape()
    assert line(text, 'fabricd_nic_pfc_pause_frames_total{interface="eth1",priority="5",direction="rx"}') == "77"
    info = host.root / "ethtool/eth1.info"
    info.write_text(info.read_text().replace("mlx5_core", "mlx4_en"))  # in place: another driver's name map
    text = pair.scrape()
    assert 'fabricd_nic_info{interface="eth1",driver="mlx4_en"' in text


def test_non_numeric_and_not_available_values_after_layout(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    base = host.root / "sys/class/infiniband/mlx5_0/ports/1"
    with open(base / "counters/port_xmit_wait", "w") as f:
        f.write("N/A (no PMA)\n")
    text = pair.scrape()
    assert 'fabricd_scrape_collector_success{collector="rdma"} 1' in text
    assert line(text, 'fabricd_rdma_port_transmit_wait_total{device="mlx5_0",port="1"}') is None
    with open(base / "hw_counters/out_of_sequence", "w") as f:
        f.write("garbage\n")
    with open(host.root / "sys/class/net/eth0/ecn/roce_np/enable/3", "w") as f:
        f.write("yes\n")
    with open(host.root / "ethtool/eth0.stats", "a") as f:
        f.write("     rx_prio4_pause: -1\n")  # irregular text: read line by line
    text = pair.scrape()
    assert 'fabricd_scrape_collector_success{collector="rdma"} 0' in text
    assert 'fabricd_scrape_collector_success{collector="nic_config"} 0' in text


def test_device_vanishes_after_layout(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    shutil.rmtree(host.root / "sys/class/infiniband/mlx5_1/ports/1")  # kept descriptors still read the old inodes
    text = pair.scrape()
    assert 'fabricd_rdma_port_info{device="mlx5_1"' not in text  # the port is gone, not served from old inodes
    assert 'fabricd_rdma_cnp_sent_total{device="mlx5_1"' not in text
    assert 'fabricd_rdma_cnp_sent_total{device="mlx5_0"' in text
    shutil.rmtree(host.root / "sys/class/infiniband/mlx5_1")
    (host.root / "ethtool/eth1.stats").unlink()
    text = pair.scrape()
    assert 'device="mlx5_1"' not in text.split("fabricd_nic_roce_tos")[0]
    assert 'fabricd_nic_info{interface="eth1"' not in text
    assert pair.layouts()["rdma"] == 1 and pair.layouts()["nic"] == 1


def test_config_files_appear_and_change(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    tick()
    qos = host.root / "sys/class/net/eth0/qos"
    qos.mkdir()
    (qos / "pfc").write_text("0,0,0,1,0,0,0,0\n")
    (qos / "trust").write_text("dscp\n")
    text = pair.scrape()
    assert line(text, 'fabricd_nic_pfc_enabled{interface="eth0",priority="3"}') == "1"
    assert line(text, 'fabricd_nic_trust_info{interface="eth0",trust="dscp"}') == "1"
    with open(qos / "pfc", "w") as f:
        f.write("0,0,0,1,1,0,0,0\n")
    with open(host.root / "sys/class/net/eth0/mtu", "w") as f:
        f.write("4200\n")
    with open(host.root / "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos", "w") as f:
        f.write("104\n")
    text = pair.scrape()
    assert line(text, 'fabricd_nic_pfc_enabled{interface="eth0",priority="4"}') == "1"
    assert line(text, 'fabricd_nic_mtu_bytes{interface="eth0"}') == "4200"
    assert line(text, 'fabricd_nic_roce_tos{device="mlx5_0",port="1"}') == "104"


def test_counter_reset_counted_the_same_way(host: ReplayHost) -> None:
    pair = Pair(host.root)
    pair.scrape()
    tick()
    host.reset("eth0")
    host.flush()
    text = pair.scrape()
    assert int(line(text, 'fabricd_counters_reset_total{collector="nic"}') or "0") >= 3
    assert int(line(text, 'fabricd_counters_reset_total{collector="rdma"}') or "0") >= 2


def success(text: str, collector: str) -> str | None:
    return line(text, f'fabricd_scrape_collector_success{{collector="{collector}"}}')


def test_vanishes_between_discovery_and_read_with_layouts(host: ReplayHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """As tests/unit/test_exporter_resilience.py, but after the layouts were built: the device and the ethtool file
    are removed right after discovery, while their descriptors are still open."""
    import fabricd.collectors.nic as nic_mod
    import fabricd.collectors.rdma as rdma_mod

    registry = Registry(host_collectors(host.root, replay=True, reading=HostReading(clock=ahead, config_interval=0)))
    registry.exposition()
    assert all(len(layouts_of(c)) == 2 for c in registry.collectors if c.name != "link")
    tick()
    real_list = rdma_mod.list_rdma_devices
    real_interfaces = nic_mod.ReplayEthtoolSource.interfaces

    def list_then_remove(root: str) -> list[str]:
        names = real_list(root)
        shutil.rmtree(Path(root) / "sys/class/infiniband/mlx5_1")
        return names

    def interfaces_then_remove(self: ReplayEthtoolSource) -> list[str]:
        names = real_interfaces(self)
        os.unlink(Path(self.root) / "ethtool/eth1.stats")
        return names

    monkeypatch.setattr(rdma_mod, "list_rdma_devices", list_then_remove)
    monkeypatch.setattr(nic_mod.ReplayEthtoolSource, "interfaces", interfaces_then_remove)
    text = registry.exposition()
    assert success(text, "rdma") == "0" and success(text, "nic") == "0"
    assert 'fabricd_rdma_port_info{device="mlx5_1"' not in text
    assert 'fabricd_nic_info{interface="eth1"' not in text
    assert line(text, 'fabricd_rdma_out_of_sequence_total{device="mlx5_0",port="1"}') == "7"
