"""ECN/WRED checks: thresholds, their fit in the queue buffer, and the binding of profiles to traffic classes.

Profiles are bound in two places that must agree: ``traffic_classes[].ecn_profile`` (a name) and
``ecn_profiles[].traffic_classes`` (class ids). Threshold sources: NVIDIA 150 KB / 1500 KB / 100 %, Cisco AI
150 KB / 3000 KB / 7 %, SONiC AZURE_LOSSLESS 1 MB / 2 MB / 5 %; sonic-utilities ``ecnconfig``
rejects min > max.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from fabricd.model import CongestionControl, Transport

from .base import Context, Finding, Severity, check, names, repeats

PROFILES = ("policy", "ecn_profiles")
CLASSES = ("policy", "qos", "traffic_classes")


@check(
    "FAB050",
    "ecn-min-not-below-max",
    Severity.ERROR,
    area="ecn",
    title="ECN min threshold < max threshold",
    why="Marking ramps from min_bytes to max_bytes; min >= max leaves no ramp (ecnconfig rejects min > max) and "
    "marks everything at once, which makes DCQCN oscillate.",
    fix="lower min_bytes or raise max_bytes (NVIDIA: 150000 / 1500000)",
)
def ecn_min_max(ctx: Context) -> Iterator[Finding]:
    for k, p in enumerate(ctx.policy.ecn_profiles):
        if p.min_bytes >= p.max_bytes:
            yield Finding(
                (*PROFILES, k, "min_bytes"),
                f"ECN profile {p.name!r}: min threshold is not below max",
                expected=f"min_bytes < max_bytes ({p.max_bytes})",
                got=str(p.min_bytes),
            )


@check(
    "FAB051",
    "ecn-max-exceeds-queue",
    Severity.ERROR,
    area="ecn",
    title="ECN max threshold fits the queue buffer",
    why="A threshold the queue can never reach never marks: DCQCN stays silent and PFC does all the work.",
    fix="lower max_bytes below the switches' buffer.max_queue_bytes (or fix that figure)",
)
def ecn_max_exceeds_queue(ctx: Context) -> Iterator[Finding]:
    limits: dict[int, list[str]] = {}
    for s in ctx.fabric.switches:
        if s.buffer.max_queue_bytes is not None:
            limits.setdefault(s.buffer.max_queue_bytes, []).append(s.name)
    if not limits:
        return
    for k, p in enumerate(ctx.policy.ecn_profiles):
        too_small = sorted((limit, sw) for limit, sws in limits.items() if p.max_bytes > limit for sw in sws)
        if too_small:
            smallest = too_small[0][0]
            yield Finding(
                (*PROFILES, k, "max_bytes"),
                f"ECN profile {p.name!r}: max threshold exceeds the queue buffer of {names(sw for _, sw in too_small)}",
                expected=f"<= {smallest} bytes (buffer.max_queue_bytes)",
                got=f"{p.max_bytes} bytes",
            )


@check(
    "FAB052",
    "ecn-profile-unknown",
    Severity.ERROR,
    area="ecn",
    title="Every traffic class's ecn_profile exists",
    why="A class naming a missing profile gets no ECN marking at all.",
    fix="define the profile under policy.ecn_profiles or fix the name",
)
def ecn_profile_unknown(ctx: Context) -> Iterator[Finding]:
    known = [p.name for p in ctx.policy.ecn_profiles]
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        if tc.ecn_profile is not None and tc.ecn_profile not in known:
            close = difflib.get_close_matches(tc.ecn_profile, known, n=1)
            yield Finding(
                (*CLASSES, t, "ecn_profile"),
                f"class {tc.name!r} names unknown ECN profile {tc.ecn_profile!r}",
                expected="one of " + (", ".join(known) or "(no profiles)"),
                got=repr(tc.ecn_profile),
                hint=f"did you mean {close[0]!r}?" if close else None,
            )


@check(
    "FAB053",
    "ecn-class-unknown",
    Severity.ERROR,
    area="ecn",
    title="Every traffic class an ECN profile lists exists",
    why="Binding a profile to a queue that no class defines marks a queue fabricd does not schedule.",
    fix="list existing traffic class ids in ecn_profiles[].traffic_classes",
)
def ecn_class_unknown(ctx: Context) -> Iterator[Finding]:
    ids = {tc.id for tc in ctx.policy.qos.traffic_classes}
    for k, p in enumerate(ctx.policy.ecn_profiles):
        for m, tc_id in enumerate(p.traffic_classes):
            if tc_id not in ids:
                yield Finding(
                    (*PROFILES, k, "traffic_classes", m),
                    f"ECN profile {p.name!r} lists traffic class {tc_id}, which is not defined",
                    expected=f"one of {sorted(ids)}",
                    got=str(tc_id),
                )


@check(
    "FAB054",
    "ecn-binding-mismatch",
    Severity.ERROR,
    area="ecn",
    title="Class -> profile and profile -> class bindings agree",
    why="The class's ecn_profile and the profile's traffic_classes say the same thing twice; when they differ, "
    "renderers disagree about which queue is marked.",
    fix="make traffic_classes[].ecn_profile and ecn_profiles[].traffic_classes name each other",
)
def ecn_binding_mismatch(ctx: Context) -> Iterator[Finding]:
    by_name = {p.name: p for p in ctx.policy.ecn_profiles}
    classes = {tc.id: tc for tc in ctx.policy.qos.traffic_classes}
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        prof = by_name.get(tc.ecn_profile) if tc.ecn_profile else None
        if prof is not None and tc.id not in prof.traffic_classes:
            yield Finding(
                (*CLASSES, t, "ecn_profile"),
                f"class {tc.name!r} (id {tc.id}) names profile {prof.name!r}, which does not list it",
                expected=f"{prof.name}.traffic_classes containing {tc.id}",
                got=str(prof.traffic_classes),
            )
    for k, p in enumerate(ctx.policy.ecn_profiles):
        for m, tc_id in enumerate(p.traffic_classes):
            listed = classes.get(tc_id)
            if listed is not None and listed.ecn_profile != p.name:
                yield Finding(
                    (*PROFILES, k, "traffic_classes", m),
                    f"profile {p.name!r} lists class {tc_id} "
                    f"({listed.name}), whose ecn_profile is {listed.ecn_profile or 'not set'}",
                    expected=f"traffic class {tc_id} with ecn_profile: {p.name}",
                    got=f"ecn_profile: {listed.ecn_profile or 'none'}",
                )


@check(
    "FAB055",
    "roce-class-without-ecn",
    Severity.ERROR,
    area="ecn",
    title="The RoCE traffic class has an ECN profile",
    why="DCQCN needs switches to ECN-mark the RoCE queue; lossless RoCE without ECN relies on PFC alone and "
    "lossy RoCE without ECN has no congestion signal before loss.",
    fix="set ecn_profile on the traffic class carrying the RoCE priority",
)
def roce_class_without_ecn(ctx: Context) -> Iterator[Finding]:
    transport = ctx.policy.transport
    if transport not in (Transport.ROCE_V2_LOSSLESS, Transport.ROCE_V2_LOSSY):
        return
    if transport == Transport.ROCE_V2_LOSSY and ctx.policy.congestion_control != CongestionControl.DCQCN:
        return
    prio = ctx.policy.qos.roce.priority
    marked = {tc_id for p in ctx.policy.ecn_profiles for tc_id in p.traffic_classes}
    for t, tc in enumerate(ctx.policy.qos.traffic_classes):
        if prio in tc.priorities and tc.ecn_profile is None and tc.id not in marked:
            yield Finding(
                (*CLASSES, t),
                f"class {tc.name!r} carries RoCE (priority {prio}) without ECN marking",
                expected="ecn_profile: <name>",
                got="none",
            )
            return


@check(
    "FAB056",
    "duplicate-ecn-profile",
    Severity.ERROR,
    area="ecn",
    title="ECN profile names are unique",
    why="Classes refer to profiles by name; a second definition would be silently ignored.",
    fix="rename or remove one of the profiles",
)
def duplicate_ecn_profile(ctx: Context) -> Iterator[Finding]:
    profiles = ctx.policy.ecn_profiles
    for k, _first in repeats(p.name for p in profiles):
        yield Finding(
            (*PROFILES, k, "name"),
            f"ECN profile {profiles[k].name!r} is defined twice",
            expected="unique names",
            got=f"{profiles[k].name!r} again",
        )


@check(
    "FAB057",
    "ecn-probability-zero",
    Severity.WARNING,
    area="ecn",
    title="ECN marks with a probability above 0",
    why="max_mark_probability_percent 0 never marks below max_bytes: the profile is inert.",
    fix="set max_mark_probability_percent (NVIDIA 100, Cisco 7, SONiC 5)",
)
def ecn_probability_zero(ctx: Context) -> Iterator[Finding]:
    for k, p in enumerate(ctx.policy.ecn_profiles):
        if p.max_mark_probability_percent == 0:
            yield Finding(
                (*PROFILES, k, "max_mark_probability_percent"),
                f"ECN profile {p.name!r} never marks",
                expected="1-100",
                got="0",
            )


@check(
    "FAB058",
    "ecn-profile-unused",
    Severity.WARNING,
    area="ecn",
    title="Every ECN profile is used",
    why="A profile no class uses is dead configuration, often a renamed profile whose classes were not updated.",
    fix="bind it to a traffic class or remove it",
)
def ecn_profile_unused(ctx: Context) -> Iterator[Finding]:
    used = {tc.ecn_profile for tc in ctx.policy.qos.traffic_classes}
    for k, p in enumerate(ctx.policy.ecn_profiles):
        if p.name not in used and not p.traffic_classes:
            yield Finding(
                (*PROFILES, k, "name"),
                f"ECN profile {p.name!r} is not used by any traffic class",
                expected="a class with ecn_profile: " + p.name,
                got="none",
            )


@check(
    "FAB059",
    "ecn-threshold-units",
    Severity.WARNING,
    area="ecn",
    title="ECN thresholds are at least one frame (bytes, not kbytes)",
    why="Thresholds are bytes. A threshold below one MTU-sized frame marks nearly every packet as soon as one "
    "frame queues: `min_bytes: 150` (150 KB typed as kbytes) renders `minimum-threshold 150 bytes` and DCQCN "
    "throttles every flow.",
    fix="write the thresholds in bytes, e.g. min_bytes: 150000 for 150 KB",
)
def ecn_threshold_units(ctx: Context) -> Iterator[Finding]:
    mtu = max((p.mtu for s in ctx.fabric.switches for p in s.ports), default=1500)
    for k, p in enumerate(ctx.policy.ecn_profiles):
        for field in ("min_bytes", "max_bytes"):
            value = getattr(p, field)
            if value < mtu:
                guess = f"; if it is kbytes, {field}: {value * 1000}" if value * 1000 >= mtu else ""
                yield Finding(
                    ("policy", "ecn_profiles", k, field),
                    f"ECN profile {p.name!r} {field} is less than one {mtu}-byte frame (the largest port "
                    "MTU): it would mark nearly every packet",
                    expected=f">= {mtu} bytes",
                    got=f"{value} bytes",
                    hint=f"thresholds are bytes{guess}",
                )


CHECKS = (
    ecn_min_max,
    ecn_max_exceeds_queue,
    ecn_profile_unknown,
    ecn_class_unknown,
    ecn_binding_mismatch,
    roce_class_without_ecn,
    duplicate_ecn_profile,
    ecn_probability_zero,
    ecn_profile_unused,
    ecn_threshold_units,
)
