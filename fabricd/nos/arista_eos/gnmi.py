"""Arista EOS over gNMI (port 6030): the paths a RoCE collector needs, with their sources. **Not mapped yet**: the
collector does not turn these notifications into counters (``to_counters`` is None), so ``telemetry.transport:
gnmi`` is refused for EOS switches and they are read over SSH.

Sources: aristanetworks/yang ``EOS-4.36.1F``
``release/openconfig/models/interfaces/arista-intf-augments.yang`` (PFC frames and watchdog counters, since
4.24.0F), ``release/openconfig/models/qos/arista-qos-augments.yang`` (``ecn-marked-pkts``), openconfig-qos-interfaces
(queue transmit/drops); EOS-native paths need Octa and the ``eos_native`` origin, and cannot be mixed with
OpenConfig paths in one request (aristanetworks.github.io/openmgmt/configuration/openconfig): they are a separate
subscription group. The minimum sample interval is **unverified** (no Arista primary source states it).
"""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable

_YANG = "aristanetworks/yang EOS-4.36.1F release/openconfig/models/"
PFC = "interfaces/interface[name=*]/ethernet/pfc/priorities/priority[index=*]/state"
WATCHDOG = "interfaces/interface[name=*]/ethernet/pfc/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state"
QUEUES = "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"

TABLE = GnmiTable(
    platform=Platform.ARISTA_EOS,
    port=6030,
    encoding="JSON",
    paths=(
        GnmiPath(PFC, "SAMPLE", _YANG + "interfaces/arista-intf-augments.yang (in-frames, out-frames)"),
        GnmiPath(WATCHDOG, "SAMPLE", _YANG + "interfaces/arista-intf-augments.yang (stuck-count, recovery-count)"),
        GnmiPath(QUEUES, "SAMPLE", _YANG + "qos/arista-qos-augments.yang (transmit-pkts, dropped-pkts, "
                 "ecn-marked-pkts)"),
        GnmiPath("LANZ", "ON_CHANGE", "aristanetworks/openmgmt docs/examples/gnmi-clients/gnmic/index.md",
                 origin="eos_native", group="native"),
    ),
    min_interval_s=None,
    default_interval_s=10.0,
    to_counters=None,
    source="aristanetworks/yang EOS-4.36.1F; aristanetworks.github.io/openmgmt",
    ssh_only={
        "PFC pause duration": "experimental model (arista-pfc-history-counters-augment.yang, 4.35.0F+): SSH",
        "hardware drop counters (show hardware counter drop)": "no gNMI path recorded: SSH",
    },
    unverified=("minimum SAMPLE interval", "Smash counter refresh period"),
)
