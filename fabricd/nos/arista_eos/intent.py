"""Arista EOS intent shaping: the EOS switch intent and what only EOS decides (ECN units, classifier lines).

EOS sizes PFC headroom itself, so the computed headroom is a render warning; ECN thresholds are kbytes when both
are whole kbytes, else bytes (:mod:`fabricd.nos.arista_eos.ecn`).
"""

from __future__ import annotations

from fabricd.intent.switch import (
    EcnIntent,
    IntentShaping,
    ShapeContext,
    SwitchIntentBase,
    label,
    warn_headroom_computed,
)
from fabricd.intent.watchdog_timers import Warn
from fabricd.model import EcnProfile, Platform

from .ecn import eos_ecn
from .watchdog import EosWatchdog, eos_watchdog

_label = label

EOS_DSCP_PER_LINE = 8
"""DSCP values per ``qos map dscp ... to traffic-class`` line on EOS (kept short; EOS takes a list per line)."""
EOS_PROFILE = "FABRICD_ROCE"
"""The qos profile fabricd renders and applies to every port."""


class EosSwitchIntent(SwitchIntentBase):
    """Arista EOS: a qos profile carrying trust, PFC, watchdog, schedulers and ECN, applied to every port."""

    platform: Platform = Platform.ARISTA_EOS
    profile_name: str = _label("qos profile name")
    watchdog: EosWatchdog | None


def ecn(profile: EcnProfile, queue: int, warn: Warn) -> EcnIntent:
    lo, hi, unit, prob = eos_ecn(profile, queue, warn)
    return EcnIntent(profile=profile.name, min_threshold=lo, max_threshold=hi, unit=unit, probability_percent=prob)


def finish(ctx: ShapeContext) -> EosSwitchIntent:
    warn_headroom_computed(ctx.ports, ctx.sink, "EOS")
    wd = ctx.parts.watchdog
    assert wd is None or isinstance(wd, EosWatchdog)
    return EosSwitchIntent(profile_name=EOS_PROFILE, watchdog=wd, warnings=ctx.sink.items, **ctx.common)


SHAPING = IntentShaping(
    model=EosSwitchIntent,
    finish=finish,
    watchdog=eos_watchdog,
    ecn=ecn,
    classifier_sep=" ",
    dscp_per_line=EOS_DSCP_PER_LINE,
)
