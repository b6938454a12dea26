"""QoS checks: the DSCP map, the RoCE and CNP classes, lossless priorities and the traffic classes (queues).

Sources: the converged vendor recipe (RoCE DSCP 26 -> priority 3 lossless, CNP DSCP 48 -> priority 6
strict, at most 2 lossless classes), SONiC's AZURE map (classes 3 and 4), RFC 3168 (ECT(0) = 0b10 in the low ToS
bits) and mlnx_qos/dcb-ets (every priority maps to exactly one traffic class; ETS shares sum to 100 %).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabricd.model import ECT0, CongestionControl, Scheduler, TrustMode

from .base import Context, Finding, Severity, check, ids_and_names_repeated, rdma_nics_lacking, repeats

MAX_LOSSLESS_PRIORITIES = 2
QOS = ("policy", "qos")
PFC_PRIORITIES = ("policy", "pfc", "priorities")


@check(
    "FAB020",
    "too-many-lossless-priorities",
    Severity.ERROR,
    area="qos",
    title="At most 2 lossless priorities",
    why="Switch ASICs reserve headroom per lossless priority group; every vendor recipe (and SONiC's AZURE "
    "profile) stops at 2, and each one more multiplies headroom and deadlock exposure.",
    fix="keep PFC on the RoCE priority (and at most one storage priority)",
)
def too_many_lossless(ctx: Context) -> Iterator[Finding]:
    prios = sorted(ctx.pfc_priorities)
    if len(prios) > MAX_LOSSLESS_PRIORITIES:
        yield Finding(
            PFC_PRIORITIES, f"{len(prios)} lossless priorities", expected="at most 2", got=", ".join(map(str, prios))
        )


@check(
    "FAB021",
    "pfc-priority-repeated",
    Severity.WARNING,
    area="qos",
    title="No priority is listed twice in pfc.priorities",
    why="A repeated priority is harmless to the switch but usually a typo for another priority.",
    fix="list each lossless priority once",
)
def pfc_priority_repeated(ctx: Context) -> Iterator[Finding]:
    for prio, count in Counter(ctx.policy.pfc.priorities).items():
        if count > 1:
            yield Finding(
                PFC_PRIORITIES,
                f"priority {prio} is listed {count} times",
                expected="each priority once",
                got=str(ctx.policy.pfc.priorities),
            )


@check(
    "FAB022",
    "cnp-priority-lossless",
    Severity.ERROR,
    area="qos",
    title="The CNP priority is not lossless",
    why="CNPs must never be paused: a paused CNP queue delays the very signal that stops congestion, and "
    "every recipe keeps CNP lossy on a strict queue.",
    fix="remove the CNP priority from pfc.priorities or move CNP to another priority",
)
def cnp_priority_lossless(ctx: Context) -> Iterator[Finding]:
    cnp = ctx.policy.qos.cnp
    if cnp.priority in ctx.pfc_priorities:
        yield Finding(
            (*QOS, "cnp", "priority"),
            f"CNP priority {cnp.priority} has PFC enabled",
            expected="a priority not in pfc.priorities",
            got=str(cnp.priority),
        )


@check(
    "FAB023",
    "cnp-roce-same-priority",
    Severity.ERROR,
    area="qos",
    title="CNP and RoCE use different priorities",
    why="CNPs sharing the RoCE queue wait behind the data they are meant to slow down.",
    fix="put CNP on its own priority (6 in the standard recipe)",
)
def cnp_roce_same_priority(ctx: Context) -> Iterator[Finding]:
    yield from _cnp_reuses_roce(ctx, "priority", "priority")


def _cnp_reuses_roce(ctx: Context, field: str, label: str) -> Iterator[Finding]:
    """A finding when the CNP class has the RoCE class's ``field`` (``label`` in the message)."""
    roce, cnp = getattr(ctx.policy.qos.roce, field), getattr(ctx.policy.qos.cnp, field)
    if cnp == roce:
        yield Finding(
            (*QOS, "cnp", field), f"CNP uses the RoCE {label}", expected=f"a {label} other than {roce}", got=str(cnp)
        )


