"""The Arista EOS platform pack: its :class:`~fabricd.nos.spec.PlatformSpec`."""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.spec import LldpTable, PlatformSpec, ShowTable

from . import checks, gnmi, lldp, roles, show, version, watchdog
from .intent import SHAPING
from .rules import RULES
from .running import parse_running_config

AUDIT_HINTS: dict[str, str] = {
    "SW-TRUST": "`qos trust dscp` (or `cos`) in the port's qos profile",
    "SW-DSCP-MAP": "`qos map dscp D to traffic-class P` and `qos map traffic-class P to tx-queue Q`",
    "SW-PFC": "`priority-flow-control on` and `priority-flow-control priority P no-drop` in "
    "the port's qos profile, and no `priority-flow-control off` on the interface",
    "SW-ECN": "`random-detect ecn minimum-threshold ... maximum-threshold ... "
    "max-mark-probability ...` under `tx-queue Q` of the qos profile",
    "SW-WD": "`priority-flow-control pause watchdog` and its `port timer` in the qos profile",
    "SW-MTU": "`mtu MTU` under the interface",
    "SW-WD-STUCK": "`show priority-flow-control counters watchdog`",
}
"""SW-* finding code -> the Arista EOS commands that fix it (the audit adds them to the generic hint)."""


SPEC = PlatformSpec(
    platform=Platform.ARISTA_EOS,
    title="Arista EOS",
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
    templates="arista_eos",
    driver="fabricd.nos.arista_eos.driver:EosDriver",
    lldp=LldpTable(lldp.LLDP_COMMAND, lldp.parse_show_lldp_neighbors, lldp.__name__),
    roles=roles.ROLES,
    gnmi=gnmi.TABLE,
)
