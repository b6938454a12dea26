"""Arista EOS over gNMI (port 6030, OpenConfig origin): the paths fabricd streams and how their leaves become the
counters ``show priority-flow-control counters detail | json``, ``show interfaces counters queue detail``,
``show qos interfaces ecn counters queue | json``, ``show priority-flow-control counters watchdog | json``,
``show interfaces counters discards | json`` and ``show interfaces | json`` (flaps) give over SSH.

Sources, per path:

- PFC frames per priority: ``interfaces/interface[name]/ethernet/pfc/priorities/priority[index]/state/in-frames``,
  ``out-frames``; PFC watchdog per TX queue: ``.../ethernet/pfc/watchdog/tx-queues/tx-queue[index][queue-type]/
  state/stuck-count``, ``recovery-count`` (aristanetworks/yang EOS-4.36.1F
  ``release/openconfig/models/interfaces/arista-intf-augments.yang``, groupings ``arista-pfc-priority-counters``
  and ``arista-pfc-watchdog-counters``, since EOS 4.24.0F);
- queues: ``qos/interfaces/interface[interface-id]/output/queues/queue[name]/state/transmit-pkts``,
  ``transmit-octets``, ``dropped-pkts``, ``dropped-octets`` (openconfig-qos-interfaces 2.0.1 in the same tree) and
  ``ecn-marked-pkts`` (``release/openconfig/models/qos/arista-qos-augments.yang``);
- discards and flaps: ``interfaces/interface[name]/state/counters/in-discards``, ``out-discards``,
  ``carrier-transitions`` (openconfig-interfaces).

Reply shape: EOS answers a wildcard subscription with one update per leaf, its full path with concrete keys and a
scalar value (the published vEOS replies in hellt/netdevops.me ``docs/posts/2020/gnmi-arista.md``, commit
16c28b88546567193cddb7b76c534695b955c9a5). **Unverified**: no published reply of the PFC, watchdog or queue
leaves exists, so three things are read as the models suggest and said so: a queue's ``name`` is its TX queue
number (the trailing number of the name, ``MC`` in front for a multicast queue), ``queue-type`` is ``UNICAST`` or
``MULTICAST``, and which queues appear (every queue, or only those with counts as the CLI prints them).

EOS-native paths (``LANZ``, ``Smash``) need the ``eos_native`` origin and cannot share a request with OpenConfig
paths (aristanetworks.github.io/openmgmt/configuration/openconfig); none is read (no published payload), so every
path here is one OpenConfig subscription. The minimum SAMPLE interval is **unverified** (no Arista source states it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable, containers, counter, interface_counters, leaf_counters
from fabricd.readers.switch.model import (
    PfcCounter,
    PfcwdCounter,
    QueueCounter,
    QueueKind,
    SwitchCounters,
    merge,
)

from .show import pfcwd_counter

_YANG = "aristanetworks/yang EOS-4.36.1F release/openconfig/models/"
PFC = "interfaces/interface[name=*]/ethernet/pfc/priorities/priority[index=*]/state"
WATCHDOG = "interfaces/interface[name=*]/ethernet/pfc/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state"
QUEUES = "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
COUNTERS = "interfaces/interface[name=*]/state/counters"

PATHS = (
    GnmiPath(PFC, "SAMPLE", _YANG + "interfaces/arista-intf-augments.yang (in-frames, out-frames)"),
    GnmiPath(WATCHDOG, "SAMPLE", _YANG + "interfaces/arista-intf-augments.yang (stuck-count, recovery-count)"),
    GnmiPath(
        QUEUES,
        "SAMPLE",
        _YANG + "qos/openconfig-qos-interfaces.yang (transmit-pkts, transmit-octets, "
        "dropped-pkts, dropped-octets); qos/arista-qos-augments.yang (ecn-marked-pkts)",
    ),
    GnmiPath(
        COUNTERS,
        "SAMPLE",
        _YANG + "interfaces/openconfig-interfaces.yang (in-discards, out-discards, carrier-transitions)",
    ),
)

_QUEUE_LEAVES = {
    "packets": "transmit-pkts",
    "bytes": "transmit-octets",
    "dropped_packets": "dropped-pkts",
    "dropped_bytes": "dropped-octets",
    "ecn_marked_packets": "ecn-marked-pkts",
}
""":class:`QueueCounter` field -> the leaf of a ``QUEUES`` container it is read from."""
_QUEUE_NAME = re.compile(r"^(?P<mc>MC)?\D*?(?P<n>\d+)$", re.IGNORECASE)


def queue_of(name: str) -> tuple[int, QueueKind] | None:
    """A queue's OpenConfig ``name`` -> (TX queue number, unicast/multicast). **Unverified** naming: the trailing
    number is the queue, an ``MC`` prefix makes it multicast; a name without a number is not read."""
    m = _QUEUE_NAME.match(name.strip())
    if m is None:
        return None
    return int(m.group("n")), "multicast" if m.group("mc") else "unicast"


def pfc_frames(values: Mapping[str, Any]) -> SwitchCounters:
    """PFC frames received (``in-frames``, rx) and sent (``out-frames``, tx) per port and priority."""
    out: list[PfcCounter] = []
    for (port, index), leaves in sorted(containers(values, PFC).items()):
        if not index.isdigit():
            continue
        for leaf, direction in (("in-frames", "rx"), ("out-frames", "tx")):
            if leaf in leaves:
                out.append(PfcCounter(port, "rx" if direction == "rx" else "tx", int(index), counter(leaves[leaf])))
    return SwitchCounters(pfc=tuple(out))


def watchdog(values: Mapping[str, Any]) -> SwitchCounters:
    """The PFC watchdog of each unicast TX queue: stuck (detected) and recovered (restored) counts; the status is
    ``stormed`` while detected > restored, as over SSH."""
    out: list[PfcwdCounter] = []
    for (port, index, qtype), leaves in sorted(containers(values, WATCHDOG).items()):
        if not index.isdigit() or qtype.upper() not in ("UNICAST", ""):
            continue
        detected, restored = counter(leaves.get("stuck-count")), counter(leaves.get("recovery-count"))
        out.append(pfcwd_counter(port, int(index), detected, restored))
    return SwitchCounters(pfcwd=tuple(out))


def queues(values: Mapping[str, Any]) -> SwitchCounters:
    """Egress queue traffic, drops and ECN marks."""
    out: list[QueueCounter] = []
    for (port, name), leaves in sorted(containers(values, QUEUES).items()):
        queue = queue_of(name)
        if queue is None:
            continue
        out.append(QueueCounter(port, queue[0], queue[1], **leaf_counters(leaves, _QUEUE_LEAVES)))
    return SwitchCounters(queues=tuple(out))


def port_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """Per-port discards (rx/tx) and carrier transitions (flaps)."""
    return interface_counters(values, COUNTERS, {"in-discards": ("rx", "discards"), "out-discards": ("tx", "discards")})


def to_counters(values: Mapping[str, Any]) -> SwitchCounters:
    """The latest value of each streamed leaf (keyed by :func:`~fabricd.nos.gnmi.path_key`) -> counters; a leaf the
    switch did not send stays None (absent), never 0."""
    return merge((pfc_frames(values), queues(values), watchdog(values), port_counters(values)))


TABLE = GnmiTable(
    platform=Platform.ARISTA_EOS,
    port=6030,
    encoding="JSON",
    paths=PATHS,
    min_interval_s=None,
    default_interval_s=10.0,
    to_counters=to_counters,
    source="aristanetworks/yang EOS-4.36.1F; hellt/netdevops.me docs/posts/2020/gnmi-arista.md (reply shape)",
    ssh_only={
        "PFC pause duration": "experimental model only (arista-pfc-history-counters-augment.yang, 4.35.0F+, "
        "7050X/7060X): not read over either transport",
        "transceiver DOM, FEC codewords and pre-FEC BER": "not mapped over gNMI: missing while the switch streams",
        "LANZ queue lengths (eos_native:/LANZ)": "no published payload: not read",
    },
    missing_when_streaming=(
        "fabricd_switch_fec_",
        "fabricd_switch_pre_fec_ber",
        "fabricd_switch_post_fec_ber",
        "fabricd_switch_optic_",
    ),
    unverified=(
        "reply shapes of the PFC, watchdog and queue leaves (no published EOS reply of them)",
        "queue name -> TX queue number (trailing number; MC prefix = multicast)",
        "tx-queue queue-type values UNICAST/MULTICAST",
        "minimum SAMPLE interval",
        "Smash counter refresh period",
    ),
)
