"""NVIDIA Cumulus NVUE PFC watchdog codec: the policy's milliseconds in the platform's own units and ranges
(forward, every rounding or clamp a render warning) and back (inverse, for the audit and the contract test).

The table of what each platform can express is in :mod:`fabricd.intent.watchdog_timers`.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.watchdog_timers import Warn, WatchdogMs, clamped_ms, polls
from fabricd.model import Watchdog, WatchdogAction
from fabricd.model.types import Model
from fabricd.nos.spec import WatchdogCodec

NVUE_POLL_MS = (100, 5000)
NVUE_ROBUSTNESS = (1, 1000)


class NvueWatchdog(Model):
    """Cumulus NVUE PFC watchdog: the poll in ms and the number of polls before mitigation."""

    polling_interval_ms: int = Field(description="nv set qos pfc-watchdog polling-interval, 100-5000 ms")
    robustness: int = Field(description="nv set qos pfc-watchdog robustness, 1-1000 polls")


def nvue_watchdog(wd: Watchdog, warn: Warn) -> NvueWatchdog:
    if wd.action != WatchdogAction.DROP:
        warn(
            "watchdog.action",
            wd.action.value,
            "drop",
            "the Cumulus PFC watchdog always stops honouring pause on the queue and discards to it",
        )
    poll = clamped_ms(
        warn,
        "watchdog.polling_interval_ms",
        wd.poll_ms,
        NVUE_POLL_MS,
        "NVUE pfc-watchdog polling-interval is 100-5000 ms",
    )
    robust = polls(
        warn,
        "watchdog.robustness",
        wd.detection_ms,
        NVUE_ROBUSTNESS,
        "NVUE detection is polling-interval x robustness (1-1000)",
        poll_ms=poll,
    )
    if wd.restoration_ms != poll:
        warn(
            "watchdog.restoration_ms",
            f"{wd.restoration_ms} ms",
            f"{poll} ms (one polling interval)",
            "Cumulus restores a queue after one polling interval without pause; restoration is not settable",
        )
    return NvueWatchdog(polling_interval_ms=poll, robustness=robust)


def nvue_watchdog_ms(wd: NvueWatchdog) -> WatchdogMs:
    """The inverse codec: detection is polling-interval x robustness; a queue is restored after one quiet poll."""
    return WatchdogMs(wd.polling_interval_ms * wd.robustness, wd.polling_interval_ms, wd.polling_interval_ms)


CODEC: WatchdogCodec[NvueWatchdog] = WatchdogCodec(NvueWatchdog, nvue_watchdog, nvue_watchdog_ms)
"""The pack's watchdog codec (``PlatformSpec.watchdog``): forward and inverse."""
