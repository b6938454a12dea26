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
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .params import WatchdogParams
from .types import (
    ChannelKey,
    Direction,
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
"""A pause-duration delta above 1.5 x the interval plus the source's longest update span cannot be real time (even
with a late update): a counter jump."""
_SPANS = 16
"""Update spans remembered per source device (the longest of them is the device's span)."""
_SURPLUS = 32
"""Staleness observations remembered per source device (the largest of them is its staleness bound). Short on
purpose: a hiccup of the source (a replay writer descheduled for 40 ms on a loaded machine) is forgotten after 32
later observations, instead of letting every run for minutes hide gaps that long (bench/watchdog.py at load 8 had 28
false positives among 5,926 bursts with 256)."""
_SURPLUS_MIN_S = 0.0005
"""A pause delta that exceeds its interval by less than this (0.5 ms: µs rounding, clock jitter) teaches nothing."""


@dataclass(slots=True)
class Cadence:
    """How the counters of one source device (scope and device: a host's NICs behind one driver or replay writer, a
    switch's counter poll) arrive, declared by the source or measured from the counters.

    - ``declared_s``: the update period the source declared (``PauseSample.update_s``), seconds; None: measured.
    - ``span_s``: the longest time between two reads that both show new data, seconds (at least one poll). Measured
      when a channel's pause-duration counter ran through a stretch of reads that showed nothing and then caught up
      by about the whole stretch: the counter was paused throughout and only updated late, so the stretch was one
      update of the source. A declared period ``U`` gives ``U + poll`` (the update plus the poll that reads it).
    - ``stale_s``: how far behind real time a read may be, seconds (at most one poll): the largest recent
      *surplus*, a pause delta larger than its interval (the earlier read showed the counter late by at least
      that much). An on-demand counter (mlx5 ``ethtool -S`` queries the device) never shows one, so it stays 0
      and the detector is as strict as before.

    Learnt only from samples of channels in a run or a storm (the detector's slow path), so a source that holds
    back settled samples (:meth:`Detector.settled`) leaves the same cadence.
    """

    declared_s: float | None = None
    span_s: float = 0.0
    stale_s: float = 0.0
    spans: deque[float] = field(default_factory=lambda: deque(maxlen=_SPANS))
    surplus: deque[float] = field(default_factory=lambda: deque(maxlen=_SURPLUS))

    def declare(self, update_s: float, poll_s: float) -> None:
        if update_s != self.declared_s:
            self.declared_s = max(0.0, update_s)
            self._refresh(poll_s)

    def add_span(self, span_s: float, poll_s: float) -> None:
        self.spans.append(span_s)
        self._refresh(poll_s)

    def add_surplus(self, surplus_s: float, poll_s: float) -> None:
        self.surplus.append(min(surplus_s, poll_s))
        self._refresh(poll_s)

    def _refresh(self, poll_s: float) -> None:
        span = max(self.spans, default=poll_s)
        stale = max(self.surplus, default=0.0)
        if self.declared_s is not None:
            span = max(span, self.declared_s + poll_s)
            stale = max(stale, min(self.declared_s, poll_s))
        self.span_s = max(span, poll_s)
        self.stale_s = min(stale, poll_s)


@dataclass(slots=True)
class ChannelState:
    """Mutable state of one pause channel (internal to the detector; read by metrics)."""

    cad: Cadence
    """The cadence of the channel's source device (shared by its channels)."""
    prev: PauseSample | None = None
    """The last sample judged: the reference of the next interval (a read that showed no new data is skipped)."""
    run_s: float = 0.0
    run_open: bool = False
    run_full: int = 0
    pending_s: float = 0.0
    win_paused: float = 0.0
    win_dt: float = 0.0
    win_drained: bool = False
    owed_s: float = 0.0
    """Unpaused time a run has shown beyond the per-interval slack and not yet made up by a later catch-up."""
    held: bool = False
    """The held window (``win_*``) is held because it looked like a gap, to be judged with the next update."""
    hold_owed_s: float = 0.0
    """What the run owed with the held window (learnt as the source's staleness if a late update makes it up)."""
    chg_t: float = 0.0
    chg_pause: float | None = None
    silent: bool = False
    """Since the last read that showed new pause, a read showed the pause counter unmoved (a late reader, with no
    read in between, never sets it)."""
    """Time and pause counter of the last read in the slow path that showed new data (for the update span)."""
    active: bool = False
    quiet_s: float = 0.0
    since_t: float = 0.0
    since_wall: float = 0.0
    detected: int = 0
    restored: int = 0
    by_switch_wd: bool = False
    """The storm was raised by the switch's own PFC watchdog (its detected counter moved), not by the counters."""


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
        self.cadences: dict[tuple[Scope, str], Cadence] = {}
        """Per source device (scope, device): how its counters arrive (see :class:`Cadence`)."""
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
            cad = self.cadences.get((key.scope, key.device))
            if cad is None:
                cad = self.cadences[(key.scope, key.device)] = Cadence(span_s=self.params.poll_s)
            st = self.channels[key] = ChannelState(cad)
        else:
            prev = st.prev
            if (
                prev is not None
                and not st.active
                and not st.run_open
                and sample.t > prev.t
                and sample.pause_s == prev.pause_s
                and sample.frames == prev.frames
            ):
                st.prev = sample  # fast path: idle channel, no new pause (no deadline: no run is open)
                st.silent = True
                return None
        ev = self._observe(st, sample, wall)
        due: float | None = None
        prev = st.prev
        if prev is not None and prev.pause_s is not None:
            if not st.active and st.run_open and st.run_s > 0 and st.win_dt == 0.0:
                due = prev.t + (self.params.detection_s - st.run_s)
            elif st.active and st.quiet_s > 0:
                due = prev.t + (self.params.restoration_s - st.quiet_s)
        if due is not None and due <= sample.t:
            due = None  # the source has shown no new data since: reading it again now would show none either
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
            st.chg_t, st.chg_pause = sample.t, sample.pause_s
            return None
        dt = sample.t - prev.t
        if dt <= 0:
            return None
        if not st.active and not st.run_open and sample.pause_s == prev.pause_s and sample.frames == prev.frames:
            st.prev = sample
            st.silent = True
            return None  # fast path: idle channel, no new pause (whatever the link did, nothing can start)
        cad = st.cad
        poll = self.params.poll_s
        if sample.update_s is not None and sample.update_s != cad.declared_s:
            cad.declare(sample.update_s, poll)
        if (
            sample.pause_s == prev.pause_s
            and sample.frames == prev.frames
            and sample.progress == prev.progress
            and sample.link_up == prev.link_up
            and sample.link_epoch == prev.link_epoch
        ):
            # Not one counter of the channel moved while pause was running at the last update (a run is open, or
            # a storm has shown no quiet yet). A counter that is current when read shows pause time at every read
            # while paused, so this is a source that refreshes in steps (SONiC: PFC counters every 1 s) between two
            # refreshes: no new data, not "pause stopped". The read is skipped (``prev`` stays the reference) until
            # the next read that shows new data, or until the silence outlasts the source's update span: then it
            # is judged as real silence. Frame counters only get this once the source is known to step.
            expecting = st.run_open or st.quiet_s <= _EPS
            if (
                expecting
                and (sample.pause_s is not None or cad.span_s > 1.5 * poll)
                and dt <= cad.span_s + 0.5 * poll + _EPS
            ):
                st.silent = True
                return None
        else:
            self._learn_span(st, cad, sample)
        st.prev = sample
        iv = self._judge(prev, sample, dt, cad, st.win_dt)
        if iv is None:  # reset, flap or missing data: no evidence either way
            self._break_run(st)
            if st.active and sample.link_up is False and prev.link_up is False:
                st.quiet_s += dt  # a link that stayed down for the whole interval paused nothing
                return self._maybe_restore(sample.key, st, sample.t, wall)
            return None
        if not st.active:
            return self._detect_step(sample.key, st, dt, iv, t=sample.t, wall=wall)
        return self._restore_step(sample.key, st, dt, iv, t=sample.t, wall=wall)

    def _learn_span(self, st: ChannelState, cad: Cadence, sample: PauseSample) -> None:
        """A read that shows new data after reads that showed none: when the pause-duration counter moved by about
        the whole time since the last read that showed new data (within one poll: the update's own staleness),
        pause ran throughout and the source just did not update: that time is one update span of the source.
        Only after reads that showed nothing (``silent``): a reader that comes late (a loaded watcher) sees a long
        interval too, but that says nothing about the source, and a span learnt from it would widen the credit
        of every later run (two bursts could then make one storm)."""
        poll = self.params.poll_s
        if sample.pause_s is not None and st.chg_pause is not None and st.silent:
            span = sample.t - st.chg_t
            moved = sample.pause_s - st.chg_pause
            if span > 1.5 * poll and span - poll <= moved <= span + poll:
                cad.add_span(span, poll)
        st.chg_t, st.chg_pause, st.silent = sample.t, sample.pause_s, False

    def _judge(self, prev: PauseSample, cur: PauseSample, dt: float, cad: Cadence, held_s: float) -> Interval | None:
        """Classify one poll interval; None when it carries no usable evidence (link down or flapped, a counter
        went backwards, data missing). ``held_s``: the channel's held window before it (its time may show up in
        this interval's counters)."""
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
            poll = self.params.poll_s
            # a stale read shows time from before the previous read: at most the source's update span (unknown: the
            # detection time) more than the interval
            if d < 0 or d > _MAX_OVERRUN * dt + max(cad.span_s, self.params.detection_s) + held_s:
                return None  # went backwards (reset) or jumped by more than time allows (reset to a new base)
            # not clamped to dt: a counter read late in one poll shows its missing time in the next one, and the
            # sum over a run telescopes to the paused time up to the last read (never more than real time)
            paused = d
            if d - dt > _SURPLUS_MIN_S:  # more pause than time: the earlier read was at least this stale
                cad.add_surplus(d - dt, poll)
            # paused throughout: at most (1 - fraction) of a *poll* unpaused, however long the interval (an idle
            # port's read or a deadline read spans up to detection): a gap between two bursts is never absorbed.
            # (Detection also allows for the source's staleness, see _detect_duration; restoration does not: a
            # late update that looks like the storm's end only starts a quiet count that the catch-up resets,
            # while an end taken for a late update would delay restoration by that staleness.)
            slack = (1.0 - self.params.full_pause_fraction) * min(dt, poll)
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
        st.owed_s = 0.0
        st.held = False

    def _detect_step(
        self, key: ChannelKey, st: ChannelState, dt: float, iv: Interval, *, t: float, wall: float
    ) -> Event | None:
        if iv.paused is not None:  # duration mode: the run is the sum of measured pause
            self._detect_duration(st, dt, iv)
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

    def _detect_duration(self, st: ChannelState, dt: float, iv: Interval) -> None:
        """One interval in duration mode, before a storm: extend, hold, break or open the run of continuous pause.

        Inside a run, the unpaused time each interval shows beyond its slack is *owed*; a later interval with more
        pause than time (a late update catching up) pays it back. The run goes on while what is owed is within the
        source's staleness (0 for counters that are current when read: then this is exactly "at most the slack
        unpaused"). An interval that owes more is held once and judged together with the next update: a counter
        that steps shows a late update as a gap, and its catch-up then makes the two whole. If the two together
        still owe, the gap was real: the run ends, and the newer interval alone may open the next one.
        """
        p = self.params
        poll = p.poll_s
        assert iv.paused is not None
        held = st.win_dt > 0.0
        was_stale_hold = st.held
        held_dt = st.win_dt
        paused = iv.paused + st.win_paused
        window = dt + st.win_dt
        drained = iv.drained is True or st.win_drained
        st.win_paused = st.win_dt = 0.0
        st.win_drained = False
        st.held = False
        if not st.run_open:
            self._open(st, paused, window, drained)
            return
        frac = 1.0 - p.full_pause_fraction
        slack = frac * min(window, poll)
        late = was_stale_hold and iv.paused > dt + _SURPLUS_MIN_S
        if late:
            # the newest interval shows more pause than time: the held one's deficit was (at least partly) a late
            # read, and the two intervals are judged as two, each with its slack
            slack = frac * (min(held_dt, poll) + min(dt, poll))
        owed = max(0.0, st.owed_s + (window - paused) - slack)
        # paused throughout by the plain rule (at most the slack unpaused) always counts: what the run owes can only
        # shrink then, even if the source's staleness bound has shrunk meanwhile
        if not drained and (owed <= st.cad.stale_s + _EPS or window - paused <= slack + _EPS):
            if late and st.hold_owed_s > st.cad.stale_s:
                st.cad.add_surplus(st.hold_owed_s, poll)  # that deficit was made up: the source is that stale
            st.owed_s = owed
            st.run_s += paused
            st.run_full += 1
        elif st.run_full > 0 and window < poll - _EPS:
            # a short window (a deadline read) inside a run that does not look paused throughout: at this
            # scale a counter read a few ms late looks like a gap, so it is judged with the next read
            st.win_paused, st.win_dt, st.win_drained = paused, window, drained
        elif not drained and not was_stale_hold:
            st.win_paused, st.win_dt, st.win_drained, st.held = paused, window, drained, True
            st.hold_owed_s = owed
        else:
            counted = st.run_full > 0
            self._break_run(st)
            if held:  # the gap was in the held part: the newest interval alone may open a run
                # (on a source known to update late, its counters may also hold pause of the held time)
                stepped = st.cad.stale_s > 0.0 or st.cad.span_s > 1.5 * poll
                self._open(
                    st, iv.paused, dt, iv.drained is True, after_pause=True, credit_window=window if stepped else None
                )
            elif not counted:  # a run that was only a credit: the pause at this interval's end may open one
                self._open(st, paused, window, drained, after_pause=True)
            # else: the run ended inside this interval (its pause came first)

    def _open(
        self,
        st: ChannelState,
        paused: float,
        window: float,
        drained: bool,
        *,
        after_pause: bool = False,
        credit_window: float | None = None,
    ) -> None:
        """An interval with no run open: paused throughout (within slack and staleness) and not drained opens a run
        with all of it; otherwise the pause at its end may open one as a credit.

        The credit is the pause that fits in the interval's last update span when the interval began unpaused (a
        storm that started inside one refresh of a stepped source is all at its end, so detection stays within
        detection + one update period). When pause was running as the interval began (``after_pause``: it broke a
        run), its pause came first, then a gap, and only the pause that fits in its last poll may be new: crediting
        more would join a burst's tail to the next one (two bursts under detection would make a storm).
        ``credit_window``: the time the counters of this interval may cover when it follows a held one (a stepped
        source shows the held time's pause only in this interval)."""
        p = self.params
        slack = (1.0 - p.full_pause_fraction) * min(window, p.poll_s)
        excess = window - paused
        if not drained and excess <= slack + st.cad.stale_s + _EPS:
            st.run_open = True
            st.run_s = paused
            st.run_full = 1
            st.owed_s = max(0.0, excess - slack)
        elif paused > _EPS:
            # Only the pause that fits in the interval's last update span counts (one poll for a counter that is
            # current when read): in a longer interval (a late poll) the earlier pause may belong to a burst that
            # ended before a gap, and crediting it would let two short bursts make one storm.
            span = p.poll_s if after_pause else st.cad.span_s
            credit = paused - max(0.0, (window if credit_window is None else credit_window) - span)
            if drained:
                # The queue drained in the interval: its pause may be a storm that began inside it (traffic
                # before, pause after) or bursts with traffic between them. Counters that refresh more slowly
                # than the detection time (SONiC PFC: 1 s) cannot tell the two apart, so such an interval opens a
                # run but never declares a storm alone: the next refresh that shows pause throughout does.
                credit = min(credit, p.detection_s - 2 * _EPS)
            st.run_open = credit > _EPS
            st.run_s = max(0.0, credit)
            st.run_full = 0
            st.owed_s = 0.0
        else:
            self._break_run(st)

    def _fire(self, key: ChannelKey, st: ChannelState, t: float, wall: float) -> Event:
        st.active = True
        st.by_switch_wd = False
        st.detected += 1
        st.quiet_s = 0.0
        st.since_t = t
        st.since_wall = wall
        paused_ms = st.run_s * 1000.0
        self._break_run(st)
        log.info("PFC storm detected on %s priority %s %s", key.port, key.priority, key.direction.value)
        return _channel_event(EventKind.STORM_DETECTED, key, wall, paused_ms=round(paused_ms, 3))

    def _restore_step(
        self, key: ChannelKey, st: ChannelState, dt: float, iv: Interval, *, t: float, wall: float
    ) -> Event | None:
        if iv.paused is not None:  # duration mode
            if iv.paused <= _EPS:
                st.quiet_s += dt
            elif iv.heavy:
                surplus = iv.paused - dt
                if st.quiet_s > 0 and surplus > _SURPLUS_MIN_S:
                    # the storm looked like it ended in the last interval, and this one shows more pause than
                    # time: that "end" was a late update, now made up; what it hid beyond the slack is how late
                    # the source can be
                    slack = (1.0 - self.params.full_pause_fraction) * min(dt, self.params.poll_s)
                    if st.quiet_s <= surplus + 2 * slack:
                        st.cad.add_surplus(st.quiet_s - slack, self.params.poll_s)
                st.quiet_s = 0.0
            elif st.quiet_s <= 0:
                st.quiet_s = max(0.0, dt - iv.paused)  # the storm ended inside this interval (pause came first)
            elif iv.paused <= self.params.restore_noise_fraction * dt:
                # a sliver: the storm's last microseconds read late, or pause noise; its time does not count as
                # quiet, but it does not restart the restoration timer either
                st.quiet_s = max(0.0, st.quiet_s + dt - iv.paused)
            elif (
                st.cad.stale_s > 0.0
                and st.quiet_s <= st.cad.stale_s + (1.0 - self.params.full_pause_fraction) * self.params.poll_s + _EPS
            ):
                # on a source that updates late, no more quiet than one late update can hide, then pause again:
                # the storm's end arrived in two refreshes; this pause came first and the rest is quiet
                st.quiet_s = max(0.0, dt - iv.paused)
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
        st.by_switch_wd = False
        st.restored += 1
        st.quiet_s = 0.0
        self._break_run(st)
        log.info("PFC storm restored on %s priority %s %s", key.port, key.priority, key.direction.value)
        return _channel_event(EventKind.STORM_RESTORED, key, wall, storm_duration_s=round(t - st.since_t, 6))

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
        return _port_event(EventKind.LOSSLESS_DROP, k.scope, k, wall, reason=k.reason, count=count)

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
        raised = self._switch_wd_storm(sample, det > pd, rest > pr, det > rest, wall)
        if raised is not None:
            if raised.event is EventKind.STORM_DETECTED and (rest > pr or st.outstanding_since_t is None):
                st.outstanding_since_t, st.outstanding_since_wall, st.stuck = sample.t, wall, False
            elif raised.event is EventKind.STORM_RESTORED:
                st.outstanding_since_t, st.stuck = None, False
            return raised  # the stuck check runs on the next sample (at most one event per sample)
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
        log.warning(
            "switch PFC watchdog on %s:%s priority %s detected without restoring for %.1f s",
            k.device,
            k.interface,
            k.priority,
            waited,
        )
        return _port_event(
            EventKind.WATCHDOG_STUCK, Scope.SWITCH, k, wall, detected=det, restored=rest, stuck_s=round(waited, 3)
        )

    def _switch_wd_storm(
        self, sample: WdSample, detected: bool, restored: bool, open_: bool, wall: float
    ) -> Event | None:
        """The switch's own PFC watchdog as a storm source on its port's rx channel (the switch's view, issue 27
        part 3): its detected counter moving raises ``storm_detected`` (``reason: switch_watchdog``) unless the
        counters already raised it (then it corroborates: no second event). Its restored counter catching up
        restores a storm it raised on a channel whose pause counters the source does not give (otherwise those
        counters restore it, as for any storm)."""
        k = sample.key
        key = ChannelKey(Scope.SWITCH, k.device, k.interface, k.priority, Direction.RX)
        ch = self.channels.get(key)
        wd_fields = {"reason": "switch_watchdog", "detected": sample.detected, "restored": sample.restored}
        if detected and open_:
            if ch is None:
                cad = self.cadences.get((key.scope, key.device))
                if cad is None:
                    cad = self.cadences[(key.scope, key.device)] = Cadence(span_s=self.params.poll_s)
                ch = self.channels[key] = ChannelState(cad)
            if ch.active:
                return None  # corroborated: the counters saw it first
            ch.active, ch.by_switch_wd = True, True
            ch.detected += 1
            ch.quiet_s = 0.0
            ch.since_t, ch.since_wall = sample.t, wall
            self._break_run(ch)
            log.info("PFC storm detected by the switch watchdog on %s priority %s", key.port, key.priority)
            return _channel_event(EventKind.STORM_DETECTED, key, wall, **wd_fields)
        if restored and not open_ and ch is not None and ch.active and ch.by_switch_wd and ch.prev is None:
            ch.active, ch.by_switch_wd = False, False
            ch.restored += 1
            log.info("PFC storm restored by the switch watchdog on %s priority %s", key.port, key.priority)
            return _channel_event(
                EventKind.STORM_RESTORED, key, wall, storm_duration_s=round(sample.t - ch.since_t, 6), **wd_fields
            )
        return None


def _channel_event(kind: EventKind, key: ChannelKey, wall: float, **fields: Any) -> Event:
    """An event about one storm channel: its port and priority, its direction, plus ``fields``."""
    return _port_event(kind, key.scope, key, wall, direction=key.direction, **fields)


def _port_event(
    kind: EventKind, scope: Scope, where: ChannelKey | DropKey | WdKey, wall: float, **fields: Any
) -> Event:
    """An event about one port and priority (a storm channel, a drop counter, a switch watchdog), plus ``fields``."""
    return Event(
        ts=wall,
        event=kind,
        scope=scope,
        device=where.device,
        interface=where.interface,
        priority=where.priority,
        **fields,
    )
