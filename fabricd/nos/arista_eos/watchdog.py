"""Arista EOS PFC watchdog codec: the policy's milliseconds in the platform's own units and ranges
(forward, every rounding or clamp a render warning) and back (inverse, for the audit and the contract test).

The table of what each platform can express is in :mod:`fabricd.intent.watchdog_timers`.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.units import ms_to_seconds
from fabricd.intent.watchdog_timers import Warn, WatchdogMs, clamp
from fabricd.model import Watchdog, WatchdogAction
from fabricd.model.types import Model
from fabricd.nos.spec import WatchdogCodec
from fabricd.readers.switch.config_model import seconds_to_ms

EOS_TIMER_MS = (10, 60000)
EOS_POLL_MS = (5, 30000)
EOS_TIMER_STEP_MS = 10
"""EOS timeout and recovery-time are seconds with at most 2 decimals (AVD schema pattern ``\\d+(\\.\\d{1,2})?``)."""


class EosWatchdog(Model):
    """EOS ``priority-flow-control pause watchdog``: decimal seconds as text, exactly as the CLI prints them."""

    action: str = Field(description="drop | notify-only (EOS port action; AVD schema)")
    timeout_s: str = Field(description="detection timeout in seconds, e.g. 0.2")
    recovery_s: str = Field(description="recovery time in seconds")
    polling_s: str = Field(description="polling interval in seconds")


def _eos_timer_ms(value: int, bounds: tuple[int, int]) -> int:
    """``value`` clamped to ``bounds`` and rounded up to whole 10 ms (EOS takes seconds with 2 decimals)."""
    return -(-clamp(value, bounds) // EOS_TIMER_STEP_MS) * EOS_TIMER_STEP_MS


def _eos_timer(warn: Warn, field: str, value_ms: int, reason: str) -> int:
    """:func:`_eos_timer_ms` of ``value_ms``; a warning on ``field`` (the seconds EOS is given) when it changed."""
    ms = _eos_timer_ms(value_ms, EOS_TIMER_MS)
    if ms != value_ms:
        warn(field, f"{value_ms} ms", f"{ms_to_seconds(ms)} s", reason)
    return ms


def eos_watchdog(wd: Watchdog, warn: Warn) -> EosWatchdog:
    action = "drop"
    if wd.action == WatchdogAction.ALERT:
        action = "notify-only"
    elif wd.action == WatchdogAction.FORWARD:
        warn(
            "watchdog.action",
            "forward",
            "drop",
            "EOS watchdog actions are drop and notify-only (AVD 6.0 removed no-drop as invalid CLI, "
            "aristanetworks/avd#6399); validate refuses forward on EOS (FAB120)",
        )
    det = _eos_timer(
        warn,
        "watchdog.timeout_s",
        wd.detection_ms,
        "EOS timeout is 0.01-60 s in steps of 10 ms (2 decimals), rounded up",
    )
    rest = _eos_timer(
        warn,
        "watchdog.recovery_s",
        wd.restoration_ms,
        "EOS recovery-time is 0.01-60 s in steps of 10 ms (2 decimals), rounded up",
    )
    poll = min(clamp(wd.poll_ms, EOS_POLL_MS), min(det, rest) // 2)
    if poll != wd.poll_ms:
        warn(
            "watchdog.polling_s",
            f"{wd.poll_ms} ms",
            f"{ms_to_seconds(poll)} s",
            "EOS polling-interval is 0.005-30 s and at most half the smaller timer",
        )
    return EosWatchdog(
        action=action, timeout_s=ms_to_seconds(det), recovery_s=ms_to_seconds(rest), polling_s=ms_to_seconds(poll)
    )


def eos_watchdog_ms(wd: EosWatchdog) -> WatchdogMs:
    """The inverse codec: EOS's decimal seconds back to ms."""
    return WatchdogMs(_ms(wd.timeout_s), _ms(wd.recovery_s), _ms(wd.polling_s))


def _ms(seconds: str) -> int:
    ms = seconds_to_ms(seconds)
    if ms is None:  # the forward codec writes decimal seconds only
        raise ValueError(f"EOS watchdog timer {seconds!r} is not decimal seconds")
    return ms


CODEC: WatchdogCodec[EosWatchdog] = WatchdogCodec(EosWatchdog, eos_watchdog, eos_watchdog_ms)
"""The pack's watchdog codec (``PlatformSpec.watchdog``): forward and inverse."""
