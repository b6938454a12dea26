"""Cisco NX-OS over gNMI (port 50051, DME "device" model): the paths, with their sources. **Not mapped yet**
(``to_counters`` None): NX-OS switches are read over SSH.

Sources: CiscoSE/NexusProgrammability ``docs/Telemetry/sensor-path.md``
(``QueuingStats-list`` pfcRxPpp/pfcTxPpp, randEcnMarkedPackets, txPackets, dropPackets; ``dbgDot3Stats-items``);
SAMPLE 1-604,800 s, **default 10 s** (cisco.com NX-OS 9000 Programmability Guide 10.3x "gNMI"). The DME watchdog
counters were reported as 0 by one practitioner's tool (paregupt/nexus_traffic_monitor), so the watchdog stays on
SSH (``show queuing pfc-queue detail``).
"""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable

QUEUING = ("System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list/queCmap-items/"
           "QueuingStats-list")
DOT3 = "System/intf-items/phys-items/PhysIf-list/dbgDot3Stats-items"

TABLE = GnmiTable(
    platform=Platform.CISCO_NXOS,
    port=50051,
    encoding="JSON",
    paths=(
        GnmiPath(QUEUING, "SAMPLE", "CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md", origin="device"),
        GnmiPath(DOT3, "SAMPLE", "CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md", origin="device"),
    ),
    min_interval_s=1.0,
    default_interval_s=10.0,
    to_counters=None,
    source="CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md; cisco.com NX-OS 9000 Programmability Guide",
    ssh_only={
        "PFC watchdog (show queuing pfc-queue detail)": "DME pfcwd counters reported as 0 (nexus_traffic_monitor)",
        "PFC pause duration": "not found in the DME leaf list (unverified absence)",
    },
    unverified=("DME watchdog counters' reliability", "FEC counter paths"),
)