@check(
    "FAB024",
    "roce-dscp-not-lossless",
    Severity.ERROR,
    area="qos",
    title="The RoCE DSCP maps to a lossless priority",
    why="With a lossless transport, RoCE packets classified to a priority without PFC are dropped under "
    "congestion and go-back-N retransmission collapses throughput.",
    fix="map the RoCE DSCP to a PFC priority in qos.dscp_to_priority",
)
def roce_dscp_not_lossless(ctx: Context) -> Iterator[Finding]:
    q = ctx.policy.qos
    if not ctx.lossless or q.trust == TrustMode.PCP or not ctx.pfc_priorities:
        return
    prio = q.priority_of(q.roce.dscp)
    if prio not in ctx.pfc_priorities:
        loc = (*QOS, "dscp_to_priority", q.roce.dscp) if q.roce.dscp in q.dscp_to_priority else (*QOS, "roce", "dscp")
        yield Finding(
            loc,
            f"RoCE DSCP {q.roce.dscp} maps to priority {prio}, which is not lossless",
            expected=f"one of the PFC priorities {sorted(ctx.pfc_priorities)}",
            got=str(prio),
        )


@check(
    "FAB025",
    "roce-priority-map-mismatch",
    Severity.ERROR,
    area="qos",
    title="The RoCE class priority is the priority its DSCP maps to",
    why="Hosts tag RoCE with qos.roce.priority (PCP, DCQCN enables) while switches classify by the DSCP map; "
    "the two must agree or PFC pauses the wrong priority.",
    fix="make qos.dscp_to_priority[roce.dscp] equal roce.priority",
)
def roce_priority_map_mismatch(ctx: Context) -> Iterator[Finding]:
    yield from _dscp_maps_elsewhere(
        ctx, "roce", "RoCE", at="priority", expected="roce.priority {mapped} (or map DSCP {dscp} to {priority})"
    )


@check(
    "FAB026",
    "cnp-dscp-map-mismatch",
    Severity.ERROR,
    area="qos",
    title="The CNP DSCP maps to the CNP priority",
    why="NICs send CNPs with cnp.dscp (roce_np/cnp_dscp); switches queue them by the DSCP map. A mismatch puts "
    "CNPs in a data queue.",
    fix="map the CNP DSCP to cnp.priority in qos.dscp_to_priority",
)
def cnp_dscp_map_mismatch(ctx: Context) -> Iterator[Finding]:
    yield from _dscp_maps_elsewhere(ctx, "cnp", "CNP", at="dscp", expected="priority {priority} (cnp.priority)")


def _dscp_maps_elsewhere(ctx: Context, cls: str, label: str, *, at: str, expected: str) -> Iterator[Finding]:
    """A finding at ``qos.<cls>.<at>`` when the DSCP map sends the class's DSCP to another priority than the
    class's own. ``expected`` is formatted with ``dscp``, ``priority`` (the class's) and ``mapped`` (the map's);
    what the finding got is the value at ``at``: the class's priority, or the priority its DSCP maps to."""
    q = ctx.policy.qos
    dscp, priority = getattr(q, cls).dscp, getattr(q, cls).priority
    mapped = q.priority_of(dscp)
    if mapped != priority:
        yield Finding(
            (*QOS, cls, at),
            f"{label} DSCP {dscp} maps to priority {mapped}",
            expected=expected.format(dscp=dscp, priority=priority, mapped=mapped),
            got=str(priority if at == "priority" else mapped),
        )


@check(
    "FAB027",
    "roce-cnp-same-dscp",
    Severity.ERROR,
    area="qos",
    title="RoCE and CNP use different DSCPs",
    why="Switches cannot put CNPs on a strict queue and data on a lossless one if both carry the same DSCP.",
    fix="use distinct DSCPs (26 for RoCE, 48 for CNP in the standard recipe)",
)
def roce_cnp_same_dscp(ctx: Context) -> Iterator[Finding]:
    yield from _cnp_reuses_roce(ctx, "dscp", "DSCP")


