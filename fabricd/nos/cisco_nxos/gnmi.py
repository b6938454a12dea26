"""Cisco NX-OS over gNMI (port 50051, the DME ``device`` model): the paths fabricd streams and how their leaves
become the counters ``show queuing interface`` gives over SSH (per QoS group: unicast and multicast traffic and
drops, ECN marks, PFC pause frames per class).

Sources: the leaf names are the DME's (CiscoSE/NexusProgrammability ``docs/Telemetry/sensor-path.md``:
``QueuingStats-list`` ``pfcRxPpp``, ``pfcTxPpp``, ``randEcnMarkedPackets``, ``txPackets``, ``txBytes``,
``dropPackets``, ``dropBytes``, ``ucTxPackets``, ``ucDropPackets``); SAMPLE 1-604,800 s, **default 10 s**
(cisco.com NX-OS 9000 Programmability Guide 10.3x "gNMI"); the list keys ``If-list[name]`` and
``QueuingStats-list[cmapName]``, and the class-map names of the default 8-queue policy (``c-out-8q-q<N>``,
``c-out-8q-q-default`` = queue 0), are NX-OS's own names.

**Unverified** (no published NX-OS gNMI reply of these leaves exists; the table marks its shapes as the NX-OS
grammar does): the reply shape (one update per leaf under the concrete ``If-list``/``QueuingStats-list`` keys, or
a container as one JSON object: both are read), the interface name form in ``If-list[name]`` (``eth1/1`` is read as
``Ethernet1/1``), the multicast leaves ``mcTxPackets``/``mcTxBytes``/``mcDropPackets``/``mcDropBytes`` and the
unicast byte leaves ``ucTxBytes``/``ucDropBytes`` (only ``ucTxPackets``/``ucDropPackets`` are in the sensor list),
and that ``pfcRxPpp``/``pfcTxPpp`` of queue N count priority N's frames (the default policy maps CoS N to queue N).

Not over gNMI (missing while the switch streams, never 0): the PFC watchdog (``pfcwdShutdownCount`` and
``pfcwdRestoredCount`` are in the model, but a RoCE monitor by a Cisco engineer reads ``show queuing pfc-queue
detail`` "because DME has a bug of reporting 0", paregupt/nexus_traffic_monitor), the per-port PFC totals of
``show interface priority-flow-control`` (the per-class counts do not add up to frames: one PFC frame can pause
several classes), ECN-marked bytes and multicast ECN marks (no DME leaf found), the transceiver DOM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable, containers, counter, leaf_counters
from fabricd.readers.switch.model import PfcCounter, QueueCounter, QueueKind, SwitchCounters

QUEUING = (
    "System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list[name=*]/queCmap-items/"
    "QueuingStats-list[cmapName=*]"
)
_SRC = "CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md (QueuingStats-list)"

PATHS = (GnmiPath(QUEUING, "SAMPLE", _SRC, origin="device"),)

_CMAP = re.compile(r"-q(?:(?P<n>\d+)|-default)$")
_SHORT = re.compile(r"^(?:eth|ethernet)(?P<rest>\d.*)$", re.IGNORECASE)
_KINDS: tuple[tuple[QueueKind, str], ...] = (("unicast", "uc"), ("multicast", "mc"))


def queue_of(cmap: str) -> int | None:
    """``c-out-8q-q3`` -> 3, ``c-out-8q-q-default`` -> 0 (the default class is queue 0); another name: None."""
    m = _CMAP.search(cmap)
    if m is None:
        return None
    return int(m.group("n")) if m.group("n") is not None else 0


def interface(name: str) -> str:
    """``eth1/1`` (the DME's form) or ``Ethernet1/1`` -> ``Ethernet1/1`` (the labels' form)."""
    m = _SHORT.match(name)
    return f"Ethernet{m.group('rest')}" if m else name


def _queue(port: str, index: int, kind: QueueKind, prefix: str, leaves: Mapping[str, Any]) -> QueueCounter | None:
    names = {
        "packets": f"{prefix}TxPackets",
        "bytes": f"{prefix}TxBytes",
        "dropped_packets": f"{prefix}DropPackets",
        "dropped_bytes": f"{prefix}DropBytes",
    }
    fields = leaf_counters(leaves, names)
    ecn = counter(leaves.get("randEcnMarkedPackets")) if kind == "unicast" else None
    if all(v is None for v in fields.values()) and ecn is None:
        return None
    return QueueCounter(port, index, kind, ecn_marked_packets=ecn, **fields)


def to_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """The latest value of each streamed leaf -> per queue (unicast, multicast) traffic, drops, ECN marks, and PFC
    frames per priority; a leaf the switch did not send stays None (absent), never 0."""
    pfc: list[PfcCounter] = []
    queues: list[QueueCounter] = []
    rows = sorted(
        (
            (interface(port), queue_of(cmap), leaves)
            for (port, cmap), leaves in containers(values, QUEUING, origin="device").items()
        ),
        key=lambda r: (r[0], -1 if r[1] is None else r[1]),
    )
    for port, index, leaves in rows:
        if index is None:
            continue
        for kind, prefix in _KINDS:
            q = _queue(port, index, kind, prefix, leaves)
            if q is not None:
                queues.append(q)
        for leaf, direction in (("pfcRxPpp", "rx"), ("pfcTxPpp", "tx")):
            if leaf in leaves:
                pfc.append(PfcCounter(port, "rx" if direction == "rx" else "tx", index, counter(leaves[leaf])))
    return SwitchCounters(pfc=tuple(pfc), queues=tuple(queues))


TABLE = GnmiTable(
    platform=Platform.CISCO_NXOS,
    port=50051,
    encoding="JSON",
    paths=PATHS,
    min_interval_s=1.0,
    default_interval_s=10.0,
    to_counters=to_counters,
    source="CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md; cisco.com NX-OS 9000 Programmability Guide",
    ssh_only={
        "PFC watchdog (show queuing pfc-queue detail)": "DME pfcwd counters reported as 0 (nexus_traffic_monitor): "
        "missing while the switch streams",
        "per-port PFC totals (show interface priority-flow-control)": "no DME leaf: missing while streaming",
        "ECN-marked bytes, multicast ECN marks": "no DME leaf found: missing while streaming",
        "PFC pause duration": "not found in the DME leaf list (unverified absence)",
        "transceiver DOM (show interface transceiver details)": "not mapped: missing while streaming",
    },
    missing_when_streaming=(
        "fabricd_switch_pfcwd_",
        "fabricd_switch_pfc_frames_total",
        "fabricd_switch_queue_ecn_marked_bytes",
        "fabricd_switch_optic_",
        "fabricd_switch_queue_ecn_marked_packets_total{type=multicast}",
    ),
    unverified=(
        "reply shapes (no published NX-OS gNMI reply of QueuingStats-list)",
        "If-list[name] interface form (eth1/1 read as Ethernet1/1)",
        "mc*/ucTxBytes/ucDropBytes leaf names (only ucTxPackets/ucDropPackets are in the sensor list)",
        "pfcRxPpp/pfcTxPpp of queue N = priority N (default 8-queue policy, CoS N -> queue N)",
        "DME watchdog counters' reliability",
        "FEC counter paths",
    ),
)
