"""NIC family checks: every NIC has a profile, runs a transport its family runs, and sets only knobs its family has.

The family comes from ``Nic.rdma_driver`` or ``Nic.driver`` (fabricd.intent.nics); what a family can set, in what
range, and what it cannot do are the profile's data, with the vendor document each comes from (`fabricd docs nics`).
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.intent.host import nic_transport
from fabricd.intent.nics import NicProfile, families_text, nic_profile
from fabricd.model import CongestionControl, Nic, Transport

from .base import Context, Finding, Loc, Severity, check, names

ROCE = (Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY)


def _nic_loc(i: int, j: int) -> Loc:
    return ("hosts", i, "nics", j)


def _profiles(ctx: Context) -> Iterator[tuple[int, int, str, Nic, NicProfile]]:
    for i, j, h, n in ctx.nics():
        p = nic_profile(n)
        if p is not None:
            yield i, j, h.name, n, p


@check(
    "FAB080",
    "nic-driver-unknown",
    Severity.ERROR,
    area="nic",
    title="Every NIC's driver has a NIC profile",
    why="The driver selects what fabricd writes on the host (DCB, RoCE ToS, congestion control, counters); a "
    "driver without a profile would get another family's paths, which fail at apply time or silently do nothing.",
    fix="set driver to the netdev's driver as `ethtool -i <if>` prints it (mlx5_core, ice, bnxt_en), or "
    "rdma_driver: rdma_rxe for Soft-RoCE on another netdev",
)
def nic_driver_unknown(ctx: Context) -> Iterator[Finding]:
    for i, j, _h, n in ctx.nics():
        if nic_profile(n) is None:
            field = "rdma_driver" if n.rdma_driver is not None else "driver"
            got = n.rdma_driver if n.rdma_driver is not None else n.driver
            yield Finding(
                (*_nic_loc(i, j), field),
                f"driver {got!r} has no NIC profile",
                expected=f"a driver of a known family: {families_text()}",
                got=repr(got),
            )


@check(
    "FAB081",
    "nic-transport-unsupported",
    Severity.ERROR,
    area="nic",
    title="Each NIC runs a transport its family supports",
    why="ConnectX runs RoCE and InfiniBand, E810 RoCEv2 and iWARP, Broadcom and Soft-RoCE only RoCEv2; a NIC "
    "asked for another transport cannot be configured for it.",
    fix="set the NIC's transport: to one its family runs (`fabricd docs nics`), or fix its driver",
)
def nic_transport_unsupported(ctx: Context) -> Iterator[Finding]:
    for i, j, _h, n, p in _profiles(ctx):
        t = nic_transport(ctx.fabric, n)
        if t not in p.transports:
            loc = (*_nic_loc(i, j), "transport") if n.transport is not None else ("policy", "transport")
            yield Finding(
                loc,
                f"{n.netdev} ({p.family}) cannot run {t.value}",
                expected=" or ".join(sorted(x.value for x in p.transports))
                or "none: fabricd reads this family's counters only (docs/nics.md)",
                got=t.value,
            )


def _dcqcn_on(ctx: Context, n: Nic) -> bool:
    return (
        ctx.policy.congestion_control == CongestionControl.DCQCN
        and n.rdma_device is not None
        and nic_transport(ctx.fabric, n) in ROCE
    )


@check(
    "FAB082",
    "nic-dcqcn-knob-missing",
    Severity.ERROR,
    area="nic",
    title="Every DCQCN parameter the policy sets exists on every NIC family that runs DCQCN",
    why="policy.dcqcn parameters are mlx5's (ecn/roce_rp|roce_np); other families name and scale their knobs "
    "differently or only at module load, so the value would be written to a path that does not exist.",
    fix="set the parameter per family instead: cc: on the NICs (e.g. in a group's nic defaults) with the "
    "family's own knob names (`fabricd docs nics`)",
)
def nic_dcqcn_knob_missing(ctx: Context) -> Iterator[Finding]:
    dc = ctx.policy.dcqcn
    params = [("rp", k) for k in dc.rp.model_dump(exclude_none=True)] + [
        ("np", k) for k in dc.np.model_dump(exclude_none=True)
    ]
    if not params:
        return
    for point, name in params:
        lacking: dict[str, tuple[NicProfile, list[str]]] = {}
        for _i, _j, host, n, p in _profiles(ctx):
            knob = p.tunables.get(name)
            if _dcqcn_on(ctx, n) and (knob is None or not knob.runtime):
                lacking.setdefault(p.family, (p, []))[1].append(f"{host}:{n.netdev}")
        for family, (p, where) in sorted(lacking.items()):
            alias = p.aliases.get(name)
            hint = None
            if alias is not None and alias in p.tunables:
                k = p.tunables[alias]
                hint = f"the nearest {family} knob is {alias} ({k.unit}), " + (
                    f"set as cc: {{{alias}: N}} on those NICs"
                    if k.runtime
                    else f"a module parameter fabricd cannot set at run time: `options irdma {alias}=N` in "
                    f"/etc/modprobe.d/irdma.conf; then remove {name} from policy.dcqcn and set it under "
                    "cc: on the NICs that have it"
                )
            yield Finding(
                ("policy", "dcqcn", point, name),
                f"{name} is not a run-time knob of {family} NICs ({names(where, limit=3)})",
                expected=f"a {family} knob: {', '.join(p.knob_names) or 'none'}",
                got=name,
                hint=hint,
            )


@check(
    "FAB083",
    "nic-cc-knob",
    Severity.ERROR,
    area="nic",
    title="A NIC's cc: knobs exist in its family, in range, and settable at run time",
    why="cc: writes the family's own congestion-control files; an unknown name, a value out of the driver's "
    "range or a load-time module parameter would fail at apply time.",
    fix="use a knob name and range from the family's profile (`fabricd docs nics`)",
)
def nic_cc_knob(ctx: Context) -> Iterator[Finding]:
    for i, j, _h, n, p in _profiles(ctx):
        for name, value in n.cc.items():
            loc = (*_nic_loc(i, j), "cc", name)
            knob = p.tunables.get(name)
            if knob is None:
                yield Finding(
                    loc,
                    f"{p.family} NICs have no congestion-control knob {name!r}",
                    expected=f"one of: {', '.join(p.knob_names) or 'none (this family has no cc knobs)'}",
                    got=name,
                )
            elif not knob.runtime:
                yield Finding(
                    loc,
                    f"{name} is a load-time module parameter of {p.family}",
                    expected="a run-time knob",
                    got=name,
                    hint=f"set it at module load (`options irdma {name}={value}` in "
                    "/etc/modprobe.d/irdma.conf) and remove it from cc:",
                )
            elif not knob.exists_for(nic_transport(ctx.fabric, n)):
                modes = " or ".join(sorted(t.value for t in knob.transports or ()))
                yield Finding(
                    loc,
                    f"{name} exists only when the NIC runs {modes}",
                    expected=f"a knob of {nic_transport(ctx.fabric, n).value} mode",
                    got=name,
                    hint="use the knob of the NIC's transport (irdma: iw_* in iWARP mode, roce_* in "
                    "RoCEv2 mode), or fix the NIC's transport",
                )
            elif not knob.in_range(value):
                yield Finding(
                    loc,
                    f"{name} out of range for {p.family}",
                    expected=f"{knob.minimum}-{knob.maximum} ({knob.unit})",
                    got=str(value),
                )


@check(
    "FAB084",
    "nic-tc-limits",
    Severity.ERROR,
    area="nic",
    title="The policy's traffic classes and PFC priorities fit each NIC family",
    why="E810 takes at most 4 TCs and one PFC priority, Broadcom one RoCE (PFC) priority; more cannot be "
    "programmed and the NIC would run with another map than the switches.",
    fix="use fewer traffic classes / PFC priorities, or other NICs for those hosts",
)
def nic_tc_limits(ctx: Context) -> Iterator[Finding]:
    n_tcs = len(ctx.policy.qos.traffic_classes)
    n_pfc = len(set(ctx.policy.pfc.priorities))
    seen: set[tuple[str, str]] = set()
    for i, _j, _h, n, p in _profiles(ctx):
        if p.dcb and n_tcs > p.max_tcs and (p.family, "tc") not in seen:
            seen.add((p.family, "tc"))
            yield Finding(
                ("policy", "qos", "traffic_classes"),
                f"{p.family} NICs take at most {p.max_tcs} traffic classes (first: {n.netdev} of hosts[{i}])",
                expected=f"<= {p.max_tcs}",
                got=str(n_tcs),
            )
        lossless = nic_transport(ctx.fabric, n) == Transport.ROCE_V2_LOSSLESS
        if lossless and 0 < p.max_pfc_priorities < n_pfc and (p.family, "pfc") not in seen:
            seen.add((p.family, "pfc"))
            yield Finding(
                ("policy", "pfc", "priorities"),
                f"{p.family} NICs take at most {p.max_pfc_priorities} PFC "
                f"priorit{'y' if p.max_pfc_priorities == 1 else 'ies'} (first: {n.netdev} of hosts[{i}])",
                expected=f"<= {p.max_pfc_priorities}",
                got=str(n_pfc),
            )


@check(
    "FAB085",
    "nic-cannot-do",
    Severity.WARNING,
    area="nic",
    title="What a NIC's family cannot enforce is said, not silently skipped",
    why="Soft-RoCE has no PFC, ECN or DCQCN; E810's irdma has no CNP DSCP knob. The policy still asks for them, "
    "so the host does something else than the switches expect.",
    fix="accept it for a lab, or set the NIC's transport (e.g. roce_v2_lossy) to what it can do",
)
def nic_cannot_do(ctx: Context) -> Iterator[Finding]:
    for i, j, _h, n, p in _profiles(ctx):
        t = nic_transport(ctx.fabric, n)
        if t == Transport.ROCE_V2_LOSSLESS and p.max_pfc_priorities == 0:
            yield Finding(
                (*_nic_loc(i, j), "driver"),
                f"{n.netdev} ({p.family}) has no PFC: the lossless policy is not enforced on this NIC",
                expected="a NIC with PFC, or transport: roce_v2_lossy",
                got=f"{p.family}, transport {t.value}",
            )
        if _dcqcn_on(ctx, n) and p.role("cnp_dscp") is None:
            cnp = f"DSCP {ctx.policy.qos.cnp.dscp} / priority {ctx.policy.qos.cnp.priority}"
            what = (
                "no ECN/DCQCN at all: it neither sends CNPs nor slows down on them"
                if not p.roles and not p.tunables
                else f"no CNP DSCP or CNP priority knob: its CNPs keep the firmware's marking, not {cnp}"
            )
            yield Finding(
                (*_nic_loc(i, j), "driver"),
                f"{n.netdev} ({p.family}) has {what}",
                expected=f"CNPs marked {cnp} (policy.qos.cnp)",
                got=f"{p.family}: not settable",
                hint=None
                if not p.roles and not p.tunables
                else "make sure the switches give the NIC's "
                "CNPs (firmware marking) a lossy strict queue too, or accept the difference",
            )


CHECKS = (
    nic_driver_unknown,
    nic_transport_unsupported,
    nic_dcqcn_knob_missing,
    nic_cc_knob,
    nic_tc_limits,
    nic_cannot_do,
)