@check(
    "FAB028",
    "dscp-map-duplicate",
    Severity.ERROR,
    area="qos",
    title="The DSCP map names each DSCP once",
    why="Keys such as 26 and '26' are different YAML keys but the same DSCP: one mapping silently wins.",
    fix="keep one entry per DSCP",
)
def dscp_map_duplicate(ctx: Context) -> Iterator[Finding]:
    raw = ctx.inventory.data.get("policy", {})
    raw = raw.get("qos", {}) if isinstance(raw, dict) else {}
    raw = raw.get("dscp_to_priority", {}) if isinstance(raw, dict) else {}
    if not isinstance(raw, dict):
        return
    keys = list(raw)
    dscps = [_as_int(key) for key in keys]
    for k, first in repeats(dscps):
        yield Finding(
            (*QOS, "dscp_to_priority", keys[k]),
            f"DSCP {dscps[k]} is mapped twice",
            expected="one entry per DSCP",
            got=f"{keys[first]!r} and {keys[k]!r}",
        )


def _as_int(key: object) -> int | None:
    """A YAML mapping key as the number it spells (26, '26', ' 26'); None when it spells none."""
    try:
        return int(str(key).strip())
    except ValueError:
        return None


@check(
    "FAB029",
    "priority-in-two-classes",
    Severity.ERROR,
    area="qos",
    title="A priority belongs to one traffic class",
    why="A priority maps to exactly one egress queue (dcb ets prio-tc); two classes claiming it is ambiguous.",
    fix="remove the priority from all but one class",
)
def priority_in_two_classes(ctx: Context) -> Iterator[Finding]:
    owner: dict[int, str] = {}
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        for prio in tc.priorities:
            if prio in owner and owner[prio] != tc.name:
                yield Finding(
                    (*QOS, "traffic_classes", t, "priorities"),
                    f"priority {prio} is already in traffic class {owner[prio]!r}",
                    expected="each priority in one class",
                    got=f"{prio} in {owner[prio]} and {tc.name}",
                )
            owner.setdefault(prio, tc.name)


@check(
    "FAB030",
    "priority-without-class",
    Severity.ERROR,
    area="qos",
    title="Every priority 0-7 belongs to a traffic class",
    why="Each of the 8 priorities needs an egress queue (dcb ets prio-tc maps all 8); an unassigned priority "
    "lands in a vendor default queue that fabricd does not control.",
    fix="add the priority to a traffic class (usually the default class 0)",
)
def priority_without_class(ctx: Context) -> Iterator[Finding]:
    covered = {p for tc in ctx.policy.qos.traffic_classes for p in tc.priorities}
    missing = [p for p in range(8) if p not in covered]
    if missing:
        yield Finding(
            (*QOS, "traffic_classes"),
            f"priorities {missing} belong to no traffic class",
            expected="all of 0-7 covered",
            got=f"{sorted(covered)} covered",
        )


@check(
    "FAB031",
    "duplicate-traffic-class",
    Severity.ERROR,
    area="qos",
    title="Traffic class ids and names are unique",
    why="A class id is a queue number; two definitions of one queue conflict.",
    fix="give each traffic class its own id and name",
)
def duplicate_traffic_class(ctx: Context) -> Iterator[Finding]:
    classes = ctx.policy.qos.traffic_classes
    yield from ids_and_names_repeated(classes, (*QOS, "traffic_classes"), "traffic class", unique_id="a unique id 0-7")


