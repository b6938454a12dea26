"""SONiC over gNMI (sonic-gnmi, the ``gnmi``/``telemetry`` container): the paths fabricd streams and how their
JSON_IETF values become the counters ``show pfc counters``, ``show queue counters``/``wredcounters``,
``show pfcwd stats``, ``show pfc counters --history`` and ``watermarkstat`` give over SSH.

Sources:

- addressing: ``prefix.target`` = the Redis DB (``COUNTERS_DB``), path ``TABLE/key[/field]``; the virtual paths
  ``COUNTERS/Ethernet*``, ``COUNTERS/Ethernet*/Queues``, ``PERIODIC_WATERMARKS/Ethernet*/PriorityGroups`` translate
  port and queue names to SAI OIDs (sonic-net/sonic-gnmi ``sonic_data_client/virtual_db.go`` ``pathTransFuncTbl``);
- value shapes: sonic-gnmi ``testdata/COUNTERS:Ethernet_wildcard_expected.txt`` (one JSON object per port, keyed by
  port name, ``SAI_PORT_STAT_*`` string values), ``testdata/COUNTERS:Ethernet68:Queues_expected.txt`` (keys
  ``<port>:<queue>``, ``SAI_QUEUE_STAT_*``, the pfcwd's ``PFC_WD_*`` fields on lossless queues and
  ``<port>:<queue>:periodic`` for the periodic queue watermark), ``testdata/PERIODIC_WATERMARKS:Ethernet16:
  PriorityGroups_expected.txt`` (``SAI_INGRESS_PRIORITY_GROUP_STAT_{SHARED,XOFF_ROOM}_WATERMARK_BYTES``),
  ``testdata/COUNTERS_QUEUE_NAME_MAP.txt`` (``<port>:<queue>`` -> OID);
- the queue type (unicast/multicast, what ``show queue counters`` prints as UC/MC) is not in the Queues payload: it
  is ``COUNTERS_QUEUE_TYPE_MAP`` (OID -> ``SAI_QUEUE_TYPE_UNICAST``/``MULTICAST``/``ALL``) joined through
  ``COUNTERS_QUEUE_NAME_MAP``, both COUNTERS_DB tables sonic-utilities ``queuestat`` reads the same way. No published
  gNMI payload of ``COUNTERS_QUEUE_TYPE_MAP`` was found: its shape (a flat OID -> type object, like the name map's)
  is **unverified**;
- refresh and limits: port/PFC counters every 1 s, queue and WRED/ECN counters every 10 s, PFC-WD poll 100 ms
  (sonic-swss ``orchagent/portsorch.cpp``, ``pfcwdorch.cpp``); SAMPLE under 1 s refused (``MinSampleInterval``,
  ``sonic_data_client/db_client.go``); ON_CHANGE on table paths through keyspace notifications;
- field names of the pfcwd drop counters: ``PFC_WD_QUEUE_STATS_{TX,RX}_DROPPED_PACKETS`` (telemetry.md, sonic-swss
  ``pfcactionhandler.cpp``); the OK and ``_LAST`` fields follow sonic-utilities ``pfcwd/main.py``'s
  ``STATS_DESCRIPTION`` (**unverified** here: no published gNMI payload holds them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPart, GnmiPath, GnmiTable, path_key
from fabricd.readers.switch.model import (
    BufferWatermark,
    PfcCounter,
    PfcwdCounter,
    QueueCounter,
    QueueKind,
    SwitchCounters,
    merge,
)

TARGET = "COUNTERS_DB"
PORTS = "COUNTERS/Ethernet*"
QUEUES = "COUNTERS/Ethernet*/Queues"
PG_WATERMARKS = "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups"
QUEUE_NAMES = "COUNTERS_QUEUE_NAME_MAP"
QUEUE_TYPES = "COUNTERS_QUEUE_TYPE_MAP"
_SRC = "sonic-net/sonic-gnmi sonic_data_client/virtual_db.go; testdata/"

PATHS = (
    GnmiPath(
        PORTS,
        "SAMPLE",
        _SRC + "COUNTERS:Ethernet_wildcard_expected.txt (PORT_STAT refresh 1 s)",
        target=TARGET,
        interval_s=1.0,
    ),
    GnmiPath(
        QUEUES,
        "SAMPLE",
        _SRC + "COUNTERS:Ethernet68:Queues_expected.txt (QUEUE_STAT refresh 10 s)",
        target=TARGET,
        interval_s=10.0,
    ),
    GnmiPath(
        PG_WATERMARKS,
        "SAMPLE",
        _SRC + "PERIODIC_WATERMARKS:Ethernet16:PriorityGroups_expected.txt",
        target=TARGET,
        interval_s=10.0,
    ),
    GnmiPath(QUEUE_NAMES, "ON_CHANGE", _SRC + "COUNTERS_QUEUE_NAME_MAP.txt", target=TARGET),
    GnmiPath(
        QUEUE_TYPES,
        "ON_CHANGE",
        "COUNTERS_DB table read by sonic-utilities queuestat (payload unverified)",
        target=TARGET,
    ),
)

_PFC_RX = tuple(f"SAI_PORT_STAT_PFC_{p}_RX_PKTS" for p in range(8))
_PFC_TX = tuple(f"SAI_PORT_STAT_PFC_{p}_TX_PKTS" for p in range(8))
_PFC_DURATION_FIELDS = tuple(
    (f"SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US", f"SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION") for p in range(8)
)
"""Pause duration: ``_US`` on Mellanox and VS, without it on Innovium, Barefoot, Nephos (sonic-swss orchdaemon.cpp)."""
_QKIND: dict[str, QueueKind] = {
    "SAI_QUEUE_TYPE_UNICAST": "unicast",
    "SAI_QUEUE_TYPE_MULTICAST": "multicast",
    "SAI_QUEUE_TYPE_ALL": "all",
}


_QUEUE_STATS = {
    "packets": "SAI_QUEUE_STAT_PACKETS",
    "bytes": "SAI_QUEUE_STAT_BYTES",
    "dropped_packets": "SAI_QUEUE_STAT_DROPPED_PACKETS",
    "dropped_bytes": "SAI_QUEUE_STAT_DROPPED_BYTES",
    "wred_dropped_packets": "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS",
    "wred_dropped_bytes": "SAI_QUEUE_STAT_WRED_DROPPED_BYTES",
    "ecn_marked_packets": "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
    "ecn_marked_bytes": "SAI_QUEUE_STAT_WRED_ECN_MARKED_BYTES",
}
""":class:`QueueCounter` field -> the ``SAI_QUEUE_STAT_*`` field of ``COUNTERS/Ethernet*/Queues`` it is read from."""
_PFCWD_STATS = {
    "detected": "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
    "restored": "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED",
    "tx_ok": "PFC_WD_QUEUE_STATS_TX_PACKETS",
    "tx_drop": "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS",
    "rx_ok": "PFC_WD_QUEUE_STATS_RX_PACKETS",
    "rx_drop": "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS",
    "tx_last_ok": "PFC_WD_QUEUE_STATS_TX_PACKETS_LAST",
    "tx_last_drop": "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS_LAST",
    "rx_last_ok": "PFC_WD_QUEUE_STATS_RX_PACKETS_LAST",
    "rx_last_drop": "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS_LAST",
}
""":class:`PfcwdCounter` field -> the ``PFC_WD_*`` field of a lossless queue's entry it is read from."""


