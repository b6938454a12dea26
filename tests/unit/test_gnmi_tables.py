"""The packs' gNMI tables: every path names its source and respects the NOS's limits, and SONiC's mapping reads
sonic-gnmi's published payloads (tests/golden/gnmi/sonic/, each with its source line) into the same typed counters
the SSH parsers produce. The queue-type maps have no published payload: the test writes the name -> OID -> type
join itself (the OIDs of the Queues payload's keys are not in it either), and says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabricd.model import Platform
from fabricd.nos.arista_eos import gnmi as eos
from fabricd.nos.cisco_nxos import gnmi as nxos
from fabricd.nos.cumulus_nvue import gnmi as nvue
from fabricd.nos.gnmi import GnmiTable, containers, path_key
from fabricd.nos.gnmi_registry import gnmi_tables, table_for
from fabricd.nos.registry import SPECS
from fabricd.nos.sonic import gnmi as sonic

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gnmi" / "sonic"


def golden(name: str) -> Any:
    lines = (GOLDEN / name).read_text().splitlines()
    assert lines[0].startswith("# source: sonic-net/sonic-gnmi testdata/")
    return json.loads("\n".join(lines[1:]))


def _values(
    queues: dict[str, Any] | None = None, ports: dict[str, Any] | None = None, pgs: dict[str, Any] | None = None
) -> dict[str, Any]:
    names, types = {}, {}
    for i, key in enumerate(k for k in (queues or {}) if k.count(":") == 1):
        oid = f"oid:0x15{i:012x}"
        names[key] = oid
        types[oid] = "SAI_QUEUE_TYPE_UNICAST"  # constructed: no published COUNTERS_QUEUE_TYPE_MAP payload
    return {
        path_key("COUNTERS_DB", "", p): v
        for p, v in (
            (sonic.PORTS, ports or {}),
            (sonic.QUEUES, queues or {}),
            (sonic.PG_WATERMARKS, pgs or {}),
            (sonic.QUEUE_NAMES, names),
            (sonic.QUEUE_TYPES, types),
        )
    }


def test_every_table_names_its_sources_and_limits() -> None:
    assert set(gnmi_tables()) == set(SPECS)
    for platform, table in gnmi_tables().items():
        assert table.platform is platform and table.source and table.paths
        for p in table.paths:
            assert p.source, (platform, p.path)
        for group in table.groups().values():
            assert len({p.origin for p in group}) == 1, f"{platform}: one origin per subscription (EOS refuses mixing)"
    assert table_for("sonic").encoding == "JSON_IETF" and table_for("sonic").min_interval_s == 1.0
    assert table_for("cisco_nxos").default_interval_s == 10.0
    assert table_for("cumulus_nvue").supports_get is False
    assert all(t.mapped for t in gnmi_tables().values())  # FAB145 refuses only a table without a mapping
    assert table_for("cisco_nxos").paths[0].origin == "device"
    for platform in (Platform.ARISTA_EOS, Platform.CISCO_NXOS, Platform.CUMULUS_NVUE):
        assert any("reply shape" in u for u in table_for(platform).unverified), platform  # no published reply


@pytest.mark.parametrize(("requested", "expected"), [(None, 1.0), (0.2, 1.0), (5.0, 5.0)])
def test_sample_interval_never_under_the_nos_floor(requested: float | None, expected: float) -> None:
    ports = next(p for p in sonic.PATHS if p.path == sonic.PORTS)
    assert table_for("sonic").interval(ports, requested) == expected


def test_sonic_queues_payload_maps_to_queue_and_watchdog_counters() -> None:
    c = sonic.to_counters(_values(queues=golden("COUNTERS_Ethernet68_Queues_expected.txt")))
    assert not c.problems
    assert {(q.interface, q.index, q.kind) for q in c.queues} == {("Ethernet68", i, "unicast") for i in (1, 3, 4)}
    q3 = next(q for q in c.queues if q.index == 3)
    assert (q3.packets, q3.bytes, q3.dropped_packets, q3.dropped_bytes) == (0, 0, 0, 0)
    assert q3.ecn_marked_packets is None  # the payload has no WRED/ECN field: absent, never 0
    assert {(w.interface, w.queue, w.status, w.detected, w.restored) for w in c.pfcwd} == {
        ("Ethernet68", 3, "operational", 0, 0),
        ("Ethernet68", 4, "operational", 0, 0),
    }
    assert c.pfcwd[0].tx_drop is None  # not in this payload
    assert [(w.group, w.index, w.kind, w.bytes) for w in c.watermarks] == [("queue", 1, "unicast", 192)]


def test_sonic_port_payload_maps_to_pfc_frames() -> None:
    c = sonic.to_counters(_values(ports={"Ethernet68": golden("COUNTERS_Ethernet68.txt")}))
    frames = {(p.interface, p.direction, p.priority): p.frames for p in c.pfc}
    assert len(frames) == 16 and frames[("Ethernet68", "rx", 7)] == 2 and frames[("Ethernet68", "tx", 7)] == 0
    assert all(p.duration_us is None for p in c.pfc)  # no pause-duration field in this (non-Mellanox) payload


def test_sonic_pg_watermarks() -> None:
    c = sonic.to_counters(_values(pgs=golden("PERIODIC_WATERMARKS_Ethernet16_PriorityGroups_expected.txt")))
    assert sorted((w.interface, w.group, w.index, w.kind, w.bytes) for w in c.watermarks) == [
        ("Ethernet16", "pg", 5, "headroom", 0),
        ("Ethernet16", "pg", 5, "shared", 0),
    ]


def test_a_queue_without_a_type_is_left_out_with_a_problem() -> None:
    values = _values(queues=golden("COUNTERS_Ethernet68_Queues_expected.txt"))
    values[path_key("COUNTERS_DB", "", sonic.QUEUE_TYPES)] = {}
    c = sonic.to_counters(values)
    assert c.queues == () and c.pfcwd == ()
    assert c.problems and "without a type" in c.problems[0]


# -- EOS, NX-OS, Cumulus: leaves written by the test (reply shapes unverified: no published reply) ---------------


def _leaves(container: str, leaves: dict[str, Any], origin: str = "") -> dict[str, Any]:
    return {path_key("", origin, f"{container}/{leaf}"): value for leaf, value in leaves.items()}


def test_a_container_sent_whole_reads_as_its_leaves() -> None:
    c = "interfaces/interface[name=Ethernet1]/ethernet/pfc/priorities/priority[index=3]/state"
    per_leaf = _leaves(c, {"in-frames": 5, "out-frames": "7"})  # uint64 as a JSON string (RFC 7951) reads too
    whole = {path_key("", "", c): {"in-frames": 5, "out-frames": 7}}
    assert containers(per_leaf, eos.PFC) == {("Ethernet1", "3"): {"in-frames": 5, "out-frames": "7"}}
    assert containers(whole, eos.PFC) == {("Ethernet1", "3"): {"in-frames": 5, "out-frames": 7}}
    assert eos.to_counters(per_leaf) == eos.to_counters(whole)
    assert {(p.direction, p.frames) for p in eos.to_counters(per_leaf).pfc} == {("rx", 5), ("tx", 7)}


def test_eos_leaves_map_to_the_ssh_counters() -> None:
    port = "interfaces/interface[name=Ethernet1]"
    values = {
        **_leaves(f"{port}/ethernet/pfc/priorities/priority[index=3]/state", {"in-frames": 900, "out-frames": 2}),
        **_leaves(
            f"{port}/ethernet/pfc/watchdog/tx-queues/tx-queue[index=3][queue-type=UNICAST]/state",
            {"stuck-count": 2, "recovery-count": 1},
        ),
        **_leaves(
            "qos/interfaces/interface[interface-id=Ethernet1]/output/queues/queue[name=3]/state",
            {
                "transmit-pkts": 10,
                "transmit-octets": 4096,
                "dropped-pkts": 1,
                "dropped-octets": 64,
                "ecn-marked-pkts": 4,
            },
        ),
        **_leaves(f"{port}/state/counters", {"in-discards": 3, "out-discards": 4, "carrier-transitions": 6}),
    }
    c = eos.to_counters(values)
    assert [(p.interface, p.priority, p.direction, p.frames) for p in c.pfc] == [
        ("Ethernet1", 3, "rx", 900),
        ("Ethernet1", 3, "tx", 2),
    ]
    assert [(w.queue, w.status, w.detected, w.restored) for w in c.pfcwd] == [(3, "stormed", 2, 1)]
    (q,) = c.queues
    assert (q.index, q.kind, q.packets, q.bytes, q.dropped_packets, q.dropped_bytes, q.ecn_marked_packets) == (
        3,
        "unicast",
        10,
        4096,
        1,
        64,
        4,
    )
    assert q.wred_dropped_packets is None  # EOS publishes none: absent, never 0
    assert {(i.direction, i.value) for i in c.interfaces} == {("rx", 3), ("tx", 4)}
    assert [(lk.name, lk.value) for lk in c.link] == [("carrier_transitions", 6.0)]
    assert eos.queue_of("MC2") == (2, "multicast") and eos.queue_of("best-effort") is None


def test_nxos_leaves_map_to_the_ssh_counters() -> None:
    base = "System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list[name=eth1/1]/queCmap-items"
    values = {
        **_leaves(
            f"{base}/QueuingStats-list[cmapName=c-out-8q-q3]",
            {
                "ucTxPackets": 10,
                "ucTxBytes": 4096,
                "ucDropPackets": 0,
                "ucDropBytes": 0,
                "mcTxPackets": 1,
                "randEcnMarkedPackets": 77,
                "pfcRxPpp": 900,
                "pfcTxPpp": 12,
            },
            origin="device",
        ),
        **_leaves(f"{base}/QueuingStats-list[cmapName=c-out-8q-q-default]", {"ucDropPackets": 5}, origin="device"),
    }
    c = nxos.to_counters(values)
    rows = {(q.interface, q.index, q.kind): q for q in c.queues}
    assert set(rows) == {("Ethernet1/1", 0, "unicast"), ("Ethernet1/1", 3, "unicast"), ("Ethernet1/1", 3, "multicast")}
    assert rows[("Ethernet1/1", 3, "unicast")].ecn_marked_packets == 77
    assert rows[("Ethernet1/1", 3, "multicast")].ecn_marked_packets is None  # no DME leaf: absent, never 0
    assert rows[("Ethernet1/1", 3, "multicast")].bytes is None
    default = rows[("Ethernet1/1", 0, "unicast")]
    assert default.dropped_packets == 5 and default.packets is None
    assert {(p.priority, p.direction, p.frames) for p in c.pfc} == {(3, "rx", 900), (3, "tx", 12)}
    assert c.pfcwd == ()  # the watchdog is not read over gNMI on NX-OS (declared missing)
    no_origin = {k.removeprefix("device:"): v for k, v in values.items()}  # a switch that does not echo the origin
    assert nxos.to_counters(no_origin) == c


def test_nvue_leaves_map_to_the_ssh_counters() -> None:
    values = {
        **_leaves(
            "qos/interfaces/interface[interface-id=swp1]/switch-priority[priority=3]/state",
            {
                "counters/in-pause-pkts": 900,
                "counters/out-pause-pkts": 1,
                "in-pause-duration": 4500,
                "out-pause-duration": 0,
            },
        ),
        **_leaves(
            "qos/interfaces/interface[interface-id=swp1]/output/queues/queue[name=3]/state",
            {
                "transmit-pkts": 10,
                "transmit-octets": 4096,
                "no-buffer-uc-dropped-pkts": 2,
                "wred-dropped-pkts": 1,
                "ecn-marked-pkts": 0,
            },
        ),
        **_leaves("interfaces/interface[name=swp1]/state/counters", {"ecn-marked-pkts": 77, "carrier-transitions": 3}),
    }
    c = nvue.to_counters(values)
    assert {(p.direction, p.priority, p.frames, p.duration_us) for p in c.pfc} == {
        ("rx", 3, 900, 4500),
        ("tx", 3, 1, 0),
    }
    (q,) = c.queues
    assert (q.packets, q.bytes, q.dropped_packets, q.wred_dropped_packets) == (10, 4096, 2, 1)
    assert q.ecn_marked_packets is None  # the per-queue leaf reads 0 when ECN is off: not read
    assert [(i.direction, i.counter, i.value) for i in c.interfaces] == [("tx", "ecn_marked_packets", 77)]


def test_declared_series_by_prefix_and_label() -> None:
    missing = nxos.TABLE.missing_when_streaming
    ecn = "fabricd_switch_queue_ecn_marked_packets_total"
    assert GnmiTable.declared(missing, ecn, {"type": "multicast"})
    assert not GnmiTable.declared(missing, ecn, {"type": "unicast"})
    assert GnmiTable.declared(missing, "fabricd_switch_pfcwd_detected_total", {})
    assert GnmiTable.declared(nvue.TABLE.only_when_streaming, "fabricd_switch_queue_dropped_packets_total", {})
