"""Cumulus NVUE's own checks (the spec's ``checks``): what Cumulus Linux refuses although the inventory model admits
it, beyond the rules every pack declares (:mod:`fabricd.nos.checks`; port names are FAB140 there).

Sources (CumulusNetworks/docs, read 2026-11-25; the same facts back the render oracle,
``fabricd.nos.cumulus_nvue.grammar``):

- reserved VLANs: ``content/cumulus-linux-511/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md``
  @ ad804834b92f ("Cumulus Linux reserves a range of VLANs by default; the reserved range is 3725-3999");
- port names: Cumulus names front-panel ports ``swpN`` and breakouts ``swpNsM``, and "You can only enable PFC
  watchdog on a physical interface (swp)" (``content/cumulus-linux-511/Layer-1-and-Switch-Ports/
  Quality-of-Service/_index.md`` @ 28af43a79290).
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.intent.checks.base import Context, Finding, Severity, check
from fabricd.model import Platform

from .rules import NVUE_RESERVED_VLANS


@check(
    "FAB130",
    "nvue-reserved-vlan",
    Severity.ERROR,
    area="vlans",
    title="VLANs on Cumulus NVUE switches are outside Cumulus' reserved range 3725-3999",
    why="Cumulus Linux reserves VLANs 3725-3999 for its own use (one per port, bridge and subinterface); a bridge "
    "VLAN there is refused when the configuration is applied (ifupdown2: 'reserved vlan ... being used').",
    fix="pick a VLAN id outside 3725-3999 (or move Cumulus' reserved range with `nv set system global reserved "
    "vlan internal range`, which fabricd does not manage)",
)
def nvue_reserved_vlan(ctx: Context) -> Iterator[Finding]:
    lo, hi = NVUE_RESERVED_VLANS
    for k, v in enumerate(ctx.policy.vlans):
        if lo <= v.id <= hi and (on := ctx.vlan_carriers(v, Platform.CUMULUS_NVUE)):
            yield Finding(
                ("policy", "vlans", k, "id"),
                f"VLAN {v.id} is in Cumulus' reserved VLAN range, on {', '.join(on)}",
                expected=f"a VLAN id outside {lo}-{hi}",
                got=str(v.id),
            )


CHECKS = (nvue_reserved_vlan,)
