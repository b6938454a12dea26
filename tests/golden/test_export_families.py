"""``fabricd export host --once`` on the fake tree of each NIC family (fabricd_lab.fake_host: sysfs from the
captures, each family's real ``ethtool -S`` capture, the family's hw_counters names): every family's counters come
out under the same normalised metric names, per-priority ones with a ``priority`` label, and nothing family-specific
leaks into a metric name.

What each capture holds differs (the mlx5 capture is from a host without PFC, so it has per-priority bytes and
packets but no per-priority pause counters: mlx5 prints those only for PFC-enabled priorities); the test checks
each family for the counters its capture has, and that shared meanings share one name.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from metrics_text import Metrics

from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd_lab.fake_host import build_fake_host, fake_nics_for, write_ethtool

FABRICD = str(Path(sys.executable).parent / "fabricd")
MIXED = Path(__file__).resolve().parents[2] / "inventory" / "examples" / "mixed-nics.yml"

# host of the mixed example -> the per-priority metrics its family's capture must yield (all 8 priorities)
PER_PRIORITY = {
    "gpu1": {"fabricd_nic_priority_bytes_total", "fabricd_nic_priority_packets_total"},  # mlx5
    "stor1": {"fabricd_nic_pfc_pause_frames_total", "fabricd_nic_pfc_resume_frames_total"},  # ice
    "gpu2": {
        "fabricd_nic_pfc_pause_frames_total",
        "fabricd_nic_pfc_pause_duration_seconds_total",
        "fabricd_nic_pfc_pause_transitions_total",
        "fabricd_nic_priority_bytes_total",
        "fabricd_nic_priority_packets_total",
    },  # bnxt
}
CNP = {"fabricd_rdma_cnp_sent_total", "fabricd_rdma_cnp_handled_total", "fabricd_rdma_ecn_marked_packets_total"}


def scrape(tmp_path: Path, host: str) -> tuple[set[str], dict[str, set[str]]]:
    nics = fake_nics_for(host_intent(load_inventory(MIXED).fabric, host))
    root = build_fake_host(tmp_path / host, nics)
    write_ethtool(root, nics)
    res = subprocess.run(
        [FABRICD, "export", "host", "--root", str(root), "--once"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    names: set[str] = set()
    prios: dict[str, set[str]] = defaultdict(set)
    scrape = Metrics(res.stdout)
    for name, labels, _ in scrape.samples():
        names.add(name)
        if "priority" in labels:
            prios[name].add(labels["priority"])
    assert scrape.by_label("fabricd_scrape_collector_success", "collector").items() >= {"nic": 1, "rdma": 1}.items()
    return names, prios


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[set[str], dict[str, set[str]]]]:
    tmp = tmp_path_factory.mktemp("families")
    return {host: scrape(tmp, host) for host in ("gpu1", "stor1", "gpu2")}


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_each_family_exports_its_per_priority_counters(
    scraped: dict[str, tuple[set[str], dict[str, set[str]]]],
) -> None:
    for host, wanted in PER_PRIORITY.items():
        _, prios = scraped[host]
        for name in wanted:
            assert prios[name] == {str(p) for p in range(8)}, (host, name, prios.get(name))


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_shared_meanings_share_names(scraped: dict[str, tuple[set[str], dict[str, set[str]]]]) -> None:
    every = set().union(*(names for names, _ in scraped.values()))
    assert all(n.startswith(("fabricd_nic_", "fabricd_rdma_", "fabricd_scrape_", "fabricd_counters_")) for n in every)
    # the same pause metric for Intel and Broadcom, the same byte/packet metrics for NVIDIA and Broadcom
    assert "fabricd_nic_pfc_pause_frames_total" in scraped["stor1"][0] & scraped["gpu2"][0]
    assert "fabricd_nic_priority_bytes_total" in scraped["gpu1"][0] & scraped["gpu2"][0]
    # RDMA CNP/ECN counters: irdma's cnpSent/RxECNMrkd and bnxt_re's np_cnp_sent are the same metrics
    assert CNP.issubset(scraped["stor1"][0]) and CNP.issubset(scraped["gpu2"][0])


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_rdma_statistic_bundle_is_exported(tmp_path: Path) -> None:
    """A replay root holding only a bundle's `rdma statistic show` (a real MLNX_OFED capture) exports the same
    metric names as sysfs would; a damaged bundle makes the rdma collector report failure, not a traceback."""
    (tmp_path / "rdma").mkdir()
    capture = Path(__file__).resolve().parent / "readers" / "host_text" / "rdma-statistic-show-mlnx-4links.txt"
    (tmp_path / "rdma" / "statistic.txt").write_text(capture.read_text())
    out = subprocess.run(
        [FABRICD, "export", "host", "--root", str(tmp_path), "--once"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert 'fabricd_rdma_out_of_buffer_total{device="mlx5_0",port="1"} 135' in out.stdout
    assert 'fabricd_rdma_cnp_sent_total{device="mlx5_3",port="1"} 0' in out.stdout
    assert 'fabricd_scrape_collector_success{collector="rdma"} 1' in out.stdout
    (tmp_path / "rdma" / "statistic.txt").write_text(capture.read_text()[:400])  # cut mid-record
    bad = subprocess.run(
        [FABRICD, "export", "host", "--root", str(tmp_path), "--once"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in bad.stderr
    assert 'fabricd_scrape_collector_success{collector="rdma"} 0' in bad.stdout
    assert "statistic.txt:" in bad.stderr
