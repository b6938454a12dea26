"""SONiC's own checks (the spec's ``checks``): what SONiC's YANG models refuse in an inventory that renders for a
SONiC switch, beyond the rules every pack declares (:mod:`fabricd.nos.checks`; the values are in ``rules.py``).

fabricd writes SONiC's CONFIG_DB with ``config load`` / ``sonic-cfggen --write-to-db``, which validate nothing; the
next YANG-checked operation (``config apply-patch``, ``config replace``, ``config`` commands with
``yang_config_validation`` on) then fails on the whole database. So validate refuses what the models refuse, checked
in tests/conformance/test_sonic_yang.py against the models themselves (sonic-buildimage src/sonic-yang-models):

* ``sonic-wred-profile.yang`` WRED_PROFILE ``name``: ``[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})``, length 1..32 (the same
  pattern as the DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP and DOT1P_TO_TC_MAP names; fabricd names
  those maps ``FABRICD`` itself);
* ``sonic-vlan.yang`` VLAN ``name`` ``Vlan<2-4095>`` and ``vlanid`` range 2..4094: VLAN 1 is refused;
* SONiC's PFC watchdog watches a lossless priority only in the queue with the same number (FAB112): sonic-swss
  ``orchagent/pfcwdorch.cpp`` watches ``port.m_queue_ids[i]`` for bit i of ``pfcwd_sw_enable`` (which names queues,
  ``sonic-port-qos-map.yang``), and its storm detectors (``orchagent/pfc_detect_*.lua``) count
  ``SAI_PORT_STAT_PFC_<queue index>_RX_PKTS``, the pause frames of the priority with the queue's number.

fabricd refuses rather than renames: a renamed profile would no longer match what the inventory, ``fabricd audit``
and the switch's own ``show`` output call it (docs/platforms.md, SONiC).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabricd.intent.checks.base import Context, Finding, Severity, check, names
from fabricd.intent.lossless_path import path_plan
from fabricd.intent.switch import ecn_profile_of
from fabricd.model import Platform

from .rules import RULES, SONIC_NAME, SONIC_VLAN_IDS

__all__ = ["CHECKS", "RULES", "SONIC_NAME", "SONIC_VLAN_IDS"]

SONIC = Platform.SONIC.value


def _legal_name(name: str) -> str:
    """A suggestion: the name with each refused character replaced by '_', cut to 32 characters."""
    fixed = re.sub(r"[^-a-zA-Z0-9_]", "_", name)
    if not fixed[:1].isalnum():
        fixed = "p" + fixed
    return fixed[:32]


@check(
    "FAB110",
    "sonic-ecn-profile-name",
    Severity.ERROR,
    area="platform",
    title="ECN profile names that SONiC switches render are legal WRED_PROFILE names",
    why="SONiC's YANG (sonic-wred-profile.yang) takes 1-32 characters of letters, digits, '-' and '_', starting "
    "with a letter or digit; config load writes any name, then GCU and config replace refuse the whole "
    "CONFIG_DB.",
    fix="rename the profile (and the traffic classes' ecn_profile) to letters, digits, '-' and '_', at most 32",
)
def sonic_ecn_profile_name(ctx: Context) -> Iterator[Finding]:
    switches = ctx.platform_switches(SONIC)
    if not switches:
        return
    classes = ctx.policy.qos.traffic_classes
    rendered = {p.name for tc in classes if (p := ecn_profile_of(ctx.fabric, tc)) is not None}
    on = names(switches, limit=3)
    for k, p in enumerate(ctx.policy.ecn_profiles):
        if p.name in rendered and not SONIC_NAME.fullmatch(p.name):
            yield Finding(
                ("policy", "ecn_profiles", k, "name"),
                f"ECN profile {p.name!r} is not a name SONiC takes (WRED_PROFILE on {on})",
                expected="1-32 of [-a-zA-Z0-9_], starting with a letter or digit (sonic-wred-profile.yang)",
                got=f"{p.name!r} ({len(p.name)} characters)",
                hint=f"rename it, e.g. {_legal_name(p.name)!r} (and the classes' ecn_profile)",
            )


@check(
    "FAB111",
    "sonic-vlan-id",
    Severity.ERROR,
    area="platform",
    title="VLANs that SONiC switches carry are 2-4094",
    why="SONiC's YANG (sonic-vlan.yang) refuses Vlan1: VLAN 1 is the default VLAN SONiC does not let CONFIG_DB "
    "define; config load writes it anyway, then GCU and config replace refuse the whole CONFIG_DB.",
    fix="give the VLAN an id from 2 to 4094 (and the NICs' vlan)",
)
def sonic_vlan_id(ctx: Context) -> Iterator[Finding]:
    lo, hi = SONIC_VLAN_IDS
    for k, v in enumerate(ctx.policy.vlans):
        if not lo <= v.id <= hi and (carriers := ctx.vlan_carriers(v, SONIC)):
            yield Finding(
                ("policy", "vlans", k, "id"),
                f"VLAN {v.id} ({v.name}) is carried by SONiC {names(carriers, limit=3)}, whose YANG refuses it",
                expected=f"{lo}-{hi} (sonic-vlan.yang)",
                got=str(v.id),
            )


@check(
    "FAB112",
    "sonic-watchdog-moved-priority",
    Severity.ERROR,
    area="platform",
    title="On SONiC, a watched lossless priority sits in the queue with its own number",
    why="SONiC's PFC watchdog watches queue i for pause frames of priority i (sonic-swss orchagent/pfcwdorch.cpp "
    "and pfc_detect_*.lua read SAI_PORT_STAT_PFC_<queue index>_RX_PKTS). A lossless priority in a queue with "
    "another number cannot be watched: naming the priority watches an empty queue, naming the queue counts "
    "another priority's pauses, and a PFC storm on the priority goes undetected.",
    fix="give the traffic class carrying the lossless priority the priority's number as its id (queue), or "
    "turn the watchdog off (policy.pfc.watchdog.enabled: false) and rely on the exporter's storm alerts",
)
def sonic_watchdog_moved_priority(ctx: Context) -> Iterator[Finding]:
    switches = ctx.platform_switches(SONIC)
    if not switches or not ctx.watchdog_active:
        return  # without PFC priorities there is no lossless path to watch
    classes = ctx.policy.qos.traffic_classes
    for path in path_plan(ctx.fabric).lossless:
        if not path.moved:
            continue
        k = next((i for i, tc in enumerate(classes) if path.priority in tc.priorities), None)
        loc: tuple[str | int, ...] = (
            ("policy", "qos", "traffic_classes", k, "id") if k is not None else ("policy", "pfc", "priorities")
        )
        yield Finding(
            loc,
            f"lossless priority {path.priority} is in queue {path.queue}, which SONiC's PFC watchdog "
            f"cannot watch for it (SONiC {names(switches, limit=3)})",
            expected=f"priority {path.priority} in queue {path.priority} while the watchdog is on",
            got=f"queue {path.queue} (traffic class {path.traffic_class!r})",
            hint=f"set the id of traffic class {path.traffic_class!r} to {path.priority}, or "
            "policy.pfc.watchdog.enabled: false",
        )


CHECKS = (
    sonic_ecn_profile_name,
    sonic_vlan_id,
    sonic_watchdog_moved_priority,
)
