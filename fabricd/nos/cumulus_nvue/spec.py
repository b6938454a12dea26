"""The NVIDIA Cumulus Linux (NVUE) platform pack: its :class:`~fabricd.nos.spec.PlatformSpec`."""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.spec import LldpTable, PlatformSpec, ShowTable

from . import checks, gnmi, lldp, roles, show, version, watchdog
from .diff import diff_signs
from .intent import SHAPING
from .rules import RULES
from .running import parse_running_config

AUDIT_HINTS: dict[str, str] = {
    "SW-TRUST": "`nv set qos mapping default-global trust l3` (or l2)",
    "SW-DSCP-MAP": "`nv set qos mapping default-global dscp D switch-priority P` and `nv "
    "set qos egress-queue-mapping default-global switch-priority P "
    "traffic-class Q`",
    "SW-PFC": "`nv set interface <port> qos pfc profile <name>` with `switch-priority P` and tx/rx enabled",
    "SW-ECN": "`nv set qos congestion-control default-global traffic-class Q "
    "min-threshold|max-threshold|probability ...` and `ecn enable`",
    "SW-WD": "`nv set interface <port> qos pfc-watchdog state enable` and `nv set qos "
    "pfc-watchdog polling-interval|robustness`",
    "SW-MTU": "`nv set interface <port> link mtu MTU`",
    "SW-WD-STUCK": "`nv show interface <port> qos pfc-watchdog`",
}
"""SW-* finding code -> the NVUE commands that fix it (the audit adds them to the generic hint)."""


SPEC = PlatformSpec(
    platform=Platform.CUMULUS_NVUE,
    title="NVIDIA Cumulus Linux (NVUE)",
    intent=SHAPING,
    watchdog=watchdog.CODEC,
    rules=RULES,
    checks=checks.CHECKS,
    show=ShowTable(show.COMMANDS, show.OPTIONAL_COMMANDS, show.PARSERS, show.__name__),
    running_config="nv config show -o commands",
    parse_running_config=parse_running_config,
    audit_hints=AUDIT_HINTS,
    version_command=version.VERSION_COMMAND,
    parse_version=version.parse_version,
    suffix="nvue",
    templates="cumulus_nvue",
    driver="fabricd.nos.cumulus_nvue.driver:NvueDriver",
    lldp=LldpTable(lldp.LLDP_COMMAND, lldp.parse_nv_show_interface_lldp_neighbor, lldp.__name__),
    roles=roles.ROLES,
    gnmi=gnmi.TABLE,
    diff_signs=diff_signs,
)
