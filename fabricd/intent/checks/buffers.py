"""Buffer checks: PFC headroom per port (SONiC's formula, :mod:`fabricd.intent.headroom`) against the switch's
headroom pool, and the consistency of the buffer figures.

Cable length of a port, most specific first: the ``cable_m`` of the link (switch ports) or of the NIC (host ports)
cabled to it; else ``policy.buffers.cable_length_m`` of the link's ``role`` if set, else of the port's ``role``;
a role missing from that table falls back to the SONiC role table (host 5 m, leaf_spine 40 m, spine_superspine
300 m, internal 5 m; buffers_config.j2). Every declared port counts: fabricd enables PFC on all of them, and the
ASIC reserves headroom per lossless priority group of every such port.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.intent.headroom import Headroom, headroom
from fabricd.model import Buffers, LinkRole

from .base import Context, Finding, PortRef, Severity, check

_DEFAULT_CABLES = Buffers().cable_length_m
"""The policy's default cable length per role (SONiC's role table), for every platform."""


def port_cable(ctx: Context, ref: PortRef) -> tuple[float, LinkRole, bool]:
    """(cable length in m, the role it was taken from, whether the role was missing from the policy table)."""
    port = ctx.port(ref)
    role = port.role
    cables = ctx.cabled.get(ref)
    if cables:
        c = cables[0]
        if c.link is not None:
            link = ctx.fabric.links[c.link]
            if link.cable_m is not None:
                return link.cable_m, link.role or role, False
            role = link.role or role
        elif c.nic is not None:
            nic = ctx.fabric.hosts[c.nic[0]].nics[c.nic[1]]
            if nic.cable_m is not None:
                return nic.cable_m, role, False
    table = ctx.policy.buffers.cable_length_m
    if role in table:
        return table[role], role, False
    return _DEFAULT_CABLES[role], role, True


def port_headroom(ctx: Context, ref: PortRef, cache: dict[tuple[object, ...], Headroom] | None = None) -> Headroom:
    """Headroom of one lossless priority group on the port (bytes), memoised by (speed, cable, MTU)."""
    port = ctx.port(ref)
    cable, _role, _missing = port_cable(ctx, ref)
    buffers = ctx.policy.buffers
    key = (port.speed, cable, port.mtu, buffers.lossless_mtu_bytes, buffers.xon_bytes)
    if cache is not None and key in cache:
        return cache[key]
    hr = headroom(
        port.speed, cable, port.mtu, lossless_mtu_bytes=buffers.lossless_mtu_bytes, xon_bytes=buffers.xon_bytes
    )
    if cache is not None:
        cache[key] = hr
    return hr


@check(
    "FAB060",
    "headroom-exceeds-pool",
    Severity.ERROR,
    area="buffers",
    title="PFC headroom of all ports fits the switch's headroom pool",
    why="Each lossless priority of each port reserves xoff + xon headroom; if the sum exceeds the pool, the "
    "switch rejects the buffer profile (SONiC buffer_check_headroom) or pauses too late and drops lossless "
    "traffic.",
    fix="fewer lossless priorities, shorter cable lengths, a smaller MTU, or a correct headroom_pool_bytes",
)
def headroom_exceeds_pool(ctx: Context) -> Iterator[Finding]:
    n_lossless = len(ctx.pfc_priorities)
    if not ctx.lossless or not n_lossless:
        return
    cache: dict[tuple[object, ...], Headroom] = {}
    for i, s in enumerate(ctx.fabric.switches):
        pool = s.buffer.headroom_pool_bytes
        if pool is None or not s.ports:
            continue
        total = 0
        largest = (0, 0)
        for j in range(len(s.ports)):
            size = port_headroom(ctx, (i, j), cache).size_bytes
            total += size
            largest = max(largest, (size, j))
        total *= n_lossless
        if total > pool:
            yield Finding(
                ("switches", i, "buffer", "headroom_pool_bytes"),
                f"{s.name}: PFC headroom of {len(s.ports)} ports x {n_lossless} lossless "
                f"priorit{'y' if n_lossless == 1 else 'ies'} exceeds the headroom pool "
                f"(largest: {s.ports[largest[1]].name} {largest[0]} bytes per priority)",
                expected=f">= {total} bytes",
                got=f"{pool} bytes",
            )


@check(
    "FAB061",
    "lossless-mtu-exceeds-port",
    Severity.WARNING,
    area="buffers",
    title="The lossless MTU is not larger than the port MTU",
    why="buffers.lossless_mtu_bytes is the largest lossless packet still arriving after XOFF; a value above "
    "the port MTU inflates headroom for packets the port cannot carry.",
    fix="lower policy.buffers.lossless_mtu_bytes (SONiC uses 1024) or remove it to use the port MTU",
)
def lossless_mtu_exceeds_port(ctx: Context) -> Iterator[Finding]:
    lossless_mtu = ctx.policy.buffers.lossless_mtu_bytes
    if lossless_mtu is None:
        return
    smallest = min((p.mtu for s in ctx.fabric.switches for p in s.ports), default=None)
    if smallest is not None and lossless_mtu > smallest:
        yield Finding(
            ("policy", "buffers", "lossless_mtu_bytes"),
            "lossless MTU is larger than a port MTU",
            expected=f"<= {smallest} (the smallest port MTU)",
            got=str(lossless_mtu),
        )


@check(
    "FAB062",
    "cable-length-missing",
    Severity.WARNING,
    area="buffers",
    title="Every port role in use has a cable length",
    why="Headroom depends on cable length; a role missing from policy.buffers.cable_length_m falls back to "
    "SONiC's role table, which may not match the real cabling.",
    fix="add the role to policy.buffers.cable_length_m (or set cable_m on the link or NIC)",
)
def cable_length_missing(ctx: Context) -> Iterator[Finding]:
    missing: dict[LinkRole, int] = {}
    for i, s in enumerate(ctx.fabric.switches):
        for j in range(len(s.ports)):
            _cable, role, is_missing = port_cable(ctx, (i, j))
            if is_missing:
                missing[role] = missing.get(role, 0) + 1
    for role, count in sorted(missing.items()):
        yield Finding(
            ("policy", "buffers", "cable_length_m"),
            f"no cable length for role {role.value} ({count} ports)",
            expected=f"cable_length_m.{role.value}",
            got=f"none (using {_DEFAULT_CABLES[role]} m)",
        )


@check(
    "FAB063",
    "buffer-figures-inconsistent",
    Severity.ERROR,
    area="buffers",
    title="Buffer figures fit in the total buffer",
    why="The headroom pool and a single queue are parts of the switch buffer; larger figures are typos (often "
    "KB vs bytes) and make the headroom and ECN checks meaningless.",
    fix="give buffer sizes in bytes, as the ASIC documentation states them",
)
def buffer_figures_inconsistent(ctx: Context) -> Iterator[Finding]:
    for i, s in enumerate(ctx.fabric.switches):
        b = s.buffer
        if b.total_bytes is None:
            continue
        for field, value in (("headroom_pool_bytes", b.headroom_pool_bytes), ("max_queue_bytes", b.max_queue_bytes)):
            if value is not None and value > b.total_bytes:
                yield Finding(
                    ("switches", i, "buffer", field),
                    f"{s.name}: {field} is larger than the total buffer",
                    expected=f"<= total_bytes {b.total_bytes}",
                    got=str(value),
                )


CHECKS = (
    headroom_exceeds_pool,
    lossless_mtu_exceeds_port,
    cable_length_missing,
    buffer_figures_inconsistent,
)
