"""Golden tests of every reader over the real captures in tests/golden/readers/ (copied from ../shared/fixtures with a
first line naming the source). Each capture has an expected normalised JSON next to it; regenerate them with
``pytest tests/golden/test_readers_golden.py --update-goldens`` and review the diff."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.arista_eos import show as arista_eos
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd.nos.cumulus_nvue import show as cumulus_nvue
from fabricd.nos.sonic import show as sonic
from fabricd.readers.ethtool import EthtoolStats, normalise, parse_ethtool_stats
from fabricd.readers.ibnetdiscover import parse_ibnetdiscover_ports
from fabricd.readers.perfquery import parse_perfquery
from fabricd.readers.rdma import RdmaDevice, read_rdma
from fabricd.readers.switch.model import SwitchCounters, merge

GOLDEN = Path(__file__).parent / "readers"


def capture(path: Path) -> str:
    """The capture without its first ``# source:`` line."""
    text = path.read_text()
    first, _, rest = text.partition("\n")
    assert first.startswith("# source:"), f"{path} must start with a '# source:' line"
    return rest


def check(expected_path: Path, data: Any, update: bool) -> None:
    got = json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
    if update:
        expected_path.write_text(got)
        return
    assert expected_path.exists(), f"missing golden {expected_path}; run pytest --update-goldens and review it"
    assert json.loads(got) == json.loads(expected_path.read_text()), f"{expected_path} differs"


# -- ethtool -------------------------------------------------------------------------------------------------------

CAPTURE_PREFIXES = {"mlx5": "mlx5_core", "mlx4": "mlx4_en", "mlxsw": "mlxsw_spectrum"}
"""Captures named by a short prefix; every other ethtool capture is named ``<driver>-*.txt`` (``bnxt_en-ethq.txt``),
so a new NIC family's capture needs no line here."""


def capture_driver(path: Path) -> str | None:
    """The driver whose map reads an ethtool capture: its name's prefix (None: ``ethtool-S-*``, a switch port with no
    driver map, nothing normalised)."""
    from fabricd.readers.ethtool_maps import DRIVER_NAMES  # not at the top: keeps the import block as others edit it

    if path.name.startswith("ethtool-S-"):
        return None
    prefix = path.name.split("-", 1)[0]
    driver = CAPTURE_PREFIXES.get(prefix, prefix)
    assert driver in DRIVER_NAMES, f"{path.name}: name an ethtool capture <driver>-<what>.txt"
    return driver


def ethtool_json(stats: EthtoolStats) -> dict[str, Any]:
    return {
        "driver": stats.driver,
        "raw_count": len(stats.raw),
        "counters": [
            {"counter": c.key.counter, "direction": c.key.direction, "priority": c.key.priority,
             "qualifier": c.key.qualifier, "value": c.value, "source": c.source}
            for c in stats.counters
        ],
    }


@pytest.mark.parametrize("path", sorted((GOLDEN / "ethtool").glob("*.txt")), ids=lambda p: p.stem)
def test_ethtool_golden(path: Path, update_goldens: bool) -> None:
    driver = capture_driver(path)
    raw = parse_ethtool_stats(capture(path))
    assert raw, "every capture has name: value lines"
    stats = normalise(path.stem, raw, driver)
    check(path.with_suffix(".json"), ethtool_json(stats), update_goldens)
    # the same names classify identically with the driver unknown (maps do not collide)
    assert ethtool_json(normalise(path.stem, raw, None))["counters"] == ethtool_json(stats)["counters"]


