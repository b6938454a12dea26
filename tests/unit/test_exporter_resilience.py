"""Resilience of the host exporter on a live-rewritten replay tree: a device that vanishes between discovery and
read, an unreadable file, a non-numeric value and a counter reset. In each case the scrape succeeds, the broken
collector (only) reports success 0, what could be read is still exported, and no traceback is printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from metrics_text import Metrics, metric_value

import fabricd.collectors.nic as nic_mod
import fabricd.collectors.rdma as rdma_mod
from fabricd.collectors.core import Registry
from fabricd.collectors.host import host_collectors
from fabricd_lab.replay import ReplayHost


def _written(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def success(text: str) -> dict[str, str]:
    """``fabricd_scrape_collector_success`` by collector, as the exposition writes it (``"1"``/``"0"``)."""
    return {c: _written(v) for c, v in Metrics(text).by_label("fabricd_scrape_collector_success", "collector").items()}


def value(text: str, series: str) -> str | None:
    """One series' value as the exposition writes it (tests/metrics_text.py reads it), None when absent."""
    v = metric_value(text, series)
    return None if v is None else _written(v)


@pytest.fixture
def host(tmp_path: Path) -> ReplayHost:
    h = ReplayHost.mlx5(tmp_path, 2, channels=1)
    h.build()
    h.pause("eth0", 3, frames=100, duration_us=5000)
    h.hw_add("mlx5_0", "out_of_sequence", 7)
    h.flush()
    return h


def registry(host: ReplayHost) -> Registry:
    return Registry(host_collectors(host.root, replay=True))


def test_healthy_tree_all_collectors_succeed(host: ReplayHost) -> None:
    text = registry(host).exposition()
    assert success(text) == {"nic": "1", "rdma": "1", "nic_config": "1", "link": "1"}
    assert (
        value(text, 'fabricd_nic_pfc_pause_duration_seconds_total{interface="eth0",priority="3",direction="rx"}')
        == "0.005"
    )


def test_rdma_device_vanishes_between_discovery_and_read(host: ReplayHost, monkeypatch: pytest.MonkeyPatch) -> None:
    real_list = rdma_mod.list_rdma_devices

    def list_then_remove(root: str) -> list[str]:
        names = real_list(root)
        shutil.rmtree(Path(root) / "sys/class/infiniband/mlx5_1")  # hot-unplug right after discovery
        return names

    monkeypatch.setattr(rdma_mod, "list_rdma_devices", list_then_remove)
    text = registry(host).exposition()
    assert success(text) == {"nic": "1", "rdma": "0", "nic_config": "1", "link": "1"}
    assert value(text, 'fabricd_rdma_out_of_sequence_total{device="mlx5_0",port="1"}') == "7"
    assert 'device="mlx5_1"' not in text.split("fabricd_nic_roce_tos")[0]


def test_ethtool_file_vanishes_between_discovery_and_read(host: ReplayHost, monkeypatch: pytest.MonkeyPatch) -> None:
    real = nic_mod.ReplayEthtoolSource.interfaces

    def interfaces_then_remove(self: nic_mod.ReplayEthtoolSource) -> list[str]:
        names = real(self)
        os.unlink(Path(self.root) / "ethtool/eth1.stats")
        return names

    monkeypatch.setattr(nic_mod.ReplayEthtoolSource, "interfaces", interfaces_then_remove)
    text = registry(host).exposition()
    assert success(text)["nic"] == "0"
    assert 'interface="eth0"' in text and 'fabricd_nic_info{interface="eth1"' not in text


def test_unreadable_counter_file(host: ReplayHost) -> None:
    """A counter that cannot be read (a symlink loop: ELOOP even for root, who ignores file modes)."""
    path = host.root / "sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent"
    path.unlink()
    path.symlink_to(path)
    text = registry(host).exposition()
    assert success(text) == {"nic": "1", "rdma": "0", "nic_config": "1", "link": "1"}
    assert value(text, 'fabricd_rdma_cnp_sent_total{device="mlx5_0",port="1"}') is None  # absent, not 0
    assert value(text, 'fabricd_rdma_out_of_sequence_total{device="mlx5_0",port="1"}') == "7"


def test_non_numeric_value(host: ReplayHost) -> None:
    (host.root / "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence").write_text("garbage\n")
    (host.root / "sys/class/net/eth0/ecn/roce_np/enable/3").write_text("yes\n")
    text = registry(host).exposition()
    assert success(text) == {"nic": "1", "rdma": "0", "nic_config": "0", "link": "1"}
    assert value(text, 'fabricd_rdma_out_of_sequence_total{device="mlx5_0",port="1"}') is None
    assert value(text, 'fabricd_nic_ecn_enabled{interface="eth0",point="np",priority="3"}') is None
    assert value(text, 'fabricd_nic_ecn_enabled{interface="eth0",point="rp",priority="3"}') == "1"


def test_not_available_is_absent_not_a_failure(host: ReplayHost) -> None:
    """``N/A (no PMA)`` (i40iw, rxe) means the device has no such counter: skipped, and success stays 1."""
    (host.root / "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait").write_text("N/A (no PMA)\n")
    text = registry(host).exposition()
    assert success(text)["rdma"] == "1"
    assert value(text, 'fabricd_rdma_port_transmit_wait_total{device="mlx5_0",port="1"}') is None
    assert value(text, 'fabricd_rdma_port_transmit_wait_total{device="mlx5_1",port="1"}') == "0"


def test_counter_reset_is_passed_through_and_counted(host: ReplayHost) -> None:
    reg = registry(host)
    first = reg.exposition()
    assert value(first, 'fabricd_nic_pfc_pause_frames_total{interface="eth0",priority="3",direction="rx"}') == "100"
    host.reset("eth0")  # driver reload: every counter of eth0 and mlx5_0 back to 0
    host.flush()
    second = reg.exposition()
    assert value(second, 'fabricd_nic_pfc_pause_frames_total{interface="eth0",priority="3",direction="rx"}') == "0"
    assert success(second) == {"nic": "1", "rdma": "1", "nic_config": "1", "link": "1"}
    nic_resets = int(value(second, 'fabricd_counters_reset_total{collector="nic"}') or "0")
    rdma_resets = int(value(second, 'fabricd_counters_reset_total{collector="rdma"}') or "0")
    assert nic_resets >= 3  # pause frames, pause duration, priority/phy traffic counters went back
    assert rdma_resets >= 2  # out_of_sequence and the data/packet counters
    third = reg.exposition()
    assert value(third, 'fabricd_counters_reset_total{collector="nic"}') == str(nic_resets)  # no double count


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_cli_once_on_broken_tree_prints_no_traceback(host: ReplayHost) -> None:
    (host.root / "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence").write_text("garbage\n")
    shutil.rmtree(host.root / "sys/class/infiniband/mlx5_1/ports/1/hw_counters")
    fabricd = str(Path(sys.executable).parent / "fabricd")
    res = subprocess.run(
        [fabricd, "export", "host", "--root", str(host.root), "--once"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    assert 'fabricd_scrape_collector_success{collector="rdma"} 0' in res.stdout
    assert "not a number" in res.stderr  # the log says what and where
