"""The Cisco NX-OS platform pack: its :class:`~fabricd.nos.spec.PlatformSpec`."""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.spec import LldpTable, PlatformSpec, ShowTable

from . import checks, gnmi, lldp, roles, show, version, watchdog
from .intent import SHAPING
from .rules import RULES
from .running import parse_running_config

AUDIT_HINTS: dict[str, str] = {
    "SW-TRUST": "`service-policy type qos input FABRICD_QOS` on the interface (its classes "
    "`match dscp`, or `match cos`)",
    "SW-DSCP-MAP": "`match dscp D` in a class-map and `set qos-group Q` in the input qos policy",
    "SW-PFC": "`priority-flow-control mode on` on the interface and `pause pfc-cos P` in the system network-qos policy",
    "SW-ECN": "`random-detect minimum-threshold ... maximum-threshold ... drop-probability "
    "... ecn` in queuing class c-out-8q-qQ",
    "SW-WD": "`priority-flow-control watch-dog-interval on` (global and per interface), "
    "`priority-flow-control watch-dog interval P`, `priority-flow-control "
    "fixed-restore multiplier M`, per interface `priority-flow-control watch-dog "
    "interface-multiplier N`",
    "SW-MTU": "`mtu MTU` under the interface and in every network-qos class",
    "SW-WD-STUCK": "`show queuing pfc-queue`; `clear queuing pfc-queue` after the fix",
}
"""SW-* finding code -> the Cisco NX-OS commands that fix it (the audit adds them to the generic hint)."""


SPEC = PlatformSpec(
    platform=Platform.CISCO_NXOS,
    title="Cisco NX-OS",
    intent=SHAPING,
    watchdog=watchdog.CODEC,
    rules=RULES,
    checks=checks.CHECKS,
    show=ShowTable(show.COMMANDS, show.OPTIONAL_COMMANDS, show.PARSERS, show.__name__),
    running_config="show running-config",
    parse_running_config=parse_running_config,
    audit_hints=AUDIT_HINTS,
    version_command=version.VERSION_COMMAND,
    parse_version=version.parse_version,
    suffix="cfg",
    templates="cisco_nxos",
    driver="fabricd.nos.cisco_nxos.driver:NxosDriver",
    lldp=LldpTable(lldp.LLDP_COMMAND, lldp.parse_show_lldp_neighbors_detail, lldp.__name__),
    roles=roles.ROLES,
    gnmi=gnmi.TABLE,
)
