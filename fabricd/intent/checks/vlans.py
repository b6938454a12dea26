"""VLAN isolation checks: unique ids and names, disjoint subnets, existing members, and NIC addressing.

A NIC joins the RDMA VLAN by ``vlan: <id>`` (tagged on the host); the VLAN's ``members`` are the switch ports that
carry it. When a VLAN lists members, the peer port of every NIC in that VLAN must be one of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from .base import Context, Finding, Severity, check, ids_and_names_repeated
from .topology import endpoint_finding

VLANS = ("policy", "vlans")


@check(
    "FAB070",
    "duplicate-vlan",
    Severity.ERROR,
    area="vlans",
    title="VLAN ids and names are unique",
    why="One VLAN id with two subnets or member lists cannot be rendered; names become switch interface names.",
    fix="merge the two VLAN entries or give one another id/name",
)
def duplicate_vlan(ctx: Context) -> Iterator[Finding]:
    yield from ids_and_names_repeated(ctx.policy.vlans, VLANS, "VLAN", unique_id="unique VLAN ids")


@check(
    "FAB071",
    "vlan-subnet-overlap",
    Severity.ERROR,
    area="vlans",
    title="VLAN subnets do not overlap",
    why="Overlapping subnets make host routes ambiguous: RDMA-CM may resolve a peer through the wrong VLAN.",
    fix="give each VLAN its own, disjoint subnet",
)
def vlan_subnet_overlap(ctx: Context) -> Iterator[Finding]:
    nets = sorted(
        ((v.subnet, k) for k, v in enumerate(ctx.policy.vlans)),
        key=lambda t: (int(t[0].network_address), -t[0].prefixlen),
    )
    widest: tuple[IPv4Network, int] | None = None  # the subnet reaching furthest so far (sweep line)
    for net, k in nets:
        if widest is not None and int(net.network_address) <= int(widest[0].broadcast_address):
            other = ctx.policy.vlans[widest[1]]
            yield Finding(
                (*VLANS, k, "subnet"),
                f"subnet {net} overlaps VLAN {other.id} ({other.name}) {widest[0]}",
                expected="disjoint subnets",
                got=f"{net} and {widest[0]}",
            )
        if widest is None or int(net.broadcast_address) > int(widest[0].broadcast_address):
            widest = (net, k)


@check(
    "FAB072",
    "vlan-member-unknown",
    Severity.ERROR,
    area="vlans",
    title="Every VLAN member names an existing switch port",
    why="A member that does not exist is a typo: the real port is left out of the VLAN.",
    fix="fix the member ('switch:port') or add the port",
)
def vlan_member_unknown(ctx: Context) -> Iterator[Finding]:
    for k, v in enumerate(ctx.policy.vlans):
        for m, member in enumerate(v.members):
            f = endpoint_finding(ctx, (*VLANS, k, "members", m), member, f"VLAN {v.id} member")
            if f is not None:
                yield f


@check(
    "FAB073",
    "nic-vlan-undefined",
    Severity.ERROR,
    area="vlans",
    title="Every NIC VLAN is defined under policy.vlans",
    why="A NIC tagged with an undefined VLAN has no subnet to check and no switch ports carrying it.",
    fix="define the VLAN under policy.vlans or fix the NIC's vlan",
)
def nic_vlan_undefined(ctx: Context) -> Iterator[Finding]:
    known = {v.id for v in ctx.policy.vlans}
    for i, j, h, n in ctx.nics():
        if n.vlan is not None and n.vlan not in known:
            yield Finding(
                ("hosts", i, "nics", j, "vlan"),
                f"{h.name}:{n.netdev} uses VLAN {n.vlan}, which is not defined",
                expected="one of " + (", ".join(map(str, sorted(known))) or "(no VLANs)"),
                got=str(n.vlan),
            )


@check(
    "FAB074",
    "nic-ip-outside-vlan",
    Severity.ERROR,
    area="vlans",
    title="A NIC's address is inside its VLAN's subnet",
    why="An address outside the VLAN's subnet is unreachable on that VLAN without routing, so RDMA-CM fails.",
    fix="pick an address in the VLAN's subnet (or fix the prefix length)",
)
def nic_ip_outside_vlan(ctx: Context) -> Iterator[Finding]:
    subnets = {v.id: v.subnet for v in ctx.policy.vlans}
    for i, j, h, n in ctx.nics():
        if n.ip is None or n.vlan is None or n.vlan not in subnets:
            continue
        net = subnets[n.vlan]
        if n.ip.ip not in net:
            yield Finding(
                ("hosts", i, "nics", j, "ip"),
                f"{h.name}:{n.netdev} address is outside VLAN {n.vlan}",
                expected=f"an address in {net}",
                got=str(n.ip),
            )
        elif n.ip.network.prefixlen != net.prefixlen:
            yield Finding(
                ("hosts", i, "nics", j, "ip"),
                f"{h.name}:{n.netdev} prefix length differs from VLAN {n.vlan}'s subnet",
                expected=f"/{net.prefixlen}",
                got=str(n.ip),
            )


@check(
    "FAB075",
    "nic-address-conflict",
    Severity.ERROR,
    area="vlans",
    title="NIC addresses are unique and usable",
    why="A duplicate address breaks ARP and RDMA-CM for both hosts; the network or broadcast address of a "
    "subnet is not a host address.",
    fix="give each NIC its own host address",
)
def nic_address_conflict(ctx: Context) -> Iterator[Finding]:
    seen: dict[object, tuple[int, int]] = {}
    for i, j, h, n in ctx.nics():
        if n.ip is None:
            continue
        net = n.ip.network
        if net.prefixlen < 31 and n.ip.ip in (net.network_address, net.broadcast_address):
            kind = "network" if n.ip.ip == net.network_address else "broadcast"
            yield Finding(
                ("hosts", i, "nics", j, "ip"),
                f"{h.name}:{n.netdev} uses the {kind} address of {net}",
                expected="a host address",
                got=str(n.ip),
            )
        if n.ip.ip in seen:
            fi, fj = seen[n.ip.ip]
            first = ctx.fabric.hosts[fi]
            yield Finding(
                ("hosts", i, "nics", j, "ip"),
                f"address {n.ip.ip} is also used by {first.name}:{first.nics[fj].netdev}",
                expected="unique addresses",
                got=str(n.ip),
            )
        else:
            seen[n.ip.ip] = (i, j)


@check(
    "FAB076",
    "nic-port-not-in-vlan",
    Severity.ERROR,
    area="vlans",
    title="A NIC's peer port carries the NIC's VLAN",
    why="A tagged NIC on a switch port outside its VLAN has no connectivity at all.",
    fix="add the peer port to the VLAN's members",
)
def nic_port_not_in_vlan(ctx: Context) -> Iterator[Finding]:
    members: dict[int, set[str]] = {}
    vlan_names: dict[int, str] = {}
    for v in ctx.policy.vlans:
        if v.members:
            members.setdefault(v.id, set()).update(v.members)
            vlan_names.setdefault(v.id, v.name)
    if not members:
        return
    for (i, j), _ref in ctx.nic_peer.items():
        n = ctx.fabric.hosts[i].nics[j]
        if n.vlan in members and n.peer not in members[n.vlan]:
            yield Finding(
                ("hosts", i, "nics", j, "peer"),
                f"peer port {n.peer} is not a member of VLAN {n.vlan}",
                expected=f"{n.peer} in the members of VLAN {n.vlan} ({vlan_names[n.vlan]})",
                got="not listed",
            )


CHECKS = (
    duplicate_vlan,
    vlan_subnet_overlap,
    vlan_member_unknown,
    nic_vlan_undefined,
    nic_ip_outside_vlan,
    nic_address_conflict,
    nic_port_not_in_vlan,
)
