"""PFC, watchdog, transport and congestion-control checks, and host <-> switch consistency.

Watchdog timer ranges per platform are each pack's rules (``fabricd/nos/<id>/rules.py``), checked by FAB041 and
FAB042 in :mod:`fabricd.nos.checks`.

Host <-> switch PFC consistency: fabricd derives the PFC priorities, trust mode, DSCP map and CNP class of *both*
ends of every host link from the one fabric-wide policy (there is deliberately no per-host or per-port override),
so a PFC mismatch cannot be written in the intent. What can still differ between a NIC and its switch port is
checked here and in topology.py: the peer must be a switch port (FAB009), with the same speed (FAB012), a large
enough MTU (FAB013), the NIC's VLAN (FAB076) and a host role (FAB015); with trust pcp the NIC must be tagged
(FAB039). The *live* comparison of both ends is ``fabricd audit``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.model import CongestionControl, Transport

from .base import Context, Finding, Severity, check

WATCHDOG = ("policy", "pfc", "watchdog")


def _watchdog_active(ctx: Context) -> bool:
    """The watchdog is on with PFC priorities to watch, whatever the transport (``ctx.watchdog_active``, which the
    device-rule checks use, also needs a lossless one)."""
    return ctx.policy.pfc.watchdog.enabled and bool(ctx.pfc_priorities)


@check(
    "FAB040",
    "watchdog-poll-too-long",
    Severity.ERROR,
    area="pfc",
    title="Watchdog poll <= min(detection, restoration)",
    why="The watchdog samples every poll: a poll longer than a timer cannot honour it (SONiC rejects "
    "`pfcwd interval` above any port's detection or restoration time; timer accuracy is detect <= observed "
    "<= detect + poll).",
    fix="lower poll_ms or raise detection_ms / restoration_ms",
)
def watchdog_poll(ctx: Context) -> Iterator[Finding]:
    wd = ctx.policy.pfc.watchdog
    if not _watchdog_active(ctx):
        return
    limit = min(wd.detection_ms, wd.restoration_ms)
    if wd.poll_ms > limit:
        yield Finding(
            (*WATCHDOG, "poll_ms"),
            "watchdog poll is longer than a timer it must measure",
            expected=f"<= {limit} ms (min of detection {wd.detection_ms}, restoration {wd.restoration_ms})",
            got=f"{wd.poll_ms} ms",
        )


@check(
    "FAB043",
    "watchdog-disabled",
    Severity.WARNING,
    area="pfc",
    title="Lossless fabrics run the PFC watchdog",
    why="Without a watchdog one stuck NIC can pause the whole fabric indefinitely (the PFC storm of Guo et al. "
    "2016); every vendor recipe enables it.",
    fix="set policy.pfc.watchdog.enabled: true",
)
def watchdog_disabled(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and ctx.pfc_priorities and not ctx.policy.pfc.watchdog.enabled:
        yield Finding(
            (*WATCHDOG, "enabled"),
            "the PFC watchdog is disabled on a lossless fabric",
            expected="enabled: true",
            got="false",
        )


@check(
    "FAB044",
    "lossless-without-pfc",
    Severity.ERROR,
    area="pfc",
    title="A lossless transport has PFC priorities",
    why="roce_v2_lossless relies on PFC; with no PFC priority the fabric is lossy RoCE in disguise.",
    fix="list the RoCE priority in policy.pfc.priorities, or set transport: roce_v2_lossy",
)
def lossless_without_pfc(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and not ctx.pfc_priorities:
        yield Finding(
            ("policy", "pfc", "priorities"),
            "transport roce_v2_lossless but no PFC priority",
            expected=f"at least the RoCE priority {ctx.policy.qos.roce.priority}",
            got="[]",
        )


@check(
    "FAB045",
    "pfc-on-lossy-transport",
    Severity.WARNING,
    area="pfc",
    title="Lossy RoCE and iWARP run without PFC",
    why="Lossy RoCE and iWARP recover from loss themselves; PFC adds pause storms and deadlock risk for no gain.",
    fix="set policy.pfc.priorities: [] or use transport: roce_v2_lossless",
)
def pfc_on_lossy_transport(ctx: Context) -> Iterator[Finding]:
    t = ctx.policy.transport
    if t in (Transport.ROCE_V2_LOSSY, Transport.IWARP) and ctx.pfc_priorities:
        yield Finding(
            ("policy", "pfc", "priorities"),
            f"PFC is enabled with transport {t.value}",
            expected="[] (no PFC)",
            got=str(sorted(ctx.pfc_priorities)),
        )


@check(
    "FAB046",
    "infiniband-on-ethernet",
    Severity.WARNING,
    area="pfc",
    title="InfiniBand transport is not rendered on Ethernet switches",
    why="The switch platforms fabricd drives are Ethernet; with transport infiniband their RoCE QoS "
    "(PFC, ECN, DSCP map) does not apply to the RDMA traffic.",
    fix="use a RoCE transport for Ethernet fabrics",
)
def infiniband_on_ethernet(ctx: Context) -> Iterator[Finding]:
    if ctx.policy.transport == Transport.INFINIBAND and ctx.fabric.switches:
        yield Finding(
            ("policy", "transport"),
            "transport infiniband with Ethernet switches",
            expected="roce_v2_lossless or roce_v2_lossy",
            got=f"infiniband and {len(ctx.fabric.switches)} Ethernet switches",
        )


@check(
    "FAB047",
    "dcqcn-priorities",
    Severity.ERROR,
    area="pfc",
    title="DCQCN is enabled on the RoCE priority",
    why="The NIC reacts to CNPs only on priorities with roce_rp/enable set, and sends CNPs only for "
    "roce_np/enable ones: leaving out the RoCE priority disables congestion control.",
    fix="include the RoCE priority in dcqcn.rp_priorities and dcqcn.np_priorities (or leave them unset)",
)
def dcqcn_priorities(ctx: Context) -> Iterator[Finding]:
    if ctx.policy.congestion_control != CongestionControl.DCQCN:
        return
    prio = ctx.policy.qos.roce.priority
    dc = ctx.policy.dcqcn
    for field, value in (("rp_priorities", dc.rp_priorities), ("np_priorities", dc.np_priorities)):
        if value is not None and prio not in value:
            yield Finding(
                ("policy", "dcqcn", field),
                f"{field} leaves out the RoCE priority {prio}",
                expected=f"a list containing {prio}",
                got=str(value),
            )


@check(
    "FAB048",
    "no-congestion-control",
    Severity.WARNING,
    area="pfc",
    title="Lossless RoCE runs with a congestion control",
    why="PFC alone stops loss by spreading congestion upstream (head-of-line blocking, victim flows); DCQCN with "
    "ECN keeps queues short so PFC rarely fires.",
    fix="set congestion_control: dcqcn",
)
def no_congestion_control(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and ctx.policy.congestion_control == CongestionControl.NONE:
        yield Finding(
            ("policy", "congestion_control"), "lossless RoCE without congestion control", expected="dcqcn", got="none"
        )


CHECKS = (
    watchdog_poll,
    watchdog_disabled,
    lossless_without_pfc,
    pfc_on_lossy_transport,
    infiniband_on_ethernet,
    dcqcn_priorities,
    no_congestion_control,
)
