"""The storm and drop detector: a pure state machine over timestamped counter samples.

No I/O, no clock, no threads: callers feed samples (monotonic ``t`` in seconds) and the wall-clock time of the
poll, and get events back. This is what the timer-accuracy tests and the benchmark drive.

Storm detection (per channel: port, priority, direction) follows SONiC's timing contract
(sonic-mgmt ``test_pfcwd_timer_accuracy``): a storm that starts at ``s`` is reported at a poll ``t`` with
``detection <= t - s <= detection + poll``; restoration likewise. How each poll interval is judged:

- **Duration mode** (the device counts time paused: mlx5 ``rx_prioN_pause_duration`` µs, bnxt
  ``pfc_priN_rx_duration_us``, SONiC PFC history): ``paused = Δpause_s`` (a delta above 1.5 × ``dt`` is a counter
  jump, not pause).
  The interval is *paused throughout* when its unpaused time is at most ``(1 - full_pause_fraction) × min(dt,
  poll)`` (an absolute slack, so that a long interval cannot absorb a gap between two bursts) and the queue did not
  drain
  (``Δprogress == 0`` when a drain counter is known: SONiC's "no TX" condition, sonic-swss PR #3036).
  The run of continuous pause is the **sum of measured pause**, not wall time: the first interval of a run
  contributes only its paused part (at most the part that fits in its last poll period, when a poll came late),
  and a partial interval after a run ends it. So a burst shorter than
  ``detection`` never fires however it straddles polls, and a storm fires at the first poll at which it has
  lasted ``detection``.
- **Frame mode** (only pause frames: mlx4, ice, i40e, switch PFC counters): an interval is paused throughout
  when pause frames arrived and the drain counter did not move. The first interval with frames only opens the
  run (its paused share is unknown), so the bounds still hold. Without a drain counter the last interval cannot
  be told from a partial one; the detector then needs one more interval with frames before it counts the previous
  one, which keeps bursts shorter than detection from firing but widens the upper bound to
  ``detection + 2 × poll`` (documented in docs/alerts.md).
- **Not a storm** (SONiC's false-positive bugs): a counter that goes backwards (driver reset, sonic-swss #1586
  family), a link that is down or flapped in the interval (``link_epoch`` moved), or a missing sample resets
  the run. A link that stays down counts as pause-free for restoration.

Restoration: pause-free time accumulates; the interval in which the storm ended contributes its unpaused part
(duration mode) and new pause restarts the count (SONiC ``pfc_restore.lua``: the counter has not changed for
``restoration_time``). A sliver of pause below ``restore_noise_fraction`` of an interval only subtracts its own
time: a counter read a few ms late (a replay tree's writer tick) shows the storm's last microseconds one poll
later, and restarting on it would cost a whole extra poll.

Drops: a drop counter on the lossless path that grows emits ``lossless_drop`` at most once per
``drop_holdoff_s`` per channel. A switch watchdog that detected a storm and has not restored it after
``stuck_after_s`` emits ``watchdog_stuck`` (Meta's DNE-TaaC health check).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import NamedTuple

from .params import WatchdogParams
from .types import (
    ChannelKey,
    DropKey,
    DropSample,
    Event,
    EventKind,
    PauseSample,
    Scope,
    WdKey,
    WdSample,
)

log = logging.getLogger(__name__)

_EPS = 1e-9
_MAX_OVERRUN = 1.5
"""A pause-duration delta above 1.5 x the interval cannot be real time (even with one late read): a counter jump."""


@dataclass(slots=True)
class ChannelState:
    """Mutable state of one pause channel (internal to the detector; read by metrics)."""

    prev: PauseSample | None = None
    run_s: float = 0.0
    run_open: bool = False
    run_full: int = 0
    pending_s: float = 0.0
    win_paused: float = 0.0
    win_dt: float = 0.0
    win_drained: bool = False
    active: bool = False
    quiet_s: float = 0.0
    since_t: float = 0.0
    since_wall: float = 0.0
    detected: int = 0
    restored: int = 0


class Interval(NamedTuple):
    """One poll interval of one channel, judged.

    ``paused``: seconds paused in the interval (duration mode) or None (frame mode: share unknown);
    ``heavy``: paused for at least ``full_pause_fraction`` of it (frame mode: pause frames arrived);
    ``full``: heavy and the queue did not drain (frame mode: drain known to be zero);
    ``drained``: the drain counter moved; None when there is none.
    """

    paused: float | None
    heavy: bool
    full: bool
    drained: bool | None


@dataclass(slots=True)
class DropState:
    prev: int | None = None
    last_event_t: float | None = None
    pending: int = 0
    total: int = 0


@dataclass(slots=True)
class WdState:
    detected: int | None = None
    restored: int | None = None
    outstanding_since_t: float | None = None
    outstanding_since_wall: float = 0.0
    stuck: bool = False


class Detector:
    """Per-channel storm detection and restoration, drop and stuck-watchdog checks. Not thread-safe: one owner
    feeds it (the watchdog runner serialises sources with a lock)."""

    def __init__(self, params: WatchdogParams) -> None:
        self.params = params
        self.channels: dict[ChannelKey, ChannelState] = {}
        self.drops: dict[DropKey, DropState] = {}
        self.wds: dict[WdKey, WdState] = {}
        self.due: dict[ChannelKey, float] = {}
        """Channel -> monotonic time at which its open run or restoration window would complete (see observe)."""

    # -- pause --------------------------------------------------------------------------------------------------

    def observe(self, sample: PauseSample, wall: float) -> Event | None:
        """Feed one sample of one channel; return the storm event it causes, if any.

        ``wall`` is the epoch time the sample was read (the event's ``ts``). Afterwards :attr:`due` holds, for a
        channel whose run or restoration window is open in duration mode, the monotonic time at which it would
        reach detection (or restoration) if the pause goes on (or stays away): reading it then, instead of at the
        next poll, tightens the bound to detection + the read's own delay.
        """
        key = sample.key
        st = self.channels.get(key)
        if st is None:
            st = self.channels[key] = ChannelState()
        else:
            prev = st.prev
            if (prev is not None and not st.active and not st.run_open and sample.t > prev.t
                    and sample.pause_s == prev.pause_s and sample.frames == prev.frames):
                st.prev = sample  # fast path: idle channel, no new pause (no deadline: no run is open)
                return None
        ev = self._observe(st, sample, wall)
        due: float | None = None
        prev = st.prev
        if prev is not None and prev.pause_s is not None:
            if not st.active and st.run_open and st.run_s > 0 and st.win_dt == 0.0:
                due = prev.t + (self.params.detection_s - st.run_s)
            elif st.active and st.quiet_s > 0:
                due = prev.t + (self.params.restoration_s - st.quiet_s)
        if due is None:
            self.due.pop(key, None)
        else:
            self.due[key] = due
        return ev

    def settled(self, key: ChannelKey, pause_s: float | None, frames: int | None) -> bool:
        """True when a sample of ``key`` with these pause counters would only move the channel's time: no run and
        no storm is open and the counters equal its last sample's (the fast path of :meth:`observe`).

        A source may then keep that sample back and hand it over just before the channel's next sample that is not
        settled (:class:`~fabricd.watchdog.sources.HostSource`): the detector ends in the same state as if it had
        been fed every sample, because a settled sample changes nothing but ``prev``.
        """
        st = self.channels.get(key)
        if st is None or st.active or st.run_open:
            return False
        prev = st.prev
        return prev is not None and prev.pause_s == pause_s and prev.frames == frames

    def _observe(self, st: ChannelState, sample: PauseSample, wall: float) -> Event | None:
        prev = st.prev
        if prev is None:
            st.prev = sample
            return None
        dt = sample.t - prev.t
        if dt <= 0:
            return None
        st.prev = sample
        if not st.active and not st.run_open and sample.pause_s == prev.pause_s and sample.frames == prev.frames:
            return None  # fast path: idle channel, no new pause (whatever the link did, nothing can start)
        iv = self._judge(prev, sample, dt)
        if iv is None:  # reset, flap or missing data: no evidence either way
            self._break_run(st)
            if st.active and sample.link_up is False and prev.link_up is False:
                st.quiet_s += dt  # a link that stayed down for the whole interval paused nothing
                return self._maybe_restore(sample.key, st, sample.t, wall)
            return None
        if not st.active:
            return self._detect_step(sample.key, st, dt, iv, sample.t, wall)
        return self._restore_step(sample.key, st, dt, iv, sample.t, wall)

    def _judge(self, prev: PauseSample, cur: PauseSample, dt: float) -> Interval | None:
        """Classify one poll interval; None when it carries no usable evidence (link down or flapped, a counter
        went backwards, data missing)."""
        if cur.link_up is False or prev.link_up is False:
            return None
        if cur.link_epoch is not None and prev.link_epoch is not None and cur.link_epoch != prev.link_epoch:
            return None
        drained: bool | None = None
        if cur.progress is not None and prev.progress is not None:
            dp = cur.progress - prev.progress
            if dp < 0:
                return None
            drained = dp > 0
        if cur.pause_s is not None and prev.pause_s is not None:
            d = cur.pause_s - prev.pause_s
            if d < 0 or d > _MAX_OVERRUN * dt:
                return None  # went backwards (reset) or jumped by more than time allows (reset to a new base)
            # not clamped to dt: a counter read late in one poll shows its missing time in the next one, and the
            # sum over a run telescopes to the paused time up to the last read (never more than real time)
            paused = d
            # paused throughout: at most (1 - fraction) of a *poll* unpaused, however long the interval (an idle
            # port's read or a deadline read spans up to detection): a gap between two bursts is never absorbed
            slack = (1.0 - self.params.full_pause_fraction) * min(dt, self.params.poll_s)
            heavy = dt - paused <= slack + _EPS
            return Interval(paused=paused, heavy=heavy, full=heavy and drained is not True, drained=drained)
        if cur.frames is not None and prev.frames is not None:
            df = cur.frames - prev.frames
            if df < 0:
                return None
            moved = df > 0
            return Interval(paused=None, heavy=moved, full=moved and drained is False, drained=drained)
        return None

    @staticmethod
    def _break_run(st: ChannelState) -> None:
        st.run_s = 0.0
        st.run_open = False
        st.run_full = 0
        st.pending_s = 0.0
        st.win_paused = st.win_dt = 0.0
        st.win_drained = False

    def _detect_step(
        self, key: ChannelKey, st: ChannelState, dt: float, iv: Interval, t: float, wall: float
    ) -> Event | None:
        if iv.paused is not None:  # duration mode: the run is the sum of measured pause
            p = self.params
            paused = iv.paused + st.win_paused
            window = dt + st.win_dt
            drained = iv.drained is True or st.win_drained
            st.win_paused = st.win_dt = 0.0
            st.win_drained = False
            full = window - paused <= (1.0 - p.full_pause_fraction) * min(window, p.poll_s) + _EPS and not drained
            if full:
                if not st.run_open:
                    st.run_open = True
                    st.run_s = 0.0
                st.run_s += paused
                st.run_full += 1
            elif st.run_open and st.run_full > 0 and window < p.poll_s - _EPS:
                # a short window (a deadline read) inside a run that does not look paused throughout: at this
                # scale a counter read a few ms late looks like a gap, so it is judged with the next read
                st.win_paused, st.win_dt, st.win_drained = paused, window, drained
            elif paused > _EPS:
                if st.run_open and st.run_full > 0:
                    self._break_run(st)  # the run ended inside this interval (its pause came first)
                else:
                    # Pause at the end of the interval may open a run. Only the pause that fits in the interval's
                    # last poll counts: in a longer interval (a late poll) the earlier pause may belong to a burst
                    # that ended before a gap, and crediting it would let two short bursts make one storm.
                    credit = paused - max(0.0, window - p.poll_s)
                    st.run_open = credit > _EPS
                    st.run_s = max(0.0, credit)
                    st.run_full = 0
            else:
                self._break_run(st)
        elif not iv.heavy:  # frame mode, no pause frames: nothing paused
            self._break_run(st)
        elif iv.drained is True:
            # pause frames while the queue drained: intermittent pause, or the first interval of a storm
            counted = st.run_full > 0
            self._break_run(st)
            if not counted:
                st.run_open = True
        elif iv.drained is False:  # frames and a stalled queue: paused throughout (the opening one counts 0)
            if st.run_open:
                st.run_s += dt
                st.run_full += 1
            else:
                st.run_open = True
                st.run_s = 0.0
        elif st.run_open:  # frames, drain unknown: an interval counts once the next one also shows frames
            st.run_s += st.pending_s
            st.run_full += 1
            st.pending_s = dt
        else:
            st.run_open = True
            st.run_s = 0.0
            st.pending_s = 0.0
        if st.run_open and st.run_s >= self.params.detection_s - _EPS:
            return self._fire(key, st, t, wall)
        return None

    def _fire(self, key: ChannelKey, st: ChannelState, t: float, wall: float) -> Event:
        st.active = True
        st.detected += 1
        st.quiet_s = 0.0
        st.since_t = t
        st.since_wall = wall
        paused_ms = st.run_s * 1000.0
        self._break_run(st)
        log.info("PFC storm detected on %s priority %s %s", key.port, key.priority, key.direction.value)
        return Event(
            ts=wall, event=EventKind.STORM_DETECTED, scope=key.scope, device=key.device, interface=key.interface,
            priority=key.priority, direction=key.direction, paused_ms=round(paused_ms, 3),
        )

    def _restore_step(
        self, key: ChannelKey, st: ChannelState, dt: float, iv: Interval, t: float, wall: float
    ) -> Event | None:
        if iv.paused is not None:  # duration mode
            if iv.paused <= _EPS:
                st.quiet_s += dt
            elif iv.heavy:
                st.quiet_s = 0.0
            elif st.quiet_s <= 0:
                st.quiet_s = max(0.0, dt - iv.paused)  # the storm ended inside this interval (pause came first)
            elif iv.paused <= self.params.restore_noise_fraction * dt:
                # a sliver: the storm's last microseconds read late, or pause noise; its time does not count as
                # quiet, but it does not restart the restoration timer either
                st.quiet_s = max(0.0, st.quiet_s + dt - iv.paused)
            else:
                st.quiet_s = 0.0  # pause came back inside the restoration window
        elif iv.heavy:  # frame mode: frames moved, storm or intermittent pause: not quiet
            st.quiet_s = 0.0
        else:
            st.quiet_s += dt
        return self._maybe_restore(key, st, t, wall)

    def _maybe_restore(self, key: ChannelKey, st: ChannelState, t: float, wall: float) -> Event | None:
        if st.quiet_s < self.params.restoration_s - _EPS:
            return None
        st.active = False
        st.restored += 1
        st.quiet_s = 0.0
        self._break_run(st)
        log.info("PFC storm restored on %s priority %s %s", key.port, key.priority, key.direction.value)
        return Event(
            ts=wall, event=EventKind.STORM_RESTORED, scope=key.scope, device=key.device, interface=key.interface,
            priority=key.priority, direction=key.direction, storm_duration_s=round(t - st.since_t, 6),
        )

    def active(self) -> list[ChannelKey]:
        return [k for k, st in self.channels.items() if st.active]

    # -- drops --------------------------------------------------------------------------------------------------

    def observe_drops(self, sample: DropSample, wall: float) -> Event | None:
        """A drop counter on the lossless path. Growth emits ``lossless_drop`` (at most once per hold-off)."""
        st = self.drops.get(sample.key)
        if st is None:
            st = self.drops[sample.key] = DropState()
        if sample.count is None:
            return None
        prev, st.prev = st.prev, sample.count
        if prev is None or sample.count < prev:  # first sample or counter reset: new baseline
            return None
        delta = sample.count - prev
        st.pending += delta
        st.total += delta
        if st.pending <= 0:
            return None
        if st.last_event_t is not None and sample.t - st.last_event_t < self.params.drop_holdoff_s:
            return None
        st.last_event_t = sample.t
        count, st.pending = st.pending, 0
        k = sample.key
        return Event(
            ts=wall, event=EventKind.LOSSLESS_DROP, scope=k.scope, device=k.device, interface=k.interface,
            priority=k.priority, reason=k.reason, count=count,
        )

    # -- switch watchdog health ---------------------------------------------------------------------------------

    def observe_wd(self, sample: WdSample, wall: float) -> Event | None:
        """A switch watchdog's detected/restored counters.

        Stuck (Meta DNE-TaaC ``pfc_wd_health_check``: deadlock > 0 and recovery == 0 in the window): the detected
        counter moved while fabricd watched, and the restored counter has not caught up ``stuck_after_s`` later.
        Storms outstanding before fabricd started are not judged (their start is unknown).
        """
        st = self.wds.get(sample.key)
        if st is None:
            st = self.wds[sample.key] = WdState()
        if sample.detected is None or sample.restored is None:
            return None
        det, rest = sample.detected, sample.restored
        pd, pr = st.detected, st.restored
        st.detected, st.restored = det, rest
        if pd is None or pr is None or det < pd or rest < pr:  # first sample or cleared counters: baseline
            st.outstanding_since_t = None
            st.stuck = False
            return None
        if rest > pr:  # the switch restored something: not stuck; a newer storm may still be open
            st.stuck = False
            st.outstanding_since_t = sample.t if det > pd and det > rest else None
        elif det > pd and det > rest and st.outstanding_since_t is None:
            st.outstanding_since_t = sample.t
            st.outstanding_since_wall = wall
        elif det <= rest:
            st.outstanding_since_t = None
            st.stuck = False
        if st.outstanding_since_t is None or st.stuck:
            return None
        waited = sample.t - st.outstanding_since_t
        if waited < self.params.stuck_after_s - _EPS:
            return None
        st.stuck = True
        k = sample.key
        log.warning("switch PFC watchdog on %s:%s priority %s detected without restoring for %.1f s",
                    k.device, k.interface, k.priority, waited)
        return Event(
            ts=wall, event=EventKind.WATCHDOG_STUCK, scope=Scope.SWITCH, device=k.device, interface=k.interface,
            priority=k.priority, detected=det, restored=rest, stuck_s=round(waited, 3),
        )