def test_ethtool_key_facts() -> None:
    """Spot checks of normalisation against values read by eye from the captures."""
    mlx4 = normalise("eth1", parse_ethtool_stats(capture(GOLDEN / "ethtool/mlx4-grep-prio3-pfc-notes.txt")), "mlx4_en")
    assert mlx4.get("pause_frames", "rx", 3) == 14812
    assert mlx4.get("pause_duration_us", "tx", 3) == 47848
    assert mlx4.get("pause_frames", "tx", 3) == 0  # the line has trailing spaces
    mlx5 = normalise("eth03", parse_ethtool_stats(
        capture(GOLDEN / "ethtool/mlx5-cx4lx-grep-pause-pci-globalpause-notes.txt")), "mlx5_core")
    assert mlx5.get("link_pause_duration_us", "tx") == 555665182
    assert mlx5.get("pause_frames", "tx", 0) is None  # global pause only: no per-priority counter, not 0
    bnxt = normalise("x", parse_ethtool_stats(capture(GOLDEN / "ethtool/bnxt_en-ethq.txt")), "bnxt_en")
    assert bnxt.get("discards", qualifier="rx_out_of_buffer") == 655430134
    assert "[0]: rx_ucast_packets" in bnxt.raw
    mlxsw = normalise("swp31", parse_ethtool_stats(capture(GOLDEN / "ethtool/mlxsw-swp31-snmpd-test.txt")),
                      "mlxsw_spectrum2")
    assert mlxsw.get("priority_bytes", "tx", 3) == 16352350345145
    assert mlxsw.get("priority_packets", "rx", 0) == 63917145378
    assert mlxsw.get("pause_duration_us", "rx", 7) == 0


def test_ethtool_driver_source_names_keep_priorities() -> None:
    """Names no capture holds, written from the drivers' sources: Linux i40e_ethtool.c i40e_gstrings_pfc_stats
    (since 4.17) and Intel's out-of-tree ice ice_ethtool.h PICK() names. Not a capture: the text is built here."""
    i40e = normalise("p1", parse_ethtool_stats("port.rx_priority_3_xoff_rx: 7\nport.tx_priority_3_xon_tx: 2\n"
                                               "port.rx_priority_3_xon_2_xoff: 1\n"), "i40e")
    assert (i40e.get("pause_frames", "rx", 3), i40e.get("resume_frames", "tx", 3),
            i40e.get("pause_transitions", "rx", 3)) == (7, 2, 1)
    ice = normalise("p1", parse_ethtool_stats("port-rx-xoff_prio-3_events: 5\nport-tx-xon_prio-6_events: 4\n"),
                    "ice")
    assert (ice.get("pause_frames", "rx", 3), ice.get("resume_frames", "tx", 6)) == (5, 4)


# -- RDMA sysfs ----------------------------------------------------------------------------------------------------

def rdma_json(dev: RdmaDevice) -> dict[str, Any]:
    return {
        "name": dev.name, "fw_ver": dev.fw_ver, "board_id": dev.board_id, "hca_type": dev.hca_type,
        "node_guid": dev.node_guid, "problems": [str(p) for p in dev.problems],
        "ports": [
            {
                "port": p.port, "state": p.state, "state_name": p.state_name, "phys_state": p.phys_state,
                "phys_state_name": p.phys_state_name, "rate": p.rate, "rate_gbps": p.rate_gbps,
                "link_layer": p.link_layer, "saturated": list(p.saturated),
                "counters": dict(sorted(p.counters.items())), "hw_counters": dict(sorted(p.hw_counters.items())),
                "normalised": sorted(
                    ({"counter": k.counter, "direction": k.direction, "qualifier": k.qualifier, "value": v}
                     for k, v in p.normalised().items()),
                    key=lambda r: (r["counter"], str(r["direction"]), str(r["qualifier"])),
                ),
                "unmapped_hw_counters": dict(sorted(p.unmapped_hw_counters().items())),
            }
            for p in dev.ports
        ],
    }


