"""SONiC PFC watchdog codec: the policy's milliseconds in the platform's own units and ranges
(forward, every rounding or clamp a render warning) and back (inverse, for the audit and the contract test).

The table of what each platform can express is in :mod:`fabricd.intent.watchdog_timers`.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.watchdog_timers import Warn, WatchdogMs, clamp, clamped_ms
from fabricd.model import Watchdog
from fabricd.model.types import Model
from fabricd.nos.spec import WatchdogCodec

SONIC_DETECTION_MS = (100, 5000)
SONIC_RESTORATION_MS = (100, 60000)
SONIC_POLL_MS = (100, 1000)


class SonicWatchdog(Model):
    """SONiC PFC_WD: milliseconds as ``config pfcwd`` takes them."""

    action: str = Field(description="drop | forward | alert (config pfcwd start --action)")
    detection_ms: int = Field(description="detection time, 100-5000 ms")
    restoration_ms: int = Field(description="restoration time, 100-60000 ms")
    poll_ms: int = Field(description="PFC_WD|GLOBAL POLL_INTERVAL, 100-1000 ms, <= min(detection, restoration)")


def sonic_watchdog(wd: Watchdog, warn: Warn) -> SonicWatchdog:
    det = clamped_ms(
        warn, "watchdog.detection_ms", wd.detection_ms, SONIC_DETECTION_MS, "SONiC pfcwd takes 100-5000 ms"
    )
    rest = clamped_ms(
        warn, "watchdog.restoration_ms", wd.restoration_ms, SONIC_RESTORATION_MS, "SONiC pfcwd takes 100-60000 ms"
    )
    poll = min(clamp(wd.poll_ms, SONIC_POLL_MS), det, rest)
    if poll != wd.poll_ms:
        warn(
            "watchdog.poll_ms",
            f"{wd.poll_ms} ms",
            f"{poll} ms",
            "SONiC pfcwd interval is 100-1000 ms and must not exceed detection or restoration",
        )
    return SonicWatchdog(action=wd.action.value, detection_ms=det, restoration_ms=rest, poll_ms=poll)


def sonic_watchdog_ms(wd: SonicWatchdog) -> WatchdogMs:
    """The inverse codec: what the rendered SONiC watchdog does, in ms."""
    return WatchdogMs(wd.detection_ms, wd.restoration_ms, wd.poll_ms)


CODEC: WatchdogCodec[SonicWatchdog] = WatchdogCodec(SonicWatchdog, sonic_watchdog, sonic_watchdog_ms)
"""The pack's watchdog codec (``PlatformSpec.watchdog``): forward and inverse."""
