"""``fabricd export host --root DIR --once`` on a replay root built from the real captures prints every required
metric name, with values that match the captures (read here straight from the capture files, not through fabricd)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from capture_host import ETHTOOL_CAPTURES, READERS, build_capture_host, strip_source
from metrics_text import Metrics

FABRICD = str(Path(sys.executable).parent / "fabricd")

REQUIRED = [
    "fabricd_nic_pfc_pause_frames_total",
    "fabricd_nic_pfc_pause_duration_seconds_total",
    "fabricd_nic_priority_bytes_total",
    "fabricd_nic_priority_packets_total",
    "fabricd_nic_discards_total",
    "fabricd_nic_pause_storm_events_total",
    "fabricd_nic_info",
    "fabricd_rdma_port_data_bytes_total",
    "fabricd_rdma_port_packets_total",
    "fabricd_rdma_cnp_sent_total",
    "fabricd_rdma_cnp_handled_total",
    "fabricd_rdma_cnp_ignored_total",
    "fabricd_rdma_ecn_marked_packets_total",
    "fabricd_rdma_out_of_sequence_total",
    "fabricd_rdma_out_of_buffer_total",
    "fabricd_rdma_packet_seq_errors_total",
    "fabricd_rdma_local_ack_timeout_errors_total",
    "fabricd_rdma_implied_nak_seq_errors_total",
    "fabricd_rdma_retransmits_total",
    "fabricd_rdma_port_state",
    "fabricd_rdma_port_info",
    "fabricd_nic_ecn_enabled",
    "fabricd_nic_dcqcn_parameter",
    "fabricd_nic_roce_tos",
    "fabricd_nic_pfc_enabled",
    "fabricd_scrape_collector_success",
    "fabricd_scrape_collector_duration_seconds",
]


def exposition(root: Path, *args: str) -> str:
    res = subprocess.run(
        [FABRICD, "export", "host", "--root", str(root), "--once", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


def ethtool_value(interface: str, name: str) -> int:
    text = strip_source((READERS / "ethtool" / ETHTOOL_CAPTURES[interface][0]).read_text())
    m = re.search(rf"^\s*{re.escape(name)}:\s+(\d+)\s*$", text, re.MULTILINE)
    assert m, name
    return int(m.group(1))


def sysfs_value(rel: str) -> int:
    return int((READERS / "sysfs" / rel).read_text().strip())


@pytest.fixture(scope="module")
def capture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_capture_host(tmp_path_factory.mktemp("captures"))


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_required_names_and_values(capture_root: Path) -> None:
    text = exposition(capture_root)
    names = {line.split(" ")[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    missing = [n for n in REQUIRED if n not in names]
    assert not missing, f"missing metric families: {missing}"
    s = Metrics(text)
    # mlx4_en priority-3 PFC (ConnectX-3 capture)
    assert s['fabricd_nic_pfc_pause_frames_total{interface="eth1",priority="3",direction="rx"}'] == ethtool_value(
        "eth1", "rx_pause_prio_3"
    )
    assert s[
        'fabricd_nic_pfc_pause_duration_seconds_total{interface="eth1",priority="3",direction="tx"}'
    ] == pytest.approx(ethtool_value("eth1", "tx_pause_duration_prio_3") / 1e6)
    # mlx5 per-priority traffic and bnxt ring discards
    assert s['fabricd_nic_priority_bytes_total{interface="eth0",priority="0",direction="rx"}'] == ethtool_value(
        "eth0", "rx_prio0_bytes"
    )
    assert s['fabricd_nic_discards_total{interface="eth2",reason="rx_out_of_buffer"}'] == ethtool_value(
        "eth2", "rx_total_ring_discards"
    )
    assert s['fabricd_nic_pause_storm_events_total{interface="eth5",level="warning"}'] == ethtool_value(
        "eth5", "tx_pause_storm_warning_events"
    )
    assert s['fabricd_nic_info{interface="eth0",driver="mlx5_core",firmware="",version=""}'] == 1
    # RDMA: 4-octet units to bytes, hw_counters of a RoCE LAG device
    assert s['fabricd_rdma_port_data_bytes_total{device="mlx5_0",port="1",direction="rx"}'] == 4 * sysfs_value(
        "procfs-testdata/mlx5_0/ports/1/counters/port_rcv_data"
    )
    hw = "mlx5_bond_0-show_counters-notes/mlx5_bond_0/ports/1/hw_counters/"
    assert s['fabricd_rdma_cnp_sent_total{device="mlx5_bond_0",port="1"}'] == sysfs_value(hw + "np_cnp_sent")
    assert s['fabricd_rdma_ecn_marked_packets_total{device="mlx5_bond_0",port="1"}'] == sysfs_value(
        hw + "np_ecn_marked_roce_packets"
    )
    assert s['fabricd_rdma_out_of_sequence_total{device="mlx5_bond_0",port="1"}'] == sysfs_value(hw + "out_of_sequence")
    assert s['fabricd_rdma_retransmits_total{device="mlx5_0",port="1"}'] == sysfs_value(
        "procfs-testdata/mlx5_0/ports/1/hw_counters/roce_adp_retrans"
    )
    assert s['fabricd_rdma_port_state{device="mlx5_0",port="1"}'] == 4
    # no PMA on i40iw: its counters are absent, not 0
    assert not any(k.startswith('fabricd_rdma_port_data_bytes_total{device="i40iw0"') for k in s)
    # config gauges
    assert s['fabricd_nic_ecn_enabled{interface="eth0",point="rp",priority="7"}'] == 0
    assert s['fabricd_nic_roce_tos{device="mlx5_0",port="1"}'] == 106
    assert s['fabricd_nic_pfc_enabled{interface="eth0",priority="3"}'] == 1
    assert all(v == 1 for k, v in s.items() if k.startswith("fabricd_scrape_collector_success"))


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_json_output_and_filters(capture_root: Path) -> None:
    rows = json.loads(exposition(capture_root, "--output", "json", "--collectors", "rdma", "--include", "^mlx5"))
    assert rows and all(r["name"].startswith(("fabricd_rdma_", "fabricd_scrape_", "fabricd_counters_")) for r in rows)
    devices = {r["labels"].get("device") for r in rows if r["name"].startswith("fabricd_rdma_")}
    assert devices == {"mlx5_0", "mlx5_bond_0"}


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_bad_input_is_located_not_a_traceback(tmp_path: Path) -> None:
    res = subprocess.run(
        [FABRICD, "export", "host", "--root", str(tmp_path / "nope"), "--once"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2 and "not a directory" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run(
        [FABRICD, "export", "host", "--collectors", "nic,bogus", "--once"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2 and "bogus" in res.stderr
