"""Cisco NX-OS's own checks (the spec's ``checks``): what NX-OS refuses although fabricd's model allows it, beyond
the rules every pack declares (:mod:`fabricd.nos.checks`; the values are in ``rules.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.intent.checks.base import Context, Finding, Severity, check, names

from .rules import NXOS_RESERVED_VLANS

VLANS = ("policy", "vlans")


@check(
    "FAB097",
    "nxos-vlan-id",
    Severity.ERROR,
    area="vlans",
    title="VLANs rendered on NX-OS are ones NX-OS lets you create and name",
    why="NX-OS refuses `vlan 1` changes (the default VLAN cannot be modified) and reserves 3968-4094 for internal "
    "use by default, so the VLAN block fabricd renders for it would be rejected at push.",
    fix="pick a VLAN id in 2-3967 for fabrics with Cisco NX-OS switches",
)
def nxos_vlan_id(ctx: Context) -> Iterator[Finding]:
    nxos = ctx.platform_switches("cisco_nxos")
    if not nxos:
        return
    who = names(nxos)
    lo, hi = NXOS_RESERVED_VLANS
    for k, v in enumerate(ctx.policy.vlans):
        if v.id == 1 or lo <= v.id <= hi:
            why = (
                "is NX-OS's default VLAN, which cannot be modified"
                if v.id == 1
                else f"is in NX-OS's reserved range {lo}-{hi}"
            )
            yield Finding(
                (*VLANS, k, "id"), f"VLAN {v.id} {why} (cisco_nxos: {who})", expected=f"2-{lo - 1}", got=str(v.id)
            )


CHECKS = (nxos_vlan_id,)
