"""PFC watchdog timers per platform: the policy's milliseconds in each NOS's own units and ranges.

The policy stores ``detection_ms``, ``restoration_ms``, ``poll_ms`` and an action (drop | forward | alert). Each
platform expresses a different subset (SONiC pfcwd, vendor QoS guides):

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
                                                                       unverified)
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

Rounding is to the nearest multiple (half up); every change is a :class:`RenderWarning` via ``warn``. Each platform's
codec (forward and inverse) lives in its pack, ``fabricd/nos/<id>/watchdog.py``; this module keeps what they share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Warn = Callable[[str, str, str, str], None]
"""``warn(field, intended, rendered, reason)``."""


@dataclass(frozen=True)
class WatchdogMs:
    """A PFC watchdog in ms: what a platform's rendered watchdog does (the inverse codec of a platform pack)."""

    detection_ms: int
    restoration_ms: int
    poll_ms: int


def clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def nearest_multiple(value: int, step: int) -> int:
    """``value / step`` rounded half up (integers only)."""
    return (value + step // 2) // step


def clamped_ms(warn: Warn, field: str, value_ms: int, bounds: tuple[int, int], reason: str) -> int:
    """``value_ms`` clamped to ``bounds``; a warning on ``field`` when that changed it."""
    ms = clamp(value_ms, bounds)
    if ms != value_ms:
        warn(field, f"{value_ms} ms", f"{ms} ms", reason)
    return ms


def polls(warn: Warn, field: str, value_ms: int, bounds: tuple[int, int], reason: str, *, poll_ms: int) -> int:
    """How many polls of ``poll_ms`` make ``value_ms`` (rounded half up, clamped to ``bounds``); a warning on
    ``field`` when they do not make it exactly."""
    n = clamp(nearest_multiple(value_ms, poll_ms), bounds)
    if n * poll_ms != value_ms:
        warn(field, f"{value_ms} ms", f"{n} x {poll_ms} ms = {n * poll_ms} ms", reason)
    return n
