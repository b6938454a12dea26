"""fabricd.readers.ethtool_maps (and the hw_counters lookups of readers.rdma): counter names by driver and
generation, built from the NIC profiles' registry, the map picked by the device's own driver, and the ionic (AMD
Pensando) names.

The names are the drivers' own (sources in each NIC profile, fabricd/intent/nics/<family>.py, and in
fabricd/readers/ethtool_maps.py for the drivers no profile covers); the tests feed each generation's names to the
normaliser as ``ethtool -S`` prints them and check the meaning, so an old inbox driver's name (bnxt_en
``rx_total_discard_pkts`` before Linux 6.6) is read like the new one.
"""

from __future__ import annotations

import pytest

from fabricd.intent.nics import BY_DRIVER, PROFILES, NicProfile, profile_for
from fabricd.intent.nics.ionic import HW_COUNTERS as IONIC_HW_COUNTERS
from fabricd.readers.ethtool import normalise, parse_ethtool_stats
from fabricd.readers.ethtool_maps import DRIVER_ALIASES, DRIVER_NAMES, DRIVER_RULES
from fabricd.readers.rdma import HW_COUNTER_MAP, HW_COUNTERS_BY_DRIVER


def test_every_driver_map_has_generations_with_sources() -> None:
    for driver, names in DRIVER_NAMES.items():
        assert names.generations, driver
        for g in names.generations:
            assert g.releases and g.source, (driver, g)
        assert DRIVER_RULES[driver] == names.rules
    assert {"mlx5_core", "bnxt_en", "ice", "i40e", "ionic"} <= set(DRIVER_NAMES)
    assert len(DRIVER_NAMES["bnxt_en"].generations) == 3 and len(DRIVER_NAMES["i40e"].generations) == 3


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.family)
def test_the_readers_walk_every_profile(profile: NicProfile) -> None:
    """A family's counter names live in its profile only: the readers' lookups are built from the registry."""
    if profile.ethtool is not None:
        assert DRIVER_NAMES[profile.ethtool.driver] is profile.ethtool
        assert all(DRIVER_ALIASES.get(d, d) == profile.ethtool.driver for d in profile.drivers)
    for driver in profile.rdma_drivers:
        assert HW_COUNTERS_BY_DRIVER[driver] is profile.hw_counters
    assert all(HW_COUNTER_MAP[n] == m for n, m in profile.hw_counters.items())  # no clash with another family


@pytest.mark.parametrize("name", ["rx_total_discard_pkts", "rx_total_ring_discards"])
def test_bnxt_out_of_buffer_discards_in_both_generations(name: str) -> None:
    """RHEL 8/9 inbox bnxt_en (before Linux 6.6) and current bnxt_en count the ring discards under two names."""
    raw = parse_ethtool_stats(f"NIC statistics:\n     rx_pfc_ena_frames_pri3: 7\n     {name}: 23554\n")
    stats = normalise("eno1", raw, "bnxt_en")
    assert stats.get("discards", None, None, "rx_out_of_buffer") == 23554
    assert stats.get("pause_frames", "rx", 3) == 7


def test_a_known_driver_is_read_with_its_own_map_only() -> None:
    """A name of another driver's map means nothing on this device (before: an unknown-to-the-map driver was read
    with every map merged); a device whose driver is unknown is still tried against every map."""
    raw = {"rx_prio3_pause": 5, "tx_priority_3_xoff.nic": 6}
    ice = normalise("eth0", raw, "ice")
    assert ice.get("pause_frames", "rx", 3) is None and ice.get("pause_frames", "tx", 3) == 6
    mlx5 = normalise("eth0", raw, "mlx5_core")
    assert mlx5.get("pause_frames", "rx", 3) == 5 and mlx5.get("pause_frames", "tx", 3) is None
    assert not normalise("eth0", raw, "r8169").counters  # a driver without a map: nothing normalised
    unknown = normalise("eth0", raw, None)
    assert unknown.get("pause_frames", "rx", 3) == 5 and unknown.get("pause_frames", "tx", 3) == 6


IONIC_ETHTOOL = """NIC statistics:
     frames_rx_pause: 1
     frames_rx_pripause: 40
     frames_tx_pripause: 2
     frames_rx_pri_3: 1000
     frames_tx_pri_3: 900
     rx_pripause_3_1us_count: 345
     tx_pripause_3_1us_count: 12
     rx_pause_1us_count: 9
     frames_rx_dropped: 4
     tx_0_pkts: 77
"""
"""Names from ionic_stats.c ionic_port_stats_desc[] (values made up: no capture of an ionic port exists)."""


def test_ionic_ethtool_names_from_the_driver_source() -> None:
    stats = normalise("enp1s0", parse_ethtool_stats(IONIC_ETHTOOL), "ionic")
    assert stats.get("pause_duration_us", "rx", 3) == 345 and stats.get("pause_duration_us", "tx", 3) == 12
    assert stats.get("priority_packets", "rx", 3) == 1000
    assert stats.get("pause_frames", "rx", None, "all_priorities") == 40
    assert stats.get("link_pause_frames", "rx") == 1 and stats.get("link_pause_duration_us", "rx") == 9
    assert stats.get("discards", None, None, "rx_port") == 4
    assert "tx_0_pkts" not in {c.source for c in stats.counters}  # per queue: left out


def test_ionic_hw_counters_and_profile() -> None:
    assert HW_COUNTERS_BY_DRIVER["ionic_rdma"] is IONIC_HW_COUNTERS
    assert IONIC_HW_COUNTERS["tx_rdma_cnp_pkts"][0] == "cnp_sent"
    assert all(HW_COUNTER_MAP[n] == m for n, m in IONIC_HW_COUNTERS.items())  # no clash with another family
    p = profile_for("ionic")
    assert p is not None and p is BY_DRIVER["ionic_rdma"] and p.ethtool_driver == "ionic"
    assert not p.transports and not p.dcb and not p.roles  # configuration: none without a source
    assert any("unverified" in limit for limit in p.limits)


def test_docs_list_the_generations_and_ionic() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "nics.md").read_text()
    assert "## ionic" in doc and "rx_total_discard_pkts" in doc and "Linux 6.6 and later" in doc