@check(
    "FAB032",
    "dwrr-weights-sum",
    Severity.ERROR,
    area="qos",
    title="DWRR weights sum to 100 %",
    why="ETS bandwidth shares are percentages of the link (mlnx_qos --tcbw, dcb ets tc-bw must sum to 100).",
    fix="adjust weight_percent of the DWRR classes so that they sum to 100",
)
def dwrr_weights_sum(ctx: Context) -> Iterator[Finding]:
    dwrr = [tc for tc in ctx.policy.qos.traffic_classes if tc.scheduler == Scheduler.DWRR]
    if not dwrr or any(tc.weight_percent is None for tc in dwrr):
        return  # FAB033 reports missing weights
    total = sum(tc.weight_percent or 0 for tc in dwrr)
    if total != 100:
        parts = " + ".join(f"{tc.name} {tc.weight_percent}" for tc in dwrr)
        yield Finding(
            (*QOS, "traffic_classes"), "DWRR weights do not sum to 100 %", expected="100", got=f"{parts} = {total}"
        )


@check(
    "FAB033",
    "scheduler-weight",
    Severity.ERROR,
    area="qos",
    title="DWRR classes have a weight; strict classes have none",
    why="A strict-priority queue ignores weights (a weight there signals a misunderstanding), and a DWRR queue "
    "without a weight gets a vendor default share.",
    fix="set weight_percent on DWRR classes and remove it from strict ones",
)
def scheduler_weight(ctx: Context) -> Iterator[Finding]:
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        if tc.scheduler == Scheduler.STRICT and tc.weight_percent is not None:
            yield Finding(
                (*QOS, "traffic_classes", t, "weight_percent"),
                f"strict-priority class {tc.name!r} has a DWRR weight",
                expected="no weight_percent",
                got=f"{tc.weight_percent} %",
            )
        elif tc.scheduler == Scheduler.DWRR and not tc.weight_percent:
            yield Finding(
                (*QOS, "traffic_classes", t),
                f"DWRR class {tc.name!r} has no weight",
                expected="weight_percent 1-100",
                got=str(tc.weight_percent),
            )


@check(
    "FAB034",
    "roce-tos-mismatch",
    Severity.ERROR,
    area="qos",
    title="The RoCE ToS is the RoCE DSCP << 2 with ECT(0)",
    why="RDMA-CM stamps default_roce_tos on every packet: its DSCP must be the one the switches classify as "
    "RoCE, and its ECN bits must be ECT(0) (0b10) or switches cannot mark it and DCQCN never reacts.",
    fix="remove qos.roce.tos (it defaults to DSCP << 2 | 2) or set it to that value",
)
def roce_tos_mismatch(ctx: Context) -> Iterator[Finding]:
    roce = ctx.policy.qos.roce
    if roce.tos is None:
        return
    want = (roce.dscp << 2) | ECT0
    if roce.tos >> 2 != roce.dscp:
        yield Finding(
            (*QOS, "roce", "tos"),
            f"ToS {roce.tos} carries DSCP {roce.tos >> 2}, not the RoCE DSCP {roce.dscp}",
            expected=str(want),
            got=str(roce.tos),
        )
    elif roce.tos & 0b11 != ECT0 and ctx.policy.congestion_control == CongestionControl.DCQCN:
        bits = {0: "Not-ECT (00)", 1: "ECT(1) (01)", 3: "CE (11)"}[roce.tos & 0b11]
        yield Finding(
            (*QOS, "roce", "tos"), f"ToS {roce.tos} has ECN bits {bits}", expected=f"{want} (ECT(0))", got=str(roce.tos)
        )


@check(
    "FAB035",
    "cnp-not-strict",
    Severity.ERROR,
    area="qos",
    title="A strict CNP class is scheduled strict",
    why="qos.cnp.strict promises CNPs a strict-priority queue; the traffic class carrying the CNP priority "
    "must actually be strict.",
    fix="set scheduler: strict on the class holding the CNP priority",
)
def cnp_not_strict(ctx: Context) -> Iterator[Finding]:
    q = ctx.policy.qos
    if not q.cnp.strict:
        return
    for t, tc in enumerate(q.traffic_classes):
        if q.cnp.priority in tc.priorities and tc.scheduler != Scheduler.STRICT:
            yield Finding(
                (*QOS, "traffic_classes", t, "scheduler"),
                f"class {tc.name!r} carries the CNP priority {q.cnp.priority}",
                expected="strict",
                got=tc.scheduler.value,
            )


