"""Cisco NX-OS PFC watchdog codec: the policy's milliseconds in the platform's own units and ranges
(forward, every rounding or clamp a render warning) and back (inverse, for the audit and the contract test).

The table of what each platform can express is in :mod:`fabricd.intent.watchdog_timers`.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.watchdog_timers import Warn, WatchdogMs, clamped_ms, polls
from fabricd.model import Watchdog, WatchdogAction
from fabricd.model.types import Model
from fabricd.nos.spec import WatchdogCodec

NXOS_POLL_MS = (100, 1000)
"""NX-OS watchdog interval: Cisco NDFC's ``pfc_watch_int`` takes 101-1000 ms, the switch's default being 100."""
NXOS_DEFAULT_POLL_MS = 100
NXOS_INTERFACE_MULTIPLIER = (1, 40)
"""DME ``ipqosPriorFlowCtrlWd.interfaceMutiplier`` is 0-40 (terraform-provider-nxos); 0 falls back to the global
shutdown multiplier, which fabricd does not render (no Cisco source of its CLI form)."""
NXOS_FIXED_RESTORE_MULTIPLIER = (1, 100)
"""``priority-flow-control fixed-restore multiplier`` (NX-API REST SDK 9.3(x)); the range is unverified."""


class NxosWatchdog(Model):
    """NX-OS PFC watchdog: the poll interval and the multiples of it after which a stuck queue is shut and
    restored; ``disable_action`` = only log the stuck queue (the DME's ``disableAction``: syslog, no action)."""

    poll_ms: int = Field(
        description="watchdog interval, 100-1000 ms (printed through interval_ms; at 100 ms the "
        "switch's default, which is not rendered)",
        json_schema_extra={"walk": False},
    )
    interval_ms: int | None = Field(
        description="`priority-flow-control watch-dog interval` to render; None at the switch's default of 100 ms"
    )
    interface_multiplier: int = Field(description="detection = poll x this, 1-40 (per interface)")
    fixed_restore_multiplier: int = Field(description="restoration = poll x this, 1-100")
    disable_action: bool = Field(description="alert: syslog only, the queue keeps its PFC (no drop)")


def nxos_watchdog(wd: Watchdog, warn: Warn) -> NxosWatchdog:
    if wd.action == WatchdogAction.FORWARD:
        warn(
            "watchdog.action",
            "forward",
            "drop",
            "the NX-OS PFC watchdog drops on the stuck queue, or with disable-action only logs; it has no forward",
        )
    poll = clamped_ms(warn, "watchdog.poll_ms", wd.poll_ms, NXOS_POLL_MS, "the NX-OS watchdog interval is 100-1000 ms")
    shut = polls(
        warn,
        "watchdog.interface_multiplier",
        wd.detection_ms,
        NXOS_INTERFACE_MULTIPLIER,
        "NX-OS detection is the interface multiplier (1-40) x the watchdog interval",
        poll_ms=poll,
    )
    restore = polls(
        warn,
        "watchdog.fixed_restore_multiplier",
        wd.restoration_ms,
        NXOS_FIXED_RESTORE_MULTIPLIER,
        "NX-OS restoration is the fixed-restore multiplier (1-100) x the watchdog interval",
        poll_ms=poll,
    )
    return NxosWatchdog(
        poll_ms=poll,
        interval_ms=None if poll == NXOS_DEFAULT_POLL_MS else poll,
        interface_multiplier=shut,
        fixed_restore_multiplier=restore,
        disable_action=wd.action == WatchdogAction.ALERT,
    )


def nxos_watchdog_ms(wd: NxosWatchdog) -> WatchdogMs:
    """The inverse codec: NX-OS detection and restoration are multiples of its watchdog interval."""
    return WatchdogMs(wd.poll_ms * wd.interface_multiplier, wd.poll_ms * wd.fixed_restore_multiplier, wd.poll_ms)


CODEC: WatchdogCodec[NxosWatchdog] = WatchdogCodec(NxosWatchdog, nxos_watchdog, nxos_watchdog_ms)
"""The pack's watchdog codec (``PlatformSpec.watchdog``): forward and inverse."""
