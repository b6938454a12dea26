"""exporters/METRICS.md, generated from the collectors' :class:`~fabricd.collectors.core.MetricSpec` s
(``fabricd export metrics-doc --write``; a test fails when the file is stale)."""

from __future__ import annotations

from collections.abc import Sequence

from .core import META_METRICS, MetricSpec
from .gnmi import GnmiStreamCollector
from .ib import IbCollector
from .link import LinkCollector
from .nic import NicCollector
from .nic_config import NicConfigCollector
from .rdma import RdmaCollector
from .switch import SwitchCollector
from .watchdog import WatchdogCollector

GROUPS: tuple[tuple[str, str, tuple[MetricSpec, ...]], ...] = (
    (
        "nic",
        "`fabricd export host`: NIC counters from ethtool statistics, normalised across drivers",
        NicCollector.metrics,
    ),
    (
        "rdma",
        "`fabricd export host`: RDMA port state, PMA counters and RoCE hw_counters from sysfs",
        RdmaCollector.metrics,
    ),
    (
        "nic_config",
        "`fabricd export host`: lossless configuration read back from sysfs/configfs",
        NicConfigCollector.metrics,
    ),
    (
        "link",
        "`fabricd export host`: link health: carrier changes (sysfs), transceiver DOM (`ethtool -m`) and FEC "
        "(`ethtool -I --show-fec`) of replay roots",
        LinkCollector.metrics,
    ),
    (
        "switch",
        "`fabricd export switches`: switch counters through the platform drivers (SSH) or gNMI streams, "
        "under the same names",
        SwitchCollector.metrics,
    ),
    (
        "switch_transport",
        "`fabricd export switches`: which transport reads each switch, and its gNMI streams' staleness",
        GnmiStreamCollector.metrics,
    ),
    (
        "ib",
        "`fabricd export ib`: an InfiniBand fabric's ports, from ibnetdiscover --ports and perfquery -x",
        IbCollector.metrics,
    ),
    ("watchdog", "`fabricd serve` / `fabricd watch`: the in-process PFC storm watchdog", WatchdogCollector.metrics),
    ("meta", "Every exporter: per-collector health", META_METRICS),
)
"""(collector, what it covers, its metric specs) of the L2 collectors, in the order METRICS.md lists them;
``fabricd.cli.export.metric_groups`` adds the service's (drift audit)."""

HEADER = """# fabricd metrics

Generated from the collectors by `fabricd export metrics-doc --write`; do not edit by hand (a test fails when this
file is stale). Conventions: counters end in `_total`; base units are seconds and bytes; labels `direction`
(`rx`|`tx`, as seen by the reporting port), `priority` (0-7), `queue`, `reason`. A counter the device does not report
is absent, never 0. A counter that goes backwards (driver reload) is exported as read and counted in
`fabricd_counters_reset_total{collector}`.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def metrics_markdown(groups: Sequence[tuple[str, str, tuple[MetricSpec, ...]]] = GROUPS) -> str:
    """The METRICS.md text: one table per collector (name, type, labels, help, source)."""
    out = [HEADER]
    for name, title, specs in groups:
        out.append(f"\n## {name}\n\n{title}.\n\n| Metric | Type | Labels | Help | Source |\n|---|---|---|---|---|")
        for s in specs:
            labels = ", ".join(f"`{label}`" for label in s.labels) or "-"
            out.append(f"| `{s.name}` | {s.type} | {labels} | {_cell(s.help)} | {_cell(s.source)} |")
    return "\n".join(out) + "\n"