@pytest.mark.parametrize("tree", sorted(p for p in (GOLDEN / "sysfs").iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_rdma_sysfs_golden(tree: Path, tmp_path: Path, update_goldens: bool) -> None:
    assert (tree / "SOURCE").read_text().startswith("# source:")
    cls = tmp_path / "sys/class/infiniband"
    cls.mkdir(parents=True)
    for dev in tree.iterdir():
        if dev.is_dir():
            shutil.copytree(dev, cls / dev.name)
    devices = read_rdma(tmp_path)
    assert devices
    check(tree.with_suffix(".json"), [rdma_json(d) for d in devices], update_goldens)


def test_rdma_units_and_edge_cases(tmp_path: Path) -> None:
    """4-octet data units, N/A (no PMA), saturated 32-bit counters, counters_ext preferred."""
    cls = tmp_path / "sys/class/infiniband"
    shutil.copytree(GOLDEN / "sysfs/node_exporter-sys", cls)
    devs = {d.name: d for d in read_rdma(tmp_path)}
    i40iw = devs["i40iw0"].ports[0]
    assert i40iw.counters["port_rcv_data"] is None and not devs["i40iw0"].problems
    assert i40iw.normalised() == {}
    mlx4 = devs["mlx4_0"].ports[0]
    assert mlx4.saturated == ("port_xmit_wait",)
    norm = {(k.counter, k.direction): v for k, v in mlx4.normalised().items()}
    assert norm[("data_bytes", "rx")] == 4631917 * 4
    assert norm[("packets", "rx")] == 0  # counters_ext/port_rcv_packets_64 (0) wins over counters/ (6825908347)


# -- perfquery -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted((GOLDEN / "perfquery").glob("*.txt")), ids=lambda p: p.stem)
def test_perfquery_golden(path: Path, update_goldens: bool) -> None:
    blocks = parse_perfquery(capture(path))
    assert blocks
    data = [
        {"kind": b.kind, "lid": b.lid, "port": b.port, "cap_mask": b.cap_mask, "counters": dict(b.counters),
         "normalised": sorted(([k.counter, k.direction, k.qualifier, v] for k, v in b.normalised().items()),
                              key=lambda r: (str(r[0]), str(r[1]), str(r[2])))}
        for b in blocks
    ]
    check(path.with_suffix(".json"), data, update_goldens)


def test_perfquery_data_is_bytes() -> None:
    (block,) = parse_perfquery(capture(GOLDEN / "perfquery/perfquery-l-x-hca-treydock.txt"))
    norm = {(k.counter, k.direction): v for k, v in block.normalised().items()}
    assert norm[("data_bytes", "tx")] == 37108676853855 * 4
    assert block.counters["QP1Dropped"] == 0


# -- ibnetdiscover --ports ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted((GOLDEN / "ibnetdiscover").glob("*.txt")), ids=lambda p: p.stem)
def test_ibnetdiscover_ports_golden(path: Path, update_goldens: bool) -> None:
    ports = parse_ibnetdiscover_ports(capture(path))
    assert ports
    data = [
        {"node_type": p.node_type, "lid": p.lid, "port": p.port, "guid": p.guid, "width": p.width, "speed": p.speed,
         "node": p.node, "rate_bytes_per_second": p.rate_bytes_per_second,
         "peer": None if p.peer is None else {"node_type": p.peer.node_type, "lid": p.peer.lid, "port": p.peer.port,
                                              "guid": p.peer.guid, "node": p.peer.node}}
        for p in ports
    ]
    check(path.with_suffix(".json"), data, update_goldens)


def test_ibnetdiscover_reads_links_and_lone_ports() -> None:
    ports = parse_ibnetdiscover_ports(capture(GOLDEN / "ibnetdiscover/ibnetdiscover-p--treydock-edr.txt"))
    assert len(ports) == 9 and sum(p.peer is None for p in ports) == 2
    sw = next(p for p in ports if (p.lid, p.port) == (1719, 1))
    assert sw.node == "ib-i1l1s01" and sw.peer is not None and sw.peer.node == "ib-i1l2s01" and sw.peer.lid == 1516
    assert sw.rate_bytes_per_second == 100e9 / 8  # 4x EDR, as sysfs says "100 Gb/sec (4X EDR)"
    down = next(p for p in ports if (p.lid, p.port) == (2052, 37))
    assert down.speed == "???" and down.rate_bytes_per_second is None and down.node == "ib-i4l1s01"
    (bare,) = parse_ibnetdiscover_ports(capture(GOLDEN / "ibnetdiscover/ibnetdiscover-p--treydock-qdr-unquoted.txt"))
    assert bare.node == "Infiniscale-IV Mellanox Technologies" and bare.peer is None


def test_ibnetdiscover_topology_format_is_a_located_error() -> None:
    from fabricd.readers.textparse import TextParseError

    with pytest.raises(TextParseError) as err:
        parse_ibnetdiscover_ports("\nvendid=0x2c9\nSwitch\t36 \"S-0002c903\"")
    assert err.value.render().startswith("ibnetdiscover:2: not a ports-report line")
    assert "run `ibnetdiscover --ports`" in err.value.render()


# -- switches ------------------------------------------------------------------------------------------------------

def _both(*parsers: Callable[[str], SwitchCounters]) -> Callable[[str], SwitchCounters]:
    return lambda text: merge(p(text) for p in parsers)


SWITCH_PARSERS: dict[str, Callable[[str], SwitchCounters]] = {
    "sonic/pfcwd-show-stats-stormed-dx010-issue5898": sonic.parse_show_pfcwd_stats,
    "sonic/portstat-show-interfaces-counters-ntc": sonic.parse_show_interfaces_counters,
    "sonic/show-interface-counters-errors-s6000-cmdref": sonic.parse_show_interfaces_counters,
    "sonic/show-interfaces-counters-cmdref": sonic.parse_show_interfaces_counters,
    "sonic/show-interfaces-counters-detailed-cmdref":
        lambda t: sonic.parse_show_interfaces_counters_detailed(t, "Ethernet8"),
    "sonic/show-pfc-counters-ntc": sonic.parse_show_pfc_counters,
    "sonic/show-pfcwd-config-voq-issue17434": sonic.parse_show_pfcwd_config,
    "sonic/show-pfcwd-config-z9332-issue9193": sonic.parse_show_pfcwd_config,
    "sonic/show-pfcwd-stats-and-pfc-counters-tx-z9332-issue9430":
        _both(sonic.parse_show_pfcwd_stats, sonic.parse_show_pfc_counters),
    "sonic/show-pfcwd-stats-z9332-issue8483": sonic.parse_show_pfcwd_stats,
    "sonic/show-queue-counters-nonzero-drops-issue2393": sonic.parse_show_queue_counters,
    "sonic/show-queue-counters-td3-issue6290": sonic.parse_show_queue_counters,
    "sonic/show-queue-wredcounters-ecn-only-sonic-mgmt": sonic.parse_show_queue_wredcounters,
    "sonic/show-queue-wredcounters-sonic-utilities-test": sonic.parse_show_queue_wredcounters,
    "sonic/show-pfc-counters-history-sonic-utilities-test": sonic.parse_show_pfc_counters_history,
    "sonic/show-pfc-counters-history-all-sonic-utilities-test": sonic.parse_show_pfc_counters_history,
    "sonic/show-pfc-counters-sonic-utilities-test": sonic.parse_show_pfc_counters,
    "sonic/show-queue-counters-namespaces-sonic-utilities-test": sonic.parse_show_queue_counters,
    "sonic/show-pfcwd-stats-sonic-utilities-test": sonic.parse_show_pfcwd_stats,
    "sonic/show-pfcwd-config-history-sonic-utilities-test": sonic.parse_show_pfcwd_config,
    "sonic/pg_watermark_shared--sonic-utilities-test": sonic.parse_pg_watermark_shared,
    "sonic/pg_watermark_headroom--sonic-utilities-test": sonic.parse_pg_watermark_headroom,
    "sonic/pg_watermark_headroom--masic-sonic-utilities-test": sonic.parse_pg_watermark_headroom,
    "sonic/queue_watermark_unicast--sonic-utilities-test": sonic.parse_queue_watermark_unicast,
    "sonic/queue_watermark_multicast--masic-sonic-utilities-test": sonic.parse_queue_watermark_multicast,
    "sonic/pg-persistent-watermark--sonic-utilities-test": sonic.parse_pg_persistent_watermark,
    "sonic/queue-persistent-watermark--sonic-utilities-test": sonic.parse_queue_persistent_watermark,
    "arista_eos/show-hardware-counter-drop-ntc": arista_eos.parse_show_hardware_counter_drop,
    "arista_eos/show-interfaces-counters-queue-detail-egress-ntc":
        arista_eos.parse_show_interfaces_counters_queue_detail,
    "arista_eos/show-pfc-counters-detail-json-documented": arista_eos.parse_show_priority_flow_control_counters,
    "arista_eos/show-pfc-counters-text-documented": arista_eos.parse_show_priority_flow_control_counters,
    "arista_eos/show-pfc-counters-json-anta": arista_eos.parse_show_priority_flow_control_counters,
    "arista_eos/show-pfc-counters-watchdog-json-documented": arista_eos.parse_show_pfc_counters_watchdog,
    "arista_eos/show-qos-ecn-counters-json-anta": arista_eos.parse_show_qos_ecn_counters,
    "arista_eos/discards--anta": arista_eos.parse_show_interfaces_counters_discards,
    "cisco_nxos/show-int-rx-tx-pause-n5k-mierdin-blog": lambda t: cisco_nxos.parse_show_interface(t, "e1/47"),
    "cisco_nxos/show-int-crc-fcs-and-crc-nxosv-genieparser": cisco_nxos.parse_show_interface,
    "cisco_nxos/show-interface-counters-errors-genieparser": cisco_nxos.parse_show_interface_counters_errors,
    "cisco_nxos/show-interface-priority-flow-control-n5k-mierdin-blog":
        cisco_nxos.parse_show_interface_priority_flow_control,
    "cisco_nxos/show-queuing-interface-n5k-excerpt-mierdin-blog": cisco_nxos.parse_show_queuing_interface,
    "cisco_nxos/show-queuing-interface-egress-n9k-zartbot": lambda t: cisco_nxos.parse_show_queuing(t, "e1/51"),
    "cisco_nxos/show-queuing-interface-ingress-n9k-zartbot": cisco_nxos.parse_show_queuing,
    "cisco_nxos/show-interface-priority-flow-control-detail-n9k-zartbot":
        cisco_nxos.parse_show_interface_priority_flow_control,
    "cisco_nxos/show-queuing-pfc-queue-detail-otel": cisco_nxos.parse_show_queuing_pfc_queue,
    "cumulus_nvue/cl-netstat-cl37-docs": cumulus_nvue.parse_interface_counters_table,
    "cumulus_nvue/nv-show-interface-counters-errors-cl514-docs": cumulus_nvue.parse_counters_errors,
    "cumulus_nvue/nv-show-interface-counters-qos-cl514-docs": cumulus_nvue.parse_counters_qos,
    "cumulus_nvue/nv-show-interface-counters-qos-json-documented":
        lambda t: cumulus_nvue.parse_counters_qos(t, "swp1"),
    "cumulus_nvue/nv-show-interface-qos-roce-counters-cl514-docs": cumulus_nvue.parse_qos_roce_counters,
    "cumulus_nvue/nv-show-interface-qos-pfc-watchdog-cl511-docs": cumulus_nvue.parse_pfc_watchdog,
    "cumulus_nvue/nv-show-interface-view-counters-cl514-docs": cumulus_nvue.parse_interface_counters_table,
    # the formats fabricd's own lab simulators print (capture_lab.py): no public capture exists for these
    "sonic/lab-pfc": sonic.parse_show_pfc_counters,
    "sonic/lab-queue": sonic.parse_show_queue_counters,
    "sonic/lab-wred": sonic.parse_show_queue_wredcounters,
    "sonic/lab-pfcwd": sonic.parse_show_pfcwd_stats,
    "sonic/lab-pfc_history": sonic.parse_show_pfc_counters_history,
    "sonic/lab-pg_watermark_shared": sonic.parse_pg_watermark_shared,
    "sonic/lab-pg_watermark_headroom": sonic.parse_pg_watermark_headroom,
    "sonic/lab-queue_watermark_unicast": sonic.parse_queue_watermark_unicast,
    "sonic/lab-queue_watermark_multicast": sonic.parse_queue_watermark_multicast,
    "arista_eos/lab-discards": arista_eos.parse_show_interfaces_counters_discards,
    "arista_eos/lab-pfc": arista_eos.parse_show_priority_flow_control_counters,
    "arista_eos/lab-queue": arista_eos.parse_show_interfaces_counters_queue_detail,
    "arista_eos/lab-ecn": arista_eos.parse_show_qos_ecn_counters,
    "arista_eos/lab-pfcwd": arista_eos.parse_show_pfc_counters_watchdog,
    "cisco_nxos/lab-pfc": cisco_nxos.parse_show_interface_priority_flow_control,
    "cisco_nxos/lab-queuing": cisco_nxos.parse_show_queuing,
    "cisco_nxos/lab-queuing-json": cisco_nxos.parse_show_queuing,
    "cisco_nxos/lab-pfc-json": cisco_nxos.parse_show_interface_priority_flow_control,
    "cisco_nxos/lab-pfcwd": cisco_nxos.parse_show_queuing_pfc_queue,
    "cumulus_nvue/lab-qos": cumulus_nvue.parse_counters_qos,
    "cumulus_nvue/lab-pfcwd": cumulus_nvue.parse_pfc_watchdog,
    "sonic/fec--sonic-port-fec-ber-design-ctd615": sonic.parse_fec_stats,
    "arista_eos/transceiver--ntc": arista_eos.parse_show_interfaces_transceiver,
    "arista_eos/flaps--napalm": arista_eos.parse_show_interfaces_flaps,
    "arista_eos/show-interfaces-phy-detail-json-documented": arista_eos.parse_show_interfaces_phy_detail,
    "sonic/flaps--sonic-utilities-test": sonic.parse_show_interfaces_flap,
    "sonic/flaps--sonic-utilities-test-port": sonic.parse_show_interfaces_flap,
    "cumulus_nvue/fec--nvue-reference-docs": cumulus_nvue.parse_nv_show_interface_link_phy_detail,
    "cumulus_nvue/flaps--cl56-docs": lambda t: cumulus_nvue.parse_nv_show_interface_counters_flaps(t, "swp1"),
    "cisco_nxos/transceiver--ntc-details": cisco_nxos.parse_show_interface_transceiver_details,
    "cumulus_nvue/transceiver--nvue-reference-docs": lambda t: cumulus_nvue.parse_nv_show_interface_transceiver(
        t, "swp1"),
    "sonic/transceiver--sonic-qsfpdd-cmis-design": sonic.parse_transceiver_dom,
}


def test_every_switch_capture_has_a_parser() -> None:
    captures = {str(p.relative_to(GOLDEN / "switch").with_suffix("")) for p in (GOLDEN / "switch").rglob("*.txt")}
    assert captures == set(SWITCH_PARSERS)


@pytest.mark.parametrize("name", sorted(SWITCH_PARSERS))
def test_switch_golden(name: str, update_goldens: bool) -> None:
    path = GOLDEN / "switch" / f"{name}.txt"
    counters = SWITCH_PARSERS[name](capture(path))
    data = counters.as_dict()
    keys = ("pfc", "queues", "pfcwd", "pfcwd_config", "interfaces", "drops", "watermarks", "optics", "link")
    assert any(data.get(k) for k in keys), "parsed nothing"
    check(path.with_suffix(".json"), data, update_goldens)


def test_switch_key_facts() -> None:
    """Spot checks against values read by eye from the captures."""
    pfc = sonic.parse_show_pfc_counters(capture(GOLDEN / "switch/sonic/show-pfc-counters-ntc.txt")).pfc
    nonzero = {(p.interface, p.direction, p.priority): p.frames for p in pfc if p.frames}
    assert nonzero == {("Ethernet52", "rx", 3): 52, ("Ethernet40", "tx", 3): 40}
    tx = sonic.parse_show_pfc_counters(
        capture(GOLDEN / "switch/sonic/show-pfcwd-stats-and-pfc-counters-tx-z9332-issue9430.txt"))
    assert {(p.interface, p.priority): p.frames for p in tx.pfc if p.frames} == {("Ethernet6", 3): 15437}
    wd = sonic.parse_show_pfcwd_stats(capture(GOLDEN / "switch/sonic/show-pfcwd-stats-z9332-issue8483.txt")).pfcwd
    assert [(w.interface, w.queue, w.status, w.detected, w.restored, w.tx_drop) for w in wd] == [
        ("Ethernet4", 3, "stormed", 2, 1, 46497254)]
    q = sonic.parse_show_queue_counters(capture(GOLDEN / "switch/sonic/show-queue-counters-td3-issue6290.txt")).queues
    mc11 = next(x for x in q if x.index == 11)
    assert (mc11.kind, mc11.dropped_packets, mc11.dropped_bytes) == ("multicast", 260, 26992)
    ecn = sonic.parse_show_queue_wredcounters(
        capture(GOLDEN / "switch/sonic/show-queue-wredcounters-ecn-only-sonic-mgmt.txt")).queues
    uc2 = next(x for x in ecn if x.index == 2)
    assert (uc2.wred_dropped_packets, uc2.ecn_marked_packets) == (None, 32098257)
    hdrm = sonic.parse_pg_watermark_headroom(
        capture(GOLDEN / "switch/sonic/pg_watermark_headroom--masic-sonic-utilities-test.txt")).watermarks
    assert len(hdrm) == 6 * 16 and {(w.interface, w.index, w.bytes) for w in hdrm if w.index == 15 and w.bytes} == {
        ("Ethernet0", 15, 115), ("Ethernet4", 15, 215), ("Ethernet-BP256", 15, 115), ("Ethernet-BP260", 15, 215)}
    mc = sonic.parse_queue_watermark_multicast(
        capture(GOLDEN / "switch/sonic/queue_watermark_multicast--masic-sonic-utilities-test.txt")).watermarks
    assert {(w.interface, w.index): w.bytes for w in mc if w.bytes} == {
        ("Ethernet-BP256", 8): 2, ("Ethernet-BP256", 10): 5, ("Ethernet-BP256", 11): 2057328,
        ("Ethernet-BP256", 12): 208, ("Ethernet-BP256", 13): 20, ("Ethernet-BP256", 14): 228,
        ("Ethernet-BP256", 15): 2}
    assert sum(w.bytes is None for w in mc) == 3 * 8  # N/A kept as None, never 0
    eos = arista_eos.parse_show_interfaces_counters_discards(capture(GOLDEN / "switch/arista_eos/discards--anta.txt"))
    assert {(i.interface, i.direction): i.value for i in eos.interfaces if i.value} == {
        ("Ethernet1", "rx"): 42, ("Ethernet3", "tx"): 40, ("Port-Channel1", "tx"): 30, ("Port-Channel2", "tx"): 30}
    flaps = arista_eos.parse_show_interfaces_flaps(capture(GOLDEN / "switch/arista_eos/flaps--napalm.txt")).link
    assert {(s.interface, s.name): s.value for s in flaps} == {
        ("Management1", "carrier_transitions"): 3, **{(f"Ethernet{n}", "carrier_transitions"): 1 for n in range(1, 6)}}
    phy = arista_eos.parse_show_interfaces_phy_detail(
        capture(GOLDEN / "switch/arista_eos/show-interfaces-phy-detail-json-documented.txt"))
    assert {(s.interface, s.name): s.value for s in phy.link} == {
        ("Ethernet1/1", "fec_corrected_codewords"): 1234567, ("Ethernet1/1", "fec_uncorrectable_codewords"): 3,
        ("Ethernet1/1", "pre_fec_ber"): 2.5e-08}  # the Fire-code port (no codeword counters) has no series
    nv_flaps = cumulus_nvue.parse_nv_show_interface_counters_flaps(
        capture(GOLDEN / "switch/cumulus_nvue/flaps--cl56-docs.txt"))  # the port from the capture's prompt
    assert [(s.interface, s.name, s.value) for s in nv_flaps.link] == [("swp1", "carrier_transitions", 4)]
    sonic_flaps = sonic.parse_show_interfaces_flap(capture(GOLDEN / "switch/sonic/flaps--sonic-utilities-test.txt"))
    assert {s.interface: s.value for s in sonic_flaps.link} == {  # "Never": no flap since orchagent began counting
        "Ethernet0": 5, "Ethernet4": 0, "Ethernet16": 0, "Ethernet20": 0}
    one = sonic.parse_show_interfaces_flap(capture(GOLDEN / "switch/sonic/flaps--sonic-utilities-test-port.txt"))
    assert [(s.interface, s.value) for s in one.link] == [("Ethernet64", 2)]  # right-aligned count
    nv_fec = cumulus_nvue.parse_nv_show_interface_link_phy_detail(
        capture(GOLDEN / "switch/cumulus_nvue/fec--nvue-reference-docs.txt"))  # the port from the capture's prompt
    assert {(s.interface, s.name): s.value for s in nv_fec.link} == {
        ("swp1", "pre_fec_ber"): 1e-7, ("swp1", "post_fec_ber"): 15e-255,
        ("swp1", "fec_corrected_codewords"): 598244758 + 807002 + 3371 + 180 + 1 + 1}  # histogram bins 1..15
    roce = cumulus_nvue.parse_qos_roce_counters(
        capture(GOLDEN / "switch/cumulus_nvue/nv-show-interface-qos-roce-counters-cl514-docs.txt"))
    assert any(i.counter == "ecn_marked_packets" and i.value == 693777677344 for i in roce.interfaces)
