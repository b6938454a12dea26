"""Fabric-wide checks: PFC deadlock risk (:mod:`fabricd.intent.deadlock`) and connectivity between RDMA hosts."""

from __future__ import annotations

from collections.abc import Iterator

from .base import Context, Finding, Severity, check

MAX_FAILURE_FINDINGS = 10


@check(
    "FAB090",
    "pfc-deadlock-cycle",
    Severity.ERROR,
    area="deadlock",
    title="Lossless traffic has no cyclic buffer dependency",
    why="If lossless traffic can wait on buffers in a cycle (rings, valley paths down-then-up), the buffers can "
    "fill and pause each other forever: a PFC deadlock (Hu et al., HotNets 2016). The watchdog only breaks it "
    "by dropping after it formed.",
    fix="cable the fabric as a Clos (every leaf to every spine) so shortest paths are up-down, or remove the "
    "links that create the ring",
)
def pfc_deadlock_cycle(ctx: Context) -> Iterator[Finding]:
    if not ctx.deadlock_applies:
        return
    for cycle in ctx.deadlock.cycles:
        yield Finding(
            ("links", cycle.links[0]),
            f"PFC deadlock risk: lossless buffers depend on each other in a cycle of {len(cycle.hops)} switches",
            expected="no cyclic buffer dependency",
            got=cycle.describe(),
        )


@check(
    "FAB091",
    "pfc-deadlock-under-failure",
    Severity.ERROR,
    area="deadlock",
    title="No N-link failure creates a cyclic buffer dependency (validate --fail-links N)",
    why="Link failures reroute traffic onto valley paths; a fabric that is deadlock-free only while intact "
    "deadlocks exactly when it is already degraded.",
    fix="add redundant uplinks so that failures keep up-down paths, or accept the risk knowingly (the watchdog "
    "recovers by dropping)",
)
def pfc_deadlock_under_failure(ctx: Context) -> Iterator[Finding]:
    report = ctx.failures
    if report is None:
        return
    links = ctx.fabric.links
    for scenario, cycle in report.failing[:MAX_FAILURE_FINDINGS]:
        failed = ", ".join(f"{links[k].a}<->{links[k].b}" for k in scenario)
        yield Finding(
            ("links", scenario[0]),
            f"if {failed} fail{'s' if len(scenario) == 1 else ''}, lossless buffers depend on each other in a cycle",
            expected="no cyclic buffer dependency",
            got=cycle.describe(),
        )


@check(
    "FAB092",
    "fabric-partitioned",
    Severity.WARNING,
    area="deadlock",
    title="All RDMA hosts can reach each other",
    why="Switches with RDMA hosts in separate islands cannot exchange RDMA traffic; usually a missing link or a "
    "typo in a link endpoint.",
    fix="add the missing links between the islands",
)
def fabric_partitioned(ctx: Context) -> Iterator[Finding]:
    comps = ctx.deadlock.components
    if len(comps) <= 1:
        return
    desc = "; ".join(f"{{{', '.join(c[:4])}{', ...' if len(c) > 4 else ''}}}" for c in comps[:4])
    yield Finding(
        ("links",),
        f"the switches with RDMA hosts form {len(comps)} disconnected islands",
        expected="one connected fabric",
        got=desc,
    )


CHECKS = (
    pfc_deadlock_cycle,
    pfc_deadlock_under_failure,
    fabric_partitioned,
)
