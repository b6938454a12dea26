"""The SONiC platform pack: its :class:`~fabricd.nos.spec.PlatformSpec`."""

from __future__ import annotations

from fabricd.model import Platform
from fabricd.nos.spec import LldpTable, PlatformSpec, ShowTable

from . import checks, gnmi, lldp, roles, show, version, watchdog
from .intent import SHAPING, SonicSwitchIntent
from .rules import RULES
from .running import parse_running_config

AUDIT_HINTS: dict[str, str] = {
    "SW-TRUST": "bind the map in PORT_QOS_MAP|<port> dscp_to_tc_map (or dot1p_to_tc_map)",
    "SW-DSCP-MAP": "DSCP_TO_TC_MAP and TC_TO_QUEUE_MAP, bound in PORT_QOS_MAP|<port>",
    "SW-PFC": "PORT_QOS_MAP|<port> pfc_enable (`sudo config interface pfc priority <port> P on`)",
    "SW-ECN": "WRED_PROFILE (ecn ecn_all, green thresholds in bytes) and QUEUE|<port>|Q wred_profile",
    "SW-WD": "`sudo config pfcwd start --action drop ports <port> detection-time D "
    "--restoration-time R` and PORT_QOS_MAP|<port> pfcwd_sw_enable",
    "SW-MTU": "`sudo config interface mtu <port> MTU`",
    "SW-WD-STUCK": "`show pfcwd stats`; `sonic-clear pfcwd` after the fix",
}
"""SW-* finding code -> the SONiC commands that fix it (the audit adds them to the generic hint)."""


def _config_db_json(intent: SonicSwitchIntent) -> str:
    return intent.config_db.to_json()


SPEC = PlatformSpec(
    platform=Platform.SONIC,
    title="SONiC",
    intent=SHAPING,
    watchdog=watchdog.CODEC,
    rules=RULES,
    checks=checks.CHECKS,
    show=ShowTable(show.COMMANDS, show.OPTIONAL_COMMANDS, show.PARSERS, show.__name__),
    running_config="show runningconfiguration all",
    parse_running_config=parse_running_config,
    audit_hints=AUDIT_HINTS,
    version_command=version.VERSION_COMMAND,
    parse_version=version.parse_version,
    suffix="json",
    templates="sonic",
    driver="fabricd.nos.sonic.driver:SonicDriver",
    document=_config_db_json,
    template_suffix="cli",
    lldp=LldpTable(lldp.LLDP_COMMAND, lldp.parse_show_lldp_table, lldp.__name__),
    roles=roles.ROLES,
    gnmi=gnmi.TABLE,
)
