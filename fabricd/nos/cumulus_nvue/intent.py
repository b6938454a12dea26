"""NVIDIA Cumulus NVUE intent shaping: ``nv set qos ...``, per-port PFC profiles, pools, MTU and bridge VLANs."""

from __future__ import annotations

import math

from pydantic import Field

from fabricd.intent.render_warnings import WarningSink
from fabricd.intent.switch import (
    EcnIntent,
    IntentShaping,
    PolicyParts,
    PortIntent,
    ShapeContext,
    SwitchIntentBase,
    bytes_ecn,
    cable_text,
    label,
)
from fabricd.intent.watchdog_timers import Warn
from fabricd.model import EcnProfile, Platform, Switch
from fabricd.model.types import Model

from .watchdog import NvueWatchdog, nvue_watchdog

_label = label

NVUE_BRIDGE = "br_default"
"""The NVUE bridge domain VLANs are added to (Cumulus's default single VLAN-aware bridge)."""


class NvuePfcProfile(Model):
    """An NVUE PFC profile (``nv set qos pfc <name>``) for ports with the same headroom."""

    name: str = _label("profile name")
    cable_length_m: int = Field(description="cable-length, whole metres 1-100000")
    xoff_bytes: int
    xon_bytes: int
    port_buffer_bytes: int


class NvueSwitchIntent(SwitchIntentBase):
    """NVIDIA Cumulus NVUE: ``nv set qos ...``, per-port PFC profiles, interface MTU and bridge VLANs."""

    platform: Platform = Platform.CUMULUS_NVUE
    bridge: str = _label("bridge domain")
    pfc_profiles: list[NvuePfcProfile]
    lossless_pool_percent: int | None = Field(description="traffic-pool default-lossless memory-percent")
    lossy_pool_percent: int | None = Field(description="traffic-pool default-lossy memory-percent")
    watchdog: NvueWatchdog | None


def ecn(profile: EcnProfile, queue: int, warn: Warn) -> EcnIntent:
    prob = profile.max_mark_probability_percent
    if prob < 1:
        warn(f"queues[{queue}].ecn.probability_percent", f"{prob} %", "1 %", "NVUE probability is 1-100")
        return EcnIntent(
            profile=profile.name,
            min_threshold=profile.min_bytes,
            max_threshold=profile.max_bytes,
            unit="bytes",
            probability_percent=1,
        )
    return bytes_ecn(profile, queue, warn)


def _nvue_unused_queues(parts: PolicyParts, sink: WarningSink) -> None:
    unused = [q for q in parts.queues if not q.used]
    if not unused:
        return
    carrying = [q.id for q in unused if q.priorities]
    sink(
        f"queues[{','.join(str(q.id) for q in unused)}].scheduler",
        "unused (no DWRR share)",
        "mode strict",
        "NVUE dwrr takes bw-percent 1-100 (0 means strict), and a queue left out keeps Cumulus' default "
        "12-13 % share, pushing the shares past 100 %; "
        + (
            f"queues {','.join(map(str, carrying))} carry priorities mapped to no class"
            if carrying
            else "no priority maps to these queues"
        ),
    )


def _nvue_profiles(ports: list[PortIntent], sink: WarningSink) -> list[NvuePfcProfile]:
    seen: dict[str, NvuePfcProfile] = {}
    for p in ports:
        h = p.headroom
        if h is None or h.profile in seen:
            continue
        cable = max(1, min(100_000, math.floor(h.cable_m + 0.5)))
        if cable != h.cable_m:
            sink(
                f"ports[{p.name}].headroom.cable_m",
                f"{cable_text(h.cable_m)} m",
                f"{cable} m",
                "NVUE cable-length takes whole metres, 1-100000",
            )
        seen[h.profile] = NvuePfcProfile(
            name=h.profile,
            cable_length_m=cable,
            xoff_bytes=h.xoff_bytes,
            xon_bytes=h.xon_bytes,
            port_buffer_bytes=h.size_bytes,
        )
    return list(seen.values())


def _nvue_pools(switch: Switch, lossless: bool, sink: WarningSink) -> tuple[int | None, int | None]:
    if not lossless:
        return None, None
    total, pool = switch.buffer.total_bytes, switch.buffer.headroom_pool_bytes
    if not total or pool is None:
        sink(
            "lossless_pool_percent",
            "a lossless traffic pool",
            "-",
            "switch.buffer.total_bytes and headroom_pool_bytes are needed to size NVUE's default-lossless pool",
        )
        return None, None
    pct = max(1, min(99, math.ceil(pool * 100 / total)))
    return pct, 100 - pct


def finish(ctx: ShapeContext) -> NvueSwitchIntent:
    wd = ctx.parts.watchdog
    assert wd is None or isinstance(wd, NvueWatchdog)
    sink = ctx.sink
    for v in ctx.vlans:
        sink(f"vlans[{v.id}].name", v.name, "-", "NVUE bridge VLANs have no name")
    _nvue_unused_queues(ctx.parts, sink)
    profiles = _nvue_profiles(ctx.ports, sink)
    lossless_pct, lossy_pct = _nvue_pools(ctx.switch, bool(ctx.parts.lossless_priorities), sink)
    return NvueSwitchIntent(
        bridge=NVUE_BRIDGE,
        pfc_profiles=profiles,
        lossless_pool_percent=lossless_pct,
        lossy_pool_percent=lossy_pct,
        watchdog=wd,
        warnings=sink.items,
        **ctx.common,
    )


SHAPING = IntentShaping(model=NvueSwitchIntent, finish=finish, watchdog=nvue_watchdog, ecn=ecn)