def _int(value: Any) -> int | None:
    """A COUNTERS_DB value (a decimal string; an int from a JSON number) -> int, else None (never 0). Exact type
    checks and ``int()`` first: this runs for every field of every port each second."""
    if value.__class__ is str:
        try:
            return int(value)
        except ValueError:
            return None
    return value if value.__class__ is int else None


def _stats(fields: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, int | None]:
    """Each counter of ``names`` (model field -> COUNTERS_DB field) read from ``fields``; absent: None, never 0."""
    return {attr: _int(fields.get(name)) for attr, name in names.items()}


def _obj(values: Mapping[str, Any], path: str) -> dict[str, Any]:
    value = values.get(path_key(TARGET, "", path))
    return value if isinstance(value, dict) else {}


def _natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _rows(values: Mapping[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, fields)`` of each entry of the table at ``path`` (ports and queues in natural order: Ethernet4 before
    Ethernet12); an entry that is not an object of fields is passed over."""
    table = _obj(values, path)
    for key in sorted(table, key=_natural):
        fields = table[key]
        if isinstance(fields, dict):
            yield key, fields


def to_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """The latest JSON value of each subscribed path (keyed by :func:`~fabricd.nos.gnmi.path_key`) -> counters.

    A field the payload lacks stays None (not 0); a queue whose type the maps do not give is left out, with a
    problem, rather than guessed."""
    return merge(part.convert(values) for part in PARTS)


def port_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """``COUNTERS/Ethernet*``: PFC frames rx/tx per priority and the rx pause duration where the ASIC has it."""
    pfc: list[PfcCounter] = []
    for port, fields in _rows(values, PORTS):
        for direction, names in (("rx", _PFC_RX), ("tx", _PFC_TX)):
            for prio, name in enumerate(names):
                if name in fields:
                    pfc.append(PfcCounter(port, "rx" if direction == "rx" else "tx", prio, _int(fields[name])))
        for prio, (name_us, name_plain) in enumerate(_PFC_DURATION_FIELDS):
            found = name_us if name_us in fields else name_plain if name_plain in fields else None
            if found is not None:
                pfc.append(PfcCounter(port, "rx", prio, None, _int(fields[found])))
    return SwitchCounters(pfc=tuple(pfc))


def queue_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """``COUNTERS/Ethernet*/Queues`` joined with the queue name and type maps: queue counters, the PFC watchdog of
    lossless queues and the periodic queue watermarks."""
    problems: list[str] = []
    names = {k: v for k, v in _obj(values, QUEUE_NAMES).items() if isinstance(v, str)}
    types = {k: v for k, v in _obj(values, QUEUE_TYPES).items() if isinstance(v, str)}
    queues: list[QueueCounter] = []
    pfcwd: list[PfcwdCounter] = []
    watermarks: list[BufferWatermark] = []
    untyped: list[str] = []
    for key, fields in _rows(values, QUEUES):
        port, _, rest = key.partition(":")
        index_text, _, suffix = rest.partition(":")
        if not index_text.isdigit():
            continue
        index = int(index_text)
        kind = _QKIND.get(types.get(names.get(f"{port}:{index}", ""), ""))
        if kind is None:
            untyped.append(f"{port}:{index}")
            continue
        if suffix == "periodic":
            watermarks.append(
                BufferWatermark(port, "queue", index, kind, _int(fields.get("SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES")))
            )
            continue
        if suffix:
            continue
        queues.append(QueueCounter(port, index, kind, **_stats(fields, _QUEUE_STATS)))
        if "PFC_WD_STATUS" in fields:
            status = str(fields["PFC_WD_STATUS"]) or None
            pfcwd.append(PfcwdCounter(port, index, status, **_stats(fields, _PFCWD_STATS)))
    if untyped:
        problems.append(
            f"sonic gNMI: {len(untyped)} queue(s) without a type in {QUEUE_NAMES}/{QUEUE_TYPES} "
            f"(e.g. {untyped[0]}); left out rather than guessed"
        )
    return SwitchCounters(
        queues=tuple(queues), pfcwd=tuple(pfcwd), problems=tuple(problems), watermarks=tuple(watermarks)
    )


def pg_watermarks(values: Mapping[str, Any]) -> SwitchCounters:
    """``PERIODIC_WATERMARKS/Ethernet*/PriorityGroups``: shared and headroom (xoff room) watermarks per PG."""
    watermarks: list[BufferWatermark] = []
    for key, fields in _rows(values, PG_WATERMARKS):
        port, _, pg = key.partition(":")
        if not pg.isdigit():
            continue
        for pg_kind, field_name in (
            ("shared", "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES"),
            ("headroom", "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES"),
        ):
            if field_name in fields:
                watermarks.append(
                    BufferWatermark(
                        port, "pg", int(pg), "shared" if pg_kind == "shared" else "headroom", _int(fields[field_name])
                    )
                )
    return SwitchCounters(watermarks=tuple(watermarks))


def _key(path: str) -> str:
    return path_key(TARGET, "", path)


PARTS = (
    GnmiPart((_key(PORTS),), port_counters),
    GnmiPart((_key(QUEUES), _key(QUEUE_NAMES), _key(QUEUE_TYPES)), queue_counters),
    GnmiPart((_key(PG_WATERMARKS),), pg_watermarks),
)


TABLE = GnmiTable(
    platform=Platform.SONIC,
    port=8080,
    encoding="JSON_IETF",
    paths=PATHS,
    min_interval_s=1.0,
    default_interval_s=1.0,
    to_counters=to_counters,
    parts=PARTS,
    source="sonic-net/sonic-gnmi virtual_db.go, db_client.go, testdata/",
    ssh_only={
        "interface counters (portstat)": "streamed in COUNTERS/Ethernet* (SAI_PORT_STAT_IF_*) but not read: the SSH "
        "collector does not poll them on SONiC either",
        "pfcwd config (show pfcwd config)": "CONFIG_DB, not a counter; SSH (audit) only",
        "link health (show interfaces counters fec-stats, show interfaces transceiver eeprom --dom)": "FEC counters "
        "(COUNTERS/Ethernet* SAI_PORT_STAT_IF_IN_FEC_*) and DOM (STATE_DB TRANSCEIVER_DOM_SENSOR) are not mapped "
        "yet: missing while the switch streams",
    },
    missing_when_streaming=(
        "fabricd_switch_fec_",
        "fabricd_switch_pre_fec_ber",
        "fabricd_switch_post_fec_ber",
        "fabricd_switch_optic_",
        "fabricd_switch_carrier_transitions",
    ),
    unverified=(
        "COUNTERS_QUEUE_TYPE_MAP payload shape (no published sonic-gnmi testdata)",
        "PFC_WD_QUEUE_STATS_{TX,RX}_PACKETS[_LAST] and *_DROPPED_PACKETS_LAST field names in a gNMI payload",
        "SAI_PORT_STAT_PFC_<p>_RX_PAUSE_DURATION_US in COUNTERS/Ethernet* (collected by the PFC-WD group on "
        "Mellanox/VS only; sonic-swss orchdaemon.cpp)",
    ),
)
