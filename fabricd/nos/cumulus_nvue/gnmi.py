"""NVIDIA Cumulus Linux 5.x over gNMI (port 9339): the paths fabricd streams and how their leaves become the
counters ``nv show interface <if> counters qos -o json`` and ``nv show interface <if> counters`` give over SSH.

Sources: CumulusNetworks/docs ``content/cumulus-linux-516/Monitoring-and-Troubleshooting/gNMI Streaming.md``
(the metric tables):

- per switch priority: ``qos/interfaces/interface[interface-id]/switch-priority[priority]/state/counters/
  in-pause-pkts``, ``out-pause-pkts`` and ``state/in-pause-duration`` ("time ... the port has been paused"),
  ``out-pause-duration``;
- per queue: ``qos/interfaces/interface[interface-id]/output/queues/queue[name]/state/transmit-pkts``,
  ``transmit-octets``, ``no-buffer-uc-dropped-pkts``, ``wred-dropped-pkts``;
- per port: ``interfaces/interface[name]/state/counters/ecn-marked-pkts``, ``carrier-transitions``.

Behaviour (same page): Capabilities and Subscribe STREAM (SAMPLE, ON_CHANGE) only, **no Get/Set**; "The minimum
sampling interval is 1 second"; origin and extensions are ignored.

**Unverified**: the page lists paths and descriptions, no reply. Read as the gNMI specification's updates (one
per leaf, concrete keys; a container sent as one JSON object is read too), with a queue's ``name`` its traffic
class number and the pause durations in microseconds, as the NVUE CLI prints them.

Not over gNMI (missing while the switch streams, never 0): the PFC watchdog (absent from 5.16's gNMI metric tables;
``nv show interface <if> qos pfc-watchdog`` over SSH), the drops the CLI counts in bytes (``tx-uc-buffer-discards``;
gNMI has packets, ``no-buffer-uc-dropped-pkts``, exported only while streaming), the transceiver DOM. The per-queue
``ecn-marked-pkts`` leaf is not read: the page says it is 0 when ECN is not enabled, which would export a 0 for a
counter that is not counting; the per-port count is read instead, as over SSH.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable, containers, counter, interface_counters, leaf_counters
from fabricd.readers.switch.model import PfcCounter, QueueCounter, SwitchCounters, merge

_DOC = "CumulusNetworks/docs content/cumulus-linux-516/Monitoring-and-Troubleshooting/gNMI Streaming.md"
PRIORITY = "qos/interfaces/interface[interface-id=*]/switch-priority[priority=*]/state"
QUEUES = "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
COUNTERS = "interfaces/interface[name=*]/state/counters"

PATHS = (
    GnmiPath(
        PRIORITY, "SAMPLE", _DOC + " (counters/in-pause-pkts, out-pause-pkts, in-pause-duration, out-pause-duration)"
    ),
    GnmiPath(
        QUEUES, "SAMPLE", _DOC + " (transmit-pkts, transmit-octets, no-buffer-uc-dropped-pkts, wred-dropped-pkts)"
    ),
    GnmiPath(COUNTERS, "SAMPLE", _DOC + " (ecn-marked-pkts, carrier-transitions)"),
)

_QUEUE_LEAVES = {
    "packets": "transmit-pkts",
    "bytes": "transmit-octets",
    "dropped_packets": "no-buffer-uc-dropped-pkts",
    "wred_dropped_packets": "wred-dropped-pkts",
}
""":class:`QueueCounter` field -> the leaf of a ``QUEUES`` container it is read from."""


def pause(values: Mapping[str, Any]) -> SwitchCounters:
    """PFC pause frames and durations per port and switch priority (rx = in, tx = out)."""
    out: list[PfcCounter] = []
    for (port, prio), leaves in sorted(containers(values, PRIORITY).items()):
        if not prio.isdigit():
            continue
        for direction, frames, duration in (
            ("rx", "counters/in-pause-pkts", "in-pause-duration"),
            ("tx", "counters/out-pause-pkts", "out-pause-duration"),
        ):
            if frames in leaves or duration in leaves:
                out.append(
                    PfcCounter(
                        port,
                        "rx" if direction == "rx" else "tx",
                        int(prio),
                        counter(leaves.get(frames)),
                        counter(leaves.get(duration)),
                    )
                )
    return SwitchCounters(pfc=tuple(out))


def queues(values: Mapping[str, Any]) -> SwitchCounters:
    """Egress queue traffic and drops per traffic class."""
    out: list[QueueCounter] = []
    for (port, name), leaves in sorted(containers(values, QUEUES).items()):
        if not name.isdigit():
            continue
        out.append(QueueCounter(port, int(name), "unicast", **leaf_counters(leaves, _QUEUE_LEAVES)))
    return SwitchCounters(queues=tuple(out))


def port_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """ECN-marked packets sent per port and carrier transitions (flaps)."""
    return interface_counters(values, COUNTERS, {"ecn-marked-pkts": ("tx", "ecn_marked_packets")})


def to_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """The latest value of each streamed leaf -> counters; a leaf the switch did not send stays None, never 0."""
    return merge((pause(values), queues(values), port_counters(values)))


TABLE = GnmiTable(
    platform=Platform.CUMULUS_NVUE,
    port=9339,
    encoding="JSON",
    paths=PATHS,
    min_interval_s=1.0,
    default_interval_s=1.0,
    to_counters=to_counters,
    source=_DOC,
    supports_get=False,
    ssh_only={
        "PFC watchdog (nv show interface <if> qos pfc-watchdog)": "not in the 5.16 gNMI metric tables: missing "
        "while the switch streams",
        "queue drops in bytes (tx-uc-buffer-discards)": "gNMI counts packets (no-buffer-uc-dropped-pkts): the bytes "
        "series is missing while streaming, the packets one is "
        "exported only while streaming",
        "transceiver DOM (nv show interface <if> transceiver)": "not mapped: missing while streaming",
    },
    missing_when_streaming=(
        "fabricd_switch_pfcwd_",
        "fabricd_switch_queue_dropped_bytes",
        "fabricd_switch_optic_",
        "fabricd_switch_fec_",
        "fabricd_switch_pre_fec_ber",
        "fabricd_switch_post_fec_ber",
    ),
    only_when_streaming=("fabricd_switch_queue_dropped_packets",),
    unverified=(
        "reply shapes (the 5.16 page lists paths, no reply)",
        "queue name = traffic class number",
        "pause durations in microseconds",
    ),
)
