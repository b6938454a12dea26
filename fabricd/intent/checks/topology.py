"""Topology checks: unique names, resolvable references, cabling, and what both ends of a cable must agree on.

Conventions: an endpoint is ``device:port`` (``split_endpoint``); switch-to-switch cables are ``links``; host cables
are each NIC's ``peer``. A switch port MTU is taken as the largest L2 frame it accepts (the Ethernet header counted,
not the FCS); a host NIC MTU is the L3 MTU of its netdev, so a NIC frame is MTU + 14 bytes of Ethernet header, + 4
when 802.1Q-tagged. Where the NOS's ``mtu`` is the IP MTU (EOS: the hardware adds 14-18 bytes of L2 header, EOS User
Manual) this is conservative: FAB013 never passes a NIC frame the port drops.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator

from fabricd.model import LinkRole, Nic, Port, split_endpoint

from .base import Context, Finding, Severity, check, rdma_nics_lacking, repeats

ETHERNET_HEADER_BYTES = 14
DOT1Q_TAG_BYTES = 4


def _where(ctx: Context, loc: tuple[str | int, ...]) -> str:
    return str(ctx.inventory.locate(loc))


def endpoint_finding(ctx: Context, loc: tuple[str | int, ...], endpoint: str, what: str) -> Finding | None:
    """A finding when ``endpoint`` (``switch:port``) does not name an existing switch port, else None."""
    try:
        device, port = split_endpoint(endpoint)
    except ValueError:
        return Finding(
            loc,
            f"{what} is not a 'switch:port' endpoint",
            expected="'switch:port', e.g. leaf1:Ethernet0",
            got=repr(endpoint),
            hint="write the switch name, a colon and the port name",
        )
    if (device, port) in ctx.port_index or not ctx.fabric.switches:
        return None  # no switches at all: FAB016 says so once
    if device not in ctx.switch_index:
        if device in ctx.host_index:
            return Finding(
                loc,
                f"{what} names host {device!r}, not a switch",
                expected="a switch port",
                got=repr(endpoint),
                hint="links join switch ports; a host's cable is its NIC's peer: (hosts[].nics[].peer)",
            )
        close = difflib.get_close_matches(device, list(ctx.switch_index), n=1)
        return Finding(
            loc,
            f"{what} names unknown switch {device!r}",
            expected="a switch under switches:",
            got=repr(endpoint),
            hint=f"did you mean {close[0]!r}?" if close else "add the switch or fix the name",
        )
    switch = ctx.fabric.switches[ctx.switch_index[device]]
    close = difflib.get_close_matches(port, [p.name for p in switch.ports], n=1)
    return Finding(
        loc,
        f"{what} names unknown port {port!r} of switch {device!r}",
        expected=f"a port listed under switches[{device}].ports",
        got=repr(endpoint),
        hint=f"did you mean {close[0]!r}?" if close else f"add {port} to {device}'s ports",
    )


@check(
    "FAB001",
    "duplicate-switch-name",
    Severity.ERROR,
    area="topology",
    title="Switch names are unique",
    why="Endpoints, renders and pushes address switches by name; a second definition would be silently ignored.",
    fix="rename or remove one of the two switches",
)
def duplicate_switch_name(ctx: Context) -> Iterator[Finding]:
    yield from _names_used_again(ctx, "switches", [s.name for s in ctx.fabric.switches], what="switch name")


@check(
    "FAB002",
    "duplicate-host-name",
    Severity.ERROR,
    area="topology",
    title="Host names are unique",
    why="Host plans, audits and exporters address hosts by name.",
    fix="rename or remove one of the two hosts",
)
def duplicate_host_name(ctx: Context) -> Iterator[Finding]:
    yield from _names_used_again(ctx, "hosts", [h.name for h in ctx.fabric.hosts], what="host name")


def _names_used_again(ctx: Context, section: str, names: list[str], *, what: str) -> Iterator[Finding]:
    """A finding on every entry of ``section`` whose name an earlier entry has."""
    for i, first in repeats(names):
        yield Finding(
            (section, i, "name"),
            f"{what} {names[i]!r} is already used",
            expected="a unique name",
            got=f"{names[i]!r} again (first at {_where(ctx, (section, first))})",
        )


@check(
    "FAB003",
    "host-switch-name-clash",
    Severity.ERROR,
    area="topology",
    title="No host has the name of a switch",
    why="'device:port' endpoints would be ambiguous between the host and the switch.",
    fix="give the host or the switch another name",
)
def host_switch_name_clash(ctx: Context) -> Iterator[Finding]:
    for i, h in enumerate(ctx.fabric.hosts):
        if ctx.host_index[h.name] == i and h.name in ctx.switch_index:
            first = ctx.switch_index[h.name]
            yield Finding(
                ("hosts", i, "name"),
                f"host name {h.name!r} is also a switch name",
                expected="distinct host and switch names",
                got=f"{h.name!r} (switch at {_where(ctx, ('switches', first))})",
            )


@check(
    "FAB004",
    "duplicate-port-name",
    Severity.ERROR,
    area="topology",
    title="Port names are unique within a switch",
    why="A port configured twice gets one of two configurations, depending on the order they are applied.",
    fix="remove the repeated port or fix its name",
)
def duplicate_port_name(ctx: Context) -> Iterator[Finding]:
    for i, s in enumerate(ctx.fabric.switches):
        for j, first in repeats(p.name for p in s.ports):
            name = s.ports[j].name
            yield Finding(
                ("switches", i, "ports", j, "name"),
                f"port {name!r} is listed twice on {s.name}",
                expected="each port once",
                got=f"{name!r} again (first at {_where(ctx, ('switches', i, 'ports', first))})",
            )


@check(
    "FAB005",
    "duplicate-nic",
    Severity.ERROR,
    area="topology",
    title="NIC netdevs and RDMA devices are unique within a host",
    why="Two NIC entries for one netdev or one RDMA device give the host backend two different desired states.",
    fix="remove the repeated NIC or fix its netdev / rdma_device",
)
def duplicate_nic(ctx: Context) -> Iterator[Finding]:
    for i, h in enumerate(ctx.fabric.hosts):
        netdevs = dict(repeats(n.netdev for n in h.nics))
        rdma = dict(repeats((n.rdma_device, n.rdma_port) if n.rdma_device is not None else None for n in h.nics))
        for j, n in enumerate(h.nics):
            if j in netdevs:
                yield Finding(
                    ("hosts", i, "nics", j, "netdev"),
                    f"netdev {n.netdev!r} is listed twice on {h.name}",
                    expected="each netdev once",
                    got=f"{n.netdev!r} again (first at {_where(ctx, ('hosts', i, 'nics', netdevs[j]))})",
                )
            if j in rdma:
                other = h.nics[rdma[j]].netdev
                yield Finding(
                    ("hosts", i, "nics", j, "rdma_device"),
                    f"RDMA device {n.rdma_device} port {n.rdma_port} is also claimed by {other}",
                    expected="one netdev per RDMA device port",
                    got=f"{other} and {n.netdev}",
                    hint="each RDMA port belongs to one netdev; check `rdma link` on the host",
                )


@check(
    "FAB006",
    "link-endpoint-unknown",
    Severity.ERROR,
    area="topology",
    title="Both ends of every link name an existing switch port",
    why="A link to a port that does not exist is a typo or a missing port; the cable would be left out of "
    "headroom, deadlock and render.",
    fix="fix the endpoint or add the port to the switch",
)
def link_endpoint_unknown(ctx: Context) -> Iterator[Finding]:
    for k, link in enumerate(ctx.fabric.links):
        for end in ("a", "b"):
            f = endpoint_finding(ctx, ("links", k, end), getattr(link, end), f"link end {end}")
            if f is not None:
                yield f


@check(
    "FAB007",
    "link-ends-distinct",
    Severity.ERROR,
    area="topology",
    title="A link joins two different switches",
    why="A cable from a port to itself, or between two ports of one switch, carries no fabric traffic and "
    "creates an L2 loop.",
    fix="fix one end of the link",
)
def link_ends_distinct(ctx: Context) -> Iterator[Finding]:
    for k, link in enumerate(ctx.fabric.links):
        a, b = ctx.resolve(link.a), ctx.resolve(link.b)
        if link.a == link.b:
            yield Finding(
                ("links", k, "b"),
                "both ends of the link are the same port",
                expected="two different ports",
                got=f"{link.a} twice",
            )
        elif a is not None and b is not None and a[0] == b[0]:
            yield Finding(
                ("links", k, "b"),
                f"the link joins two ports of the same switch {ctx.switch(a).name}",
                expected="ports on two different switches",
                got=f"{link.a} and {link.b}",
            )


@check(
    "FAB008",
    "link-speed-mismatch",
    Severity.ERROR,
    area="topology",
    title="Both ends of a link have the same speed",
    why="Ports of different speeds do not link up (or autonegotiate down); headroom is computed per speed.",
    fix="set the same speed on both ports",
)
def link_speed_mismatch(ctx: Context) -> Iterator[Finding]:
    yield from _link_ends_differ(ctx, "speed", "speed", lambda p: p.speed.value)


def _link_ends_differ(ctx: Context, field: str, what: str, value: Callable[[Port], str]) -> Iterator[Finding]:
    """A finding on the second end of every link whose two ports differ in ``value`` (the port's ``field``)."""
    for a, b in ctx.linked_ports:
        va, vb = value(ctx.port(a)), value(ctx.port(b))
        if va != vb:
            yield Finding(
                ctx.port_loc(b, field),
                f"{what} differs from the other end of the link ({ctx.port_label(a)})",
                expected=va,
                got=vb,
            )


@check(
    "FAB009",
    "nic-peer-unknown",
    Severity.ERROR,
    area="topology",
    title="Every NIC peer names an existing switch port",
    why="The peer decides the switch port whose MTU, speed, VLAN and PFC must match the NIC.",
    fix="fix the peer or add the port to the switch",
)
def nic_peer_unknown(ctx: Context) -> Iterator[Finding]:
    for i, j, _h, n in ctx.nics():
        if n.peer is not None:
            f = endpoint_finding(ctx, ("hosts", i, "nics", j, "peer"), n.peer, "peer")
            if f is not None:
                yield f


@check(
    "FAB010",
    "rdma-nic-without-peer",
    Severity.ERROR,
    area="topology",
    title="Every RDMA NIC has a peer switch port",
    why="Without a peer, fabricd cannot check the host against its switch port (PFC, MTU, speed, VLAN) and the "
    "host is left out of the deadlock analysis.",
    fix="add peer: 'switch:port' to the NIC",
)
def rdma_nic_without_peer(ctx: Context) -> Iterator[Finding]:
    yield from rdma_nics_lacking(ctx, "peer", says="has no peer", expected="peer: 'switch:port'")


@check(
    "FAB011",
    "port-cabled-twice",
    Severity.ERROR,
    area="topology",
    title="A switch port is cabled at most once",
    why="A port has one cable: two links (or a link and a NIC) on one port is a copy-paste error.",
    fix="point one of the cables at a free port",
)
def port_cabled_twice(ctx: Context) -> Iterator[Finding]:
    for ref, cables in ctx.cabled.items():
        for c in cables[1:]:
            first = cables[0]
            loc = c.end_locs[c.ends.index(ref)]
            yield Finding(
                loc,
                f"port {ctx.port_label(ref)} is already cabled",
                expected="one cable per port",
                got=f"a second cable (first at {_where(ctx, first.end_locs[first.ends.index(ref)])})",
            )


@check(
    "FAB012",
    "nic-speed-mismatch",
    Severity.ERROR,
    area="topology",
    title="A NIC's speed equals its peer port's speed",
    why="A speed mismatch keeps the link down or autonegotiates it down, and changes the port's headroom.",
    fix="set the NIC speed to the port's speed (or fix the port)",
)
def nic_speed_mismatch(ctx: Context) -> Iterator[Finding]:
    for i, j, nic, port in _peered_nics(ctx):
        if nic.speed is not None and nic.speed != port.speed:
            yield Finding(
                ("hosts", i, "nics", j, "speed"),
                f"speed differs from the peer port {nic.peer}",
                expected=port.speed.value,
                got=nic.speed.value,
            )


def _peered_nics(ctx: Context) -> Iterator[tuple[int, int, Nic, Port]]:
    """(host index, NIC index, NIC, its peer port) of every NIC whose peer resolves."""
    for (i, j), ref in ctx.nic_peer.items():
        yield i, j, ctx.fabric.hosts[i].nics[j], ctx.port(ref)


def nic_frame_bytes(mtu: int, tagged: bool) -> int:
    """Largest L2 frame (no FCS) a NIC with L3 ``mtu`` sends: + 14 bytes of Ethernet header, + 4 for 802.1Q."""
    return mtu + ETHERNET_HEADER_BYTES + (DOT1Q_TAG_BYTES if tagged else 0)


@check(
    "FAB013",
    "nic-mtu-exceeds-port",
    Severity.ERROR,
    area="topology",
    title="A NIC's frames fit its peer port's MTU",
    why="Frames larger than the switch port MTU are dropped: RDMA with a path MTU above it stalls "
    "(the NIC MTU is L3; the switch MTU is L2 and counts the 14-byte header and the 4-byte VLAN tag).",
    fix="lower the NIC MTU or raise the port MTU",
)
def nic_mtu_exceeds_port(ctx: Context) -> Iterator[Finding]:
    for i, j, nic, port in _peered_nics(ctx):
        frame = nic_frame_bytes(nic.mtu, nic.vlan is not None)
        if frame > port.mtu:
            yield Finding(
                ("hosts", i, "nics", j, "mtu"),
                f"MTU {nic.mtu} gives {frame}-byte frames, larger than the MTU of peer port {nic.peer}",
                expected=f"NIC MTU <= {port.mtu - (frame - nic.mtu)} (port MTU {port.mtu})",
                got=str(nic.mtu),
            )


@check(
    "FAB014",
    "link-mtu-mismatch",
    Severity.WARNING,
    area="topology",
    title="Both ends of a link have the same MTU",
    why="Frames between the two MTUs are dropped in one direction only, which is hard to diagnose.",
    fix="set the same MTU on both ports",
)
def link_mtu_mismatch(ctx: Context) -> Iterator[Finding]:
    yield from _link_ends_differ(ctx, "mtu", "MTU", lambda p: str(p.mtu))


@check(
    "FAB015",
    "port-role-mismatch",
    Severity.WARNING,
    area="topology",
    title="A port's role matches what it is cabled to",
    why="The role picks the cable length used for PFC headroom (policy.buffers.cable_length_m): a host port "
    "cabled to a switch gets too little headroom, and vice versa.",
    fix="set the port's role (host for NIC peers, leaf_spine / spine_superspine for switch links)",
)
def port_role_mismatch(ctx: Context) -> Iterator[Finding]:
    for ref, cables in ctx.cabled.items():
        port = ctx.port(ref)
        kind = cables[0].kind
        if kind == "nic" and port.role != LinkRole.HOST:
            yield Finding(
                ctx.port_loc(ref, "role"),
                f"port {ctx.port_label(ref)} is cabled to a host NIC",
                expected="role: host",
                got=f"role: {port.role.value}",
            )
        elif kind == "link" and port.role == LinkRole.HOST:
            link = cables[0].link
            if link is not None and ctx.fabric.links[link].role is None:
                yield Finding(
                    ctx.port_loc(ref, "role"),
                    f"port {ctx.port_label(ref)} is cabled to another switch",
                    expected="a switch-to-switch role (leaf_spine, spine_superspine, internal)",
                    got="role: host",
                    hint="set the port's role, or the link's role: to override it",
                )


CHECKS = (
    duplicate_switch_name,
    duplicate_host_name,
    host_switch_name_clash,
    duplicate_port_name,
    duplicate_nic,
    link_endpoint_unknown,
    link_ends_distinct,
    link_speed_mismatch,
    nic_peer_unknown,
    rdma_nic_without_peer,
    port_cabled_twice,
    nic_speed_mismatch,
    nic_mtu_exceeds_port,
    link_mtu_mismatch,
    port_role_mismatch,
)
