"""PFC watchdog timers per platform: the policy's milliseconds in each NOS's own units and ranges.

The policy stores ``detection_ms``, ``restoration_ms``, ``poll_ms`` and an action (drop | forward | alert). Each
platform expresses a different subset (anchors.md §2.1):

========  ===========================================================  ==========================================
Platform  How it is expressed                                          What it cannot express
========  ===========================================================  ==========================================
SONiC     ``config pfcwd start --action A ... detection-time D         values outside detection 100-5000 ms,
          --restoration-time R``, ``config pfcwd interval P``; ms      restoration 100-60000, poll 100-1000 and
          (sonic-utilities ``pfcwd/main.py``)                          poll <= min(detection, restoration)
EOS       ``priority-flow-control pause watchdog port timer timeout T  ``forward`` (per-port actions are drop and
          polling-interval P recovery-time R``; decimal seconds,        notify-only = alert, AVD schema; validate
          timeout/recovery 2 decimals, polling 3 (AVD schema)           refuses forward, FAB120); timers outside
                                                                       0.01-60 s or not whole 10 ms (rounded up),
                                                                       polling outside 0.005-30 s or above half
                                                                       the smaller timer (third-party guide,
                                                                       anchors.md §6: unverified)
NX-OS     ``priority-flow-control watch-dog interval P`` (100-1000 ms,  a poll outside 100-1000 ms; timers that are
          NDFC ``pfc_watch_int``; not rendered at the default 100),    not whole polls or above 40 / 100 polls;
          per interface ``watch-dog interface-multiplier N``            ``forward`` (NX-OS drops, or with
          (DME 0-40) and ``watch-dog disable-action`` (alert: syslog    ``disable-action`` only logs)
          only), ``priority-flow-control fixed-restore multiplier M``
          (NX-API REST SDK 9.3(x)); timers are P x N and P x M
NVUE      ``nv set qos pfc-watchdog polling-interval P`` (100-5000 ms)  detection that is not a multiple of the
          and ``robustness N`` (1-1000 polls); detection = P x N        poll; restoration (it is one clean poll);
          (Cumulus 5.x QoS guide)                                       actions other than drop
========  ===========================================================  ==========================================

Rounding is to the nearest multiple (half up); every change is a :class:`RenderWarning` via ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from fabricd.model import Platform, Watchdog, WatchdogAction
from fabricd.model.types import Model

from .units import ms_to_seconds

Warn = Callable[[str, str, str, str], None]
"""``warn(field, intended, rendered, reason)``."""

SONIC_DETECTION_MS = (100, 5000)
SONIC_RESTORATION_MS = (100, 60000)
SONIC_POLL_MS = (100, 1000)
EOS_TIMER_MS = (10, 60000)
EOS_POLL_MS = (5, 30000)
EOS_TIMER_STEP_MS = 10
"""EOS timeout and recovery-time are seconds with at most 2 decimals (AVD schema pattern ``\\d+(\\.\\d{1,2})?``)."""
NXOS_POLL_MS = (100, 1000)
"""NX-OS watchdog interval: Cisco NDFC's ``pfc_watch_int`` takes 101-1000 ms, the switch's default being 100."""
NXOS_DEFAULT_POLL_MS = 100
NXOS_INTERFACE_MULTIPLIER = (1, 40)
"""DME ``ipqosPriorFlowCtrlWd.interfaceMutiplier`` is 0-40 (terraform-provider-nxos); 0 falls back to the global
shutdown multiplier, which fabricd does not render (no Cisco source of its CLI form)."""
NXOS_FIXED_RESTORE_MULTIPLIER = (1, 100)
"""``priority-flow-control fixed-restore multiplier`` (NX-API REST SDK 9.3(x)); the range is unverified."""
NVUE_POLL_MS = (100, 5000)
NVUE_ROBUSTNESS = (1, 1000)


class SonicWatchdog(Model):
    """SONiC PFC_WD: milliseconds as ``config pfcwd`` takes them."""

    action: str = Field(description="drop | forward | alert (config pfcwd start --action)")
    detection_ms: int = Field(description="detection time, 100-5000 ms")
    restoration_ms: int = Field(description="restoration time, 100-60000 ms")
    poll_ms: int = Field(description="PFC_WD|GLOBAL POLL_INTERVAL, 100-1000 ms, <= min(detection, restoration)")


class EosWatchdog(Model):
    """EOS ``priority-flow-control pause watchdog``: decimal seconds as text, exactly as the CLI prints them."""

    action: str = Field(description="drop | notify-only (EOS port action; AVD schema)")
    timeout_s: str = Field(description="detection timeout in seconds, e.g. 0.2")
    recovery_s: str = Field(description="recovery time in seconds")
    polling_s: str = Field(description="polling interval in seconds")


class NxosWatchdog(Model):
    """NX-OS PFC watchdog: the poll interval and the multiples of it after which a stuck queue is shut and
    restored; ``disable_action`` = only log the stuck queue (the DME's ``disableAction``: syslog, no action)."""

    poll_ms: int = Field(description="watchdog interval, 100-1000 ms (printed through interval_ms; at 100 ms the "
                                     "switch's default, which is not rendered)", json_schema_extra={"walk": False})
    interval_ms: int | None = Field(description="`priority-flow-control watch-dog interval` to render; None at "
                                                "the switch's default of 100 ms")
    interface_multiplier: int = Field(description="detection = poll x this, 1-40 (per interface)")
    fixed_restore_multiplier: int = Field(description="restoration = poll x this, 1-100")
    disable_action: bool = Field(description="alert: syslog only, the queue keeps its PFC (no drop)")


class NvueWatchdog(Model):
    """Cumulus NVUE PFC watchdog: the poll in ms and the number of polls before mitigation."""

    polling_interval_ms: int = Field(description="nv set qos pfc-watchdog polling-interval, 100-5000 ms")
    robustness: int = Field(description="nv set qos pfc-watchdog robustness, 1-1000 polls")


PlatformWatchdog = SonicWatchdog | EosWatchdog | NxosWatchdog | NvueWatchdog


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def _nearest_multiple(value: int, step: int) -> int:
    """``value / step`` rounded half up (integers only)."""
    return (value + step // 2) // step


def sonic_watchdog(wd: Watchdog, warn: Warn) -> SonicWatchdog:
    det = _clamp(wd.detection_ms, SONIC_DETECTION_MS)
    if det != wd.detection_ms:
        warn("watchdog.detection_ms", f"{wd.detection_ms} ms", f"{det} ms", "SONiC pfcwd takes 100-5000 ms")
    rest = _clamp(wd.restoration_ms, SONIC_RESTORATION_MS)
    if rest != wd.restoration_ms:
        warn("watchdog.restoration_ms", f"{wd.restoration_ms} ms", f"{rest} ms", "SONiC pfcwd takes 100-60000 ms")
    poll = min(_clamp(wd.poll_ms, SONIC_POLL_MS), det, rest)
    if poll != wd.poll_ms:
        warn("watchdog.poll_ms", f"{wd.poll_ms} ms", f"{poll} ms",
             "SONiC pfcwd interval is 100-1000 ms and must not exceed detection or restoration")
    return SonicWatchdog(action=wd.action.value, detection_ms=det, restoration_ms=rest, poll_ms=poll)


def _eos_timer_ms(value: int, bounds: tuple[int, int]) -> int:
    """``value`` clamped to ``bounds`` and rounded up to whole 10 ms (EOS takes seconds with 2 decimals)."""
    return -(-_clamp(value, bounds) // EOS_TIMER_STEP_MS) * EOS_TIMER_STEP_MS


def eos_watchdog(wd: Watchdog, warn: Warn) -> EosWatchdog:
    action = "drop"
    if wd.action == WatchdogAction.ALERT:
        action = "notify-only"
    elif wd.action == WatchdogAction.FORWARD:
        warn("watchdog.action", "forward", "drop",
             "EOS watchdog actions are drop and notify-only (AVD 6.0 removed no-drop as invalid CLI, "
             "aristanetworks/avd#6399); validate refuses forward on EOS (FAB120)")
    det = _eos_timer_ms(wd.detection_ms, EOS_TIMER_MS)
    if det != wd.detection_ms:
        warn("watchdog.timeout_s", f"{wd.detection_ms} ms", f"{ms_to_seconds(det)} s",
             "EOS timeout is 0.01-60 s in steps of 10 ms (2 decimals), rounded up")
    rest = _eos_timer_ms(wd.restoration_ms, EOS_TIMER_MS)
    if rest != wd.restoration_ms:
        warn("watchdog.recovery_s", f"{wd.restoration_ms} ms", f"{ms_to_seconds(rest)} s",
             "EOS recovery-time is 0.01-60 s in steps of 10 ms (2 decimals), rounded up")
    poll = min(_clamp(wd.poll_ms, EOS_POLL_MS), min(det, rest) // 2)
    if poll != wd.poll_ms:
        warn("watchdog.polling_s", f"{wd.poll_ms} ms", f"{ms_to_seconds(poll)} s",
             "EOS polling-interval is 0.005-30 s and at most half the smaller timer")
    return EosWatchdog(action=action, timeout_s=ms_to_seconds(det), recovery_s=ms_to_seconds(rest),
                       polling_s=ms_to_seconds(poll))


def nxos_watchdog(wd: Watchdog, warn: Warn) -> NxosWatchdog:
    if wd.action == WatchdogAction.FORWARD:
        warn("watchdog.action", "forward", "drop",
             "the NX-OS PFC watchdog drops on the stuck queue, or with disable-action only logs; it has no forward")
    poll = _clamp(wd.poll_ms, NXOS_POLL_MS)
    if poll != wd.poll_ms:
        warn("watchdog.poll_ms", f"{wd.poll_ms} ms", f"{poll} ms", "the NX-OS watchdog interval is 100-1000 ms")
    shut = _clamp(_nearest_multiple(wd.detection_ms, poll), NXOS_INTERFACE_MULTIPLIER)
    if shut * poll != wd.detection_ms:
        warn("watchdog.interface_multiplier", f"{wd.detection_ms} ms", f"{shut} x {poll} ms = {shut * poll} ms",
             "NX-OS detection is the interface multiplier (1-40) x the watchdog interval")
    restore = _clamp(_nearest_multiple(wd.restoration_ms, poll), NXOS_FIXED_RESTORE_MULTIPLIER)
    if restore * poll != wd.restoration_ms:
        warn("watchdog.fixed_restore_multiplier", f"{wd.restoration_ms} ms",
             f"{restore} x {poll} ms = {restore * poll} ms",
             "NX-OS restoration is the fixed-restore multiplier (1-100) x the watchdog interval")
    return NxosWatchdog(poll_ms=poll, interval_ms=None if poll == NXOS_DEFAULT_POLL_MS else poll,
                        interface_multiplier=shut, fixed_restore_multiplier=restore,
                        disable_action=wd.action == WatchdogAction.ALERT)


def nvue_watchdog(wd: Watchdog, warn: Warn) -> NvueWatchdog:
    if wd.action != WatchdogAction.DROP:
        warn("watchdog.action", wd.action.value, "drop",
             "the Cumulus PFC watchdog always stops honouring pause on the queue and discards to it")
    poll = _clamp(wd.poll_ms, NVUE_POLL_MS)
    if poll != wd.poll_ms:
        warn("watchdog.polling_interval_ms", f"{wd.poll_ms} ms", f"{poll} ms",
             "NVUE pfc-watchdog polling-interval is 100-5000 ms")
    robust = _clamp(_nearest_multiple(wd.detection_ms, poll), NVUE_ROBUSTNESS)
    if robust * poll != wd.detection_ms:
        warn("watchdog.robustness", f"{wd.detection_ms} ms", f"{robust} x {poll} ms = {robust * poll} ms",
             "NVUE detection is polling-interval x robustness (1-1000)")
    if wd.restoration_ms != poll:
        warn("watchdog.restoration_ms", f"{wd.restoration_ms} ms", f"{poll} ms (one polling interval)",
             "Cumulus restores a queue after one polling interval without pause; restoration is not settable")
    return NvueWatchdog(polling_interval_ms=poll, robustness=robust)


_BUILDERS: dict[Platform, Callable[[Watchdog, Warn], PlatformWatchdog]] = {
    Platform.SONIC: sonic_watchdog,
    Platform.ARISTA_EOS: eos_watchdog,
    Platform.CISCO_NXOS: nxos_watchdog,
    Platform.CUMULUS_NVUE: nvue_watchdog,
}


def platform_watchdog(platform: Platform, wd: Watchdog, warn: Warn) -> PlatformWatchdog:
    """The watchdog of ``wd`` in ``platform``'s units; every rounding or clamp goes to ``warn``."""
    return _BUILDERS[platform](wd, warn)
