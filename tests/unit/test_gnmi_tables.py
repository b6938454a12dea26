"""The packs' gNMI tables: every path names its source and respects the NOS's limits, and SONiC's mapping reads
sonic-gnmi's published payloads (tests/golden/gnmi/sonic/, each with its source line) into the same typed counters
the SSH parsers produce. The queue-type maps have no published payload: the test writes the name -> OID -> type
join itself (the OIDs of the Queues payload's keys are not in it either), and says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.gnmi import path_key
from fabricd.nos.gnmi_registry import gnmi_tables, table_for
from fabricd.nos.registry import SPECS
from fabricd.nos.sonic import gnmi as sonic

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gnmi" / "sonic"


def golden(name: str) -> Any:
    lines = (GOLDEN / name).read_text().splitlines()
    assert lines[0].startswith("# source: sonic-net/sonic-gnmi testdata/")
    return json.loads("\n".join(lines[1:]))


def _values(queues: dict[str, Any] | None = None, ports: dict[str, Any] | None = None,
            pgs: dict[str, Any] | None = None) -> dict[str, Any]:
    names, types = {}, {}
    for i, key in enumerate(k for k in (queues or {}) if k.count(":") == 1):
        oid = f"oid:0x15{i:012x}"
        names[key] = oid
        types[oid] = "SAI_QUEUE_TYPE_UNICAST"  # constructed: no published COUNTERS_QUEUE_TYPE_MAP payload
    return {path_key("COUNTERS_DB", "", p): v for p, v in (
        (sonic.PORTS, ports or {}), (sonic.QUEUES, queues or {}), (sonic.PG_WATERMARKS, pgs or {}),
        (sonic.QUEUE_NAMES, names), (sonic.QUEUE_TYPES, types))}


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
    eos = table_for("arista_eos")
    assert {p.origin for p in eos.paths if p.path == "LANZ"} == {"eos_native"}


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
        ("Ethernet68", 3, "operational", 0, 0), ("Ethernet68", 4, "operational", 0, 0)}
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
        ("Ethernet16", "pg", 5, "headroom", 0), ("Ethernet16", "pg", 5, "shared", 0)]


def test_a_queue_without_a_type_is_left_out_with_a_problem() -> None:
    values = _values(queues=golden("COUNTERS_Ethernet68_Queues_expected.txt"))
    values[path_key("COUNTERS_DB", "", sonic.QUEUE_TYPES)] = {}
    c = sonic.to_counters(values)
    assert c.queues == () and c.pfcwd == ()
    assert c.problems and "without a type" in c.problems[0]
