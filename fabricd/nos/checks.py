"""The device-rule checks: each platform pack's :class:`~fabricd.nos.rules.DeviceRules`, checked against the
inventory for the switches that run it (docs/checks.md, area ``platform``).

The pack declares (``fabricd/nos/<id>/rules.py``), this module checks, for every platform in use: port names
(FAB140), names and lengths the device stores (FAB141), MTU by port mode as fabricd renders the port (FAB142), the
PFC watchdog as the device's grid (FAB041 refuses what it cannot hold, FAB042 warns where the pack's own codec
rounds), and ECN thresholds in the device's unit (FAB143, from the pack's own ECN shaping). Warnings are located at
the inventory line that causes them, so what ``fabricd render`` would approximate is said by ``fabricd validate``
first. Checks only one NOS has stay in its pack (``fabricd/nos/<id>/checks.py``, the spec's ``checks``).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator

from fabricd.intent.checks.base import Check, Context, Finding, Severity, check, names
from fabricd.intent.switch import SwitchIntentBase, ecn_profile_of
from fabricd.intent.watchdog_timers import clamp
from fabricd.model import EcnProfile, Platform

from .registry import SPECS, SwitchIntentBuilder
from .rules import DeviceRules
from .spec import PlatformSpec

WATCHDOG = ("policy", "pfc", "watchdog")

_INTENTS: weakref.WeakKeyDictionary[Context, list[SwitchIntentBase | None]] = weakref.WeakKeyDictionary()


def switch_intents(ctx: Context) -> list[SwitchIntentBase | None]:
    """The switch intent of every switch (inventory order), built once per validation; None where the inventory
    is too broken to build one (another check reports why)."""
    got = _INTENTS.get(ctx)
    if got is None:
        builder = SwitchIntentBuilder(ctx.fabric)
        got = []
        for sw in ctx.fabric.switches:
            try:
                got.append(builder.build(sw))
            except Exception:
                got.append(None)
        _INTENTS[ctx] = got
    return got


def _rules(platform: str) -> DeviceRules:
    return SPECS[Platform(platform)].rules


def _title(platform: str) -> str:
    return SPECS[Platform(platform)].title


def _platforms(ctx: Context) -> Iterator[tuple[str, PlatformSpec, str]]:
    """(platform id, its spec, who: the id and its switches, as messages name them) of every platform in use."""
    for platform in ctx.used_platforms:
        yield platform, SPECS[Platform(platform)], f"{platform} ({names(ctx.platform_switches(platform))})"


# --- port names -----------------------------------------------------------------------------------------------


@check(
    "FAB140",
    "port-name",
    Severity.ERROR,
    area="platform",
    title="Ports are the NOS's own physical port names",
    why="fabricd configures PFC, the watchdog, MTU and every QoS binding per physical port. A LAG "
    "(PortChannel0001, Port-Channel1, port-channel1) or a front-panel alias used as a port renders rows and "
    "lines for a port the switch does not have (SONiC's YANG refuses a PORT row without its mandatory lanes), "
    "and the real member ports get no QoS.",
    fix="use the port's own name as the NOS spells it (the pack's port forms in docs/platforms.md); for a LAG, "
    "list its member ports",
)
def port_name(ctx: Context) -> Iterator[Finding]:
    for i, sw in enumerate(ctx.fabric.switches):
        rule = _rules(sw.platform.value).ports
        for j, port in enumerate(sw.ports):
            if rule.physical.fullmatch(port.name):
                continue
            title = _title(sw.platform.value)
            if rule.lag is not None and rule.lag.fullmatch(port.name):
                yield Finding(
                    ("switches", i, "ports", j, "name"),
                    f"{sw.name}: {port.name!r} is a {title} LAG, not a physical port",
                    expected=rule.forms,
                    got=port.name,
                    hint="list the LAG's member ports instead: PFC, the watchdog, buffers and QoS maps "
                    "are bound per member port",
                )
            else:
                yield Finding(
                    ("switches", i, "ports", j, "name"),
                    f"{sw.name}: {port.name!r} is not a {title} port name (an alias or another NOS's "
                    "name renders a port the switch does not have)",
                    expected=rule.forms,
                    got=port.name,
                )


# --- telemetry transport --------------------------------------------------------------------------------------


def _streamed() -> list[str]:
    """The platform ids whose pack maps its gNMI table to counters."""
    return sorted(p.value for p, spec in SPECS.items() if spec.gnmi is not None and spec.gnmi.mapped)


@check(
    "FAB145",
    "gnmi-transport-unmapped",
    Severity.ERROR,
    area="platform",
    title="A switch read over gNMI runs a NOS whose gNMI paths fabricd maps to counters",
    why="`telemetry.transport: gnmi` on a NOS whose pack records its gNMI paths but does not map them to counters "
    "would export nothing for that switch (the exporter refuses it only when it starts).",
    fix="leave `telemetry.transport` at ssh (the default) for that switch; docs/metrics.md lists which NOSes "
    "are read over gNMI",
)
def gnmi_transport_unmapped(ctx: Context) -> Iterator[Finding]:
    for i, sw in enumerate(ctx.fabric.switches):
        if sw.telemetry.transport != "gnmi":
            continue
        table = SPECS[sw.platform].gnmi
        if table is None or not table.mapped:
            yield Finding(
                ("switches", i, "telemetry", "transport"),
                f"{sw.name}: fabricd does not yet read {_title(sw.platform.value)} counters over gNMI "
                f"(fabricd/nos/{sw.platform.value}/gnmi.py records the paths, unmapped)",
                expected=f"ssh, or gnmi on a NOS whose gNMI table is mapped ({', '.join(_streamed())})",
                got="gnmi",
                hint="remove `telemetry: {transport: gnmi}` from this switch (or its group) so it is read over SSH",
            )


# --- names and lengths ----------------------------------------------------------------------------------------


@check(
    "FAB141",
    "device-name-length",
    Severity.ERROR,
    area="platform",
    title="VLAN names and port descriptions are ones the NOS that stores them takes",
    why="A name longer than the device takes is refused when the config is applied (NX-OS takes 32-character "
    "VLAN names unless `system vlan long-name`, which fabricd does not render); fabricd's own limit is not "
    "the device's.",
    fix="shorten the name to what the platform takes (docs/platforms.md, device rules)",
)
def device_name_length(ctx: Context) -> Iterator[Finding]:
    carried: dict[int, set[str]] = {}
    for si in switch_intents(ctx):
        if si is not None:
            for v in si.vlans:
                carried.setdefault(v.id, set()).add(si.platform.value)
    for k, vlan in enumerate(ctx.policy.vlans):
        for platform in sorted(carried.get(vlan.id, ())):
            rule = _rules(platform).vlan_name
            if rule is not None and len(vlan.name) > rule.max_length:
                hint = f"shorten it to at most {rule.max_length} characters"
                if rule.longer:
                    hint += f" ({rule.longer})"
                yield Finding(
                    ("policy", "vlans", k, "name"),
                    f"VLAN {vlan.id} name is too long for {_title(platform)}",
                    expected=f"at most {rule.max_length} characters ({rule.source.ref})",
                    got=f"{len(vlan.name)} characters",
                    hint=hint,
                )
    for i, sw in enumerate(ctx.fabric.switches):
        desc_rule = _rules(sw.platform.value).port_description
        if desc_rule is None:
            continue
        for j, port in enumerate(sw.ports):
            text = port.description
            if text is None:
                continue
            if len(text) > desc_rule.max_length:
                yield Finding(
                    ("switches", i, "ports", j, "description"),
                    f"{sw.name}: {port.name} description is too long for {_title(sw.platform.value)}",
                    expected=f"at most {desc_rule.max_length} characters",
                    got=str(len(text)),
                )
            elif desc_rule.pattern is not None and not desc_rule.pattern.fullmatch(text):
                yield Finding(
                    ("switches", i, "ports", j, "description"),
                    f"{sw.name}: {port.name} description is not one {_title(sw.platform.value)} takes",
                    expected=f"{desc_rule.forms} ({desc_rule.source.ref})",
                    got=repr(text),
                    hint="write it as one word, e.g. with '-' for spaces",
                )


# --- MTU by port mode -----------------------------------------------------------------------------------------


@check(
    "FAB142",
    "port-mtu-mode",
    Severity.ERROR,
    area="platform",
    title="Port MTUs are ones the NOS takes in the port's mode",
    why="A Nexus 9000 Layer 2 port (fabricd renders `switchport` on a port that carries a VLAN) takes only the "
    "default 1500 or the system jumbo MTU ('ERROR: MTU can only be default or system jumbo MTU', Cisco TechNote "
    "118994); routed ports take a range. One fabric-wide MTU such as 9214 then fails on every NX-OS switchport, "
    "and the model's default 9216 fails on every EOS port: EOS's `mtu` is the IP MTU, 68-9214 ('% Max MTU for "
    "Ethernet1 is 9214').",
    fix="on the NOS's Layer 2 ports use one of the MTUs it takes (NX-OS: 1500 or 9216), or take the port out of "
    "its VLANs; elsewhere stay in the NOS's range (EOS: at most 9214)",
)
def port_mtu_mode(ctx: Context) -> Iterator[Finding]:
    intents = switch_intents(ctx)
    for i, sw in enumerate(ctx.fabric.switches):
        rule = _rules(sw.platform.value).mtu
        si = intents[i]
        l2 = {p.name for p in si.ports if p.access_vlan is not None or p.tagged_vlans} if si is not None else set()
        for j, port in enumerate(sw.ports):
            lo, hi = rule.routed
            if port.name in l2 and rule.l2_values is not None:
                if port.mtu not in rule.l2_values:
                    src = rule.l2_source or rule.source
                    values = ", ".join(map(str, rule.l2_values))
                    yield Finding(
                        ("switches", i, "ports", j, "mtu"),
                        f"{sw.name}: {port.name} is a Layer 2 port (it carries a VLAN) on {_title(sw.platform.value)}",
                        expected=f"one of {values} ({src.ref.split(':')[0]})",
                        got=str(port.mtu),
                    )
            elif not lo <= port.mtu <= hi:
                yield Finding(
                    ("switches", i, "ports", j, "mtu"),
                    f"{sw.name}: {port.name} MTU is outside {_title(sw.platform.value)}'s range",
                    expected=f"{lo}-{hi} ({rule.source.ref.split(':')[0]})",
                    got=str(port.mtu),
                    hint=f"set mtu: {min(max(port.mtu, lo), hi)} on the port (or in the `port:` defaults of a group "
                    f"only {_title(sw.platform.value)} switches list), and the same on the other end of its links",
                )


# --- the PFC watchdog -----------------------------------------------------------------------------------------


def _grid_findings(ctx: Context, platform: str, who: str) -> Iterator[tuple[str, Finding]]:
    """(policy field, finding) for every timer the platform's grid cannot hold."""
    wd = ctx.policy.pfc.watchdog
    grid = _rules(platform).watchdog
    outside = _outside_range("poll_ms", wd.poll_ms, grid.poll_ms, who)
    if outside is not None:
        yield "poll_ms", outside
    poll = clamp(wd.poll_ms, grid.poll_ms) if grid.poll_ms is not None else wd.poll_ms
    for name, value, rng, polls in (
        ("detection_ms", wd.detection_ms, grid.detection_ms, grid.detect_polls),
        ("restoration_ms", wd.restoration_ms, grid.restoration_ms, grid.restore_polls),
    ):
        outside = _outside_range(name, value, rng, who)
        if outside is not None:
            yield name, outside
        elif polls is not None and poll > 0:
            off_grid = _off_grid(name, value, poll, polls, poll_range=grid.poll_ms, who=who)
            if off_grid is not None:
                yield name, off_grid