@check(
    "FAB036",
    "lossless-class-mixes-lossy",
    Severity.ERROR,
    area="qos",
    title="A traffic class is all lossless or all lossy",
    why="A queue holding both a PFC priority and a lossy one pauses the lossy traffic (head-of-line blocking) "
    "and shares the lossless headroom with it.",
    fix="give each lossless priority its own traffic class",
)
def lossless_class_mixes_lossy(ctx: Context) -> Iterator[Finding]:
    pfc = ctx.pfc_priorities
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        lossless = [p for p in tc.priorities if p in pfc]
        lossy = [p for p in tc.priorities if p not in pfc]
        if lossless and lossy:
            yield Finding(
                (*QOS, "traffic_classes", t, "priorities"),
                f"class {tc.name!r} mixes lossless priorities {lossless} with lossy {lossy}",
                expected="only lossless or only lossy priorities",
                got=str(tc.priorities),
            )


@check(
    "FAB037",
    "default-priority-lossless",
    Severity.WARNING,
    area="qos",
    title="Unmarked traffic is not lossless",
    why="Every DSCP missing from the map goes to default_priority; if that is a PFC priority, all unmarked "
    "traffic (TCP, storage, management) becomes lossless and can pause the fabric.",
    fix="set qos.default_priority to a lossy priority (0)",
)
def default_priority_lossless(ctx: Context) -> Iterator[Finding]:
    q = ctx.policy.qos
    if q.trust == TrustMode.DSCP and q.default_priority in ctx.pfc_priorities:
        yield Finding(
            (*QOS, "default_priority"),
            f"default priority {q.default_priority} is lossless",
            expected="a priority without PFC",
            got=str(q.default_priority),
        )


@check(
    "FAB038",
    "lossless-priority-unused",
    Severity.WARNING,
    area="qos",
    title="Every lossless priority carries some DSCP",
    why="A PFC priority no DSCP maps to reserves headroom for nothing; usually the map and pfc.priorities "
    "drifted apart.",
    fix="map the intended DSCP to the priority, or remove it from pfc.priorities",
)
def lossless_priority_unused(ctx: Context) -> Iterator[Finding]:
    q = ctx.policy.qos
    if q.trust != TrustMode.DSCP:
        return
    used = set(q.dscp_to_priority.values()) | {q.default_priority}
    for prio in sorted(ctx.pfc_priorities - used):
        yield Finding(
            PFC_PRIORITIES,
            f"no DSCP maps to lossless priority {prio}",
            expected=f"a DSCP mapped to {prio} in qos.dscp_to_priority",
            got="none",
        )


@check(
    "FAB039",
    "pcp-trust-untagged",
    Severity.ERROR,
    area="qos",
    title="PCP trust needs VLAN-tagged RDMA NICs",
    why="The 802.1p priority (PCP) lives in the 802.1Q tag: untagged RDMA traffic has no PCP, so with "
    "trust pcp it all lands in priority 0.",
    fix="set vlan: on every RDMA NIC, or use trust: dscp",
)
def pcp_trust_untagged(ctx: Context) -> Iterator[Finding]:
    if ctx.policy.qos.trust != TrustMode.PCP:
        return
    yield from rdma_nics_lacking(ctx, "vlan", says="is untagged under trust pcp", expected="vlan: <id>")


CHECKS = (
    too_many_lossless,
    pfc_priority_repeated,
    cnp_priority_lossless,
    cnp_roce_same_priority,
    roce_dscp_not_lossless,
    roce_priority_map_mismatch,
    cnp_dscp_map_mismatch,
    roce_cnp_same_dscp,
    dscp_map_duplicate,
    priority_in_two_classes,
    priority_without_class,
    duplicate_traffic_class,
    dwrr_weights_sum,
    scheduler_weight,
    roce_tos_mismatch,
    cnp_not_strict,
    lossless_class_mixes_lossy,
    default_priority_lossless,
    lossless_priority_unused,
    pcp_trust_untagged,
)
