"""NVIDIA Cumulus Linux 5.x over gNMI (port 9339): the paths, with their sources. **Not mapped yet**
(``to_counters`` None): Cumulus switches are read over SSH.

Sources: CumulusNetworks/docs ``content/cumulus-linux-516/
Monitoring-and-Troubleshooting/gNMI Streaming.md``: per switch-priority pause counters and durations, queue
transmit/ECN/drops; Capabilities and STREAM (SAMPLE, ON_CHANGE) only, **no Get/Set**; "The minimum sampling interval
is 1 second"; origin and extensions ignored. The PFC watchdog is not in the 5.16 gNMI metric tables: SSH
(``nv show interface <if> qos pfc-watchdog``).
"""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.gnmi import GnmiPath, GnmiTable

_DOC = "CumulusNetworks/docs content/cumulus-linux-516/Monitoring-and-Troubleshooting/gNMI Streaming.md"
PRIORITY = "qos/interfaces/interface[interface-id=*]/switch-priority[priority=*]/state"
QUEUES = "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"

TABLE = GnmiTable(
    platform=Platform.CUMULUS_NVUE,
    port=9339,
    encoding="JSON",
    paths=(
        GnmiPath(PRIORITY, "SAMPLE", _DOC + " (counters/in-pause-pkts, out-pause-pkts, in-pause-duration)"),
        GnmiPath(QUEUES, "SAMPLE", _DOC + " (transmit-pkts, ecn-marked-pkts, wred-dropped-pkts)"),
    ),
    min_interval_s=1.0,
    default_interval_s=1.0,
    to_counters=None,
    source="CumulusNetworks/docs content/cumulus-linux-516/Monitoring-and-Troubleshooting/gNMI Streaming.md",
    supports_get=False,
    ssh_only={"PFC watchdog": "not in the 5.16 gNMI metric tables: NVUE over SSH"},
)