def _outside_range(name: str, value: int, rng: tuple[int, int] | None, who: str) -> Finding | None:
    """The finding for a timer outside the platform's range (None: the platform has no range for it)."""
    if rng is None or rng[0] <= value <= rng[1]:
        return None
    return Finding(
        (*WATCHDOG, name), f"{name} is outside the range of {who}", expected=f"{rng[0]}-{rng[1]} ms", got=f"{value} ms"
    )


def _off_grid(
    name: str, value: int, poll: int, polls: tuple[int, int], *, poll_range: tuple[int, int] | None, who: str
) -> Finding | None:
    """The finding for a timer that is not a number of polls the platform holds (``polls``: its multiplier's
    range; ``poll_range``: the poll_ms range, for the hint)."""
    lo_n, hi_n = polls
    n = (value + poll // 2) // poll
    if lo_n <= n <= hi_n:
        return None
    nearest = clamp(n, polls) * poll
    hint = f"use {name}: {nearest} ({clamp(n, polls)} x poll {poll} ms)"
    if n > hi_n and poll_range is not None:
        need = -(-value // hi_n)
        if need <= poll_range[1] and value % need == 0:
            hint += f", or poll_ms: {need} ({value} = {hi_n} x {need} ms)"
        elif need <= poll_range[1]:
            hint += f", or raise poll_ms to at least {need}"
    return Finding(
        (*WATCHDOG, name),
        f"{name} is not a value {who} can express at a {poll} ms poll: it would render as {nearest} ms",
        expected=f"{lo_n}-{hi_n} polls of {poll} ms = {lo_n * poll}-{hi_n * poll} ms",
        got=f"{value} ms",
        hint=hint,
    )


@check(
    "FAB041",
    "watchdog-platform-range",
    Severity.ERROR,
    area="pfc",
    title="Watchdog timers are on every used platform's grid",
    why="A timer outside a platform's range, or a number of polls its multiplier cannot hold (NX-OS detection "
    "is 1-40 polls: 5000 ms at a 100 ms poll would render as 4000 ms), is refused when pushed or silently "
    "clamped, so switches of different OSes would detect storms at different times.",
    fix="pick timers inside the ranges of every platform in the fabric (`fabricd docs checks`), or change poll_ms "
    "so that the timer is a number of polls the platform holds",
)
def watchdog_platform_range(ctx: Context) -> Iterator[Finding]:
    if not ctx.watchdog_active:
        return
    for platform, _spec, who in _platforms(ctx):
        for _name, finding in _grid_findings(ctx, platform, who):
            yield finding


@check(
    "FAB042",
    "watchdog-granularity",
    Severity.WARNING,
    area="pfc",
    title="Watchdog timers are values the platform expresses exactly",
    why="NX-OS counts detection and restoration in polls of its watchdog interval, EOS takes seconds with 2 "
    "decimals (10 ms steps) and at most half the smaller timer as its poll, NVUE counts detection in polls "
    "(robustness); the pack's codec rounds other values, so the switch acts at another time than the intent "
    "says. Each warning is what `fabricd render` would write instead.",
    fix="use the value the warning says the platform renders, or one that is a whole number of its steps",
)
def watchdog_granularity(ctx: Context) -> Iterator[Finding]:
    wd = ctx.policy.pfc.watchdog
    if not ctx.watchdog_active:
        return
    for platform, spec, who in _platforms(ctx):
        refused = {name for name, _f in _grid_findings(ctx, platform, who)}
        actions: list[str] = []

        def warn(field: str, intended: str, rendered: str, reason: str, _a: list[str] = actions) -> None:
            if field == "watchdog.action":
                _a.append(f"{rendered}: {reason}")

        done = spec.watchdog.to_ms(spec.watchdog.forward(wd, warn))
        grid = spec.rules.watchdog
        for name, got, want in (
            ("detection_ms", done.detection_ms, wd.detection_ms),
            ("restoration_ms", done.restoration_ms, wd.restoration_ms),
            ("poll_ms", done.poll_ms, wd.poll_ms),
        ):
            if got == want or name in refused:
                continue
            if name == "restoration_ms" and grid.restoration_ms is None and grid.restore_polls is None:
                continue  # no knob: the platform restores after one clean poll (docs/platforms.md, coverage)
            yield Finding(
                (*WATCHDOG, name),
                f"{name} renders as {got} ms on {who}",
                expected=f"a value {platform} expresses exactly",
                got=f"{want} ms (renders as {got} ms)",
                hint=f"use {name}: {got}",
            )
        for text in actions:
            if not (grid.refuses_other_actions and wd.action.value not in grid.actions):
                yield Finding(
                    (*WATCHDOG, "action"),
                    f"action {wd.action.value} renders as {text} on {who}",
                    expected=" or ".join(grid.actions),
                    got=wd.action.value,
                )


# --- ECN units ------------------------------------------------------------------------------------------------

_ECN_FIELD = {
    "min_threshold": "min_bytes",
    "max_threshold": "max_bytes",
    "probability_percent": "max_mark_probability_percent",
}


def _bound_profiles(ctx: Context) -> list[tuple[int, int, EcnProfile]]:
    """(profile index, traffic class id, profile) of every class the switch intent marks (``ecn_profile_of``)."""
    out = []
    for tc in ctx.policy.qos.traffic_classes:
        profile = ecn_profile_of(ctx.fabric, tc)
        if profile is not None:
            k = next(k for k, p in enumerate(ctx.policy.ecn_profiles) if p is profile)
            out.append((k, tc.id, profile))
    return out


@check(
    "FAB143",
    "ecn-device-units",
    Severity.WARNING,
    area="ecn",
    title="ECN thresholds are whole units of the NOS",
    why="NX-OS takes WRED/ECN thresholds in kbytes and EOS/NVUE floor a 0 threshold or probability at 1; the "
    "pack's ECN shaping rounds, so the switch marks at another depth than the intent says. Each warning is what "
    "`fabricd render` would write instead.",
    fix="give thresholds that are whole units of every platform in the fabric (NX-OS: multiples of 1000 bytes)",
)
def ecn_device_units(ctx: Context) -> Iterator[Finding]:
    seen: set[tuple[int, str, str]] = set()
    bound = _bound_profiles(ctx)
    for platform, spec, who in _platforms(ctx):
        for k, queue, profile in bound:
            notes: list[tuple[str, str, str, str]] = []
            spec.intent.ecn(profile, queue, lambda *a, _n=notes: _n.append(a))
            for field, intended, rendered, reason in notes:
                name = _ECN_FIELD.get(field.rsplit(".", 1)[-1], "min_bytes")
                if (k, name, platform) in seen:
                    continue
                seen.add((k, name, platform))
                yield Finding(
                    ("policy", "ecn_profiles", k, name),
                    f"ECN profile {profile.name!r} renders {rendered} on {who}: {reason}",
                    expected=f"a whole {spec.rules.ecn.unit_bytes}-byte unit"
                    if spec.rules.ecn.unit_bytes > 1
                    else "a value the platform takes",
                    got=intended,
                )


# --- the rest of what render would approximate ------------------------------------------------------------------

_PORT_FIELD = re.compile(r"ports\[(?P<port>[^\]]+)\]\.(?P<rest>.+)")


@check(
    "FAB144",
    "render-approximation",
    Severity.WARNING,
    area="platform",
    title="What the render would approximate for a port or a switch is said at its line",
    why="Besides the watchdog (FAB042) and ECN (FAB143), a pack rounds or drops a few per-port and per-switch "
    "values: SONiC and NVUE take whole-metre cable lengths, a port untagged in one VLAN and in another too is "
    "tagged in all, NVUE sizes no lossless pool without the switch's buffer figures. Each warning is what "
    "`fabricd render` would write instead.",
    fix="give the value the platform takes (the warning says what it renders), or accept the approximation",
)
def render_approximation(ctx: Context) -> Iterator[Finding]:
    for i, si in enumerate(switch_intents(ctx)):
        if si is None:
            continue
        sw = ctx.fabric.switches[i]
        ports = {p.name: j for j, p in enumerate(sw.ports)}
        for w in si.warnings:
            m = _PORT_FIELD.fullmatch(w.field)
            if m is not None and m.group("port") in ports:
                loc: tuple[str | int, ...] = ("switches", i, "ports", ports[m.group("port")])
                what = f"{sw.name}: {m.group('port')} {m.group('rest')}"
            elif w.field == "lossless_pool_percent":
                loc = ("switches", i, "buffer")
                what = f"{sw.name}: the lossless traffic pool"
            else:
                continue  # FAB042/FAB143/FAB032 say it, or a `note` of the coverage matrix (render only)
            rendered = "nothing" if w.rendered == "-" else w.rendered
            yield Finding(
                loc,
                f"{what} renders {rendered} instead of {w.intended} on {_title(sw.platform.value)}: {w.reason}",
                expected=w.intended,
                got=f"renders {rendered}",
            )


CHECKS: tuple[Check, ...] = (
    watchdog_platform_range,
    watchdog_granularity,
    port_name,
    device_name_length,
    port_mtu_mode,
    ecn_device_units,
    render_approximation,
    gnmi_transport_unmapped,
)
"""The device-rule checks (every pack's rules); each pack's own checks are its spec's ``checks``."""
