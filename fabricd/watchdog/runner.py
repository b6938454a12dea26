"""The watchdog loop: one thread per source polling on a fixed schedule, one detector, root cause, event sinks.

Each source (a host root, a switch session) polls every ``poll_s`` on its own thread, so a slow switch never delays
the host's detection. Between polls, a source that can read single ports (a host) is read again at the detector's
*deadlines*: when a port's open run of pause would reach the detection time, or its quiet time the restoration
time (see :attr:`fabricd.watchdog.detector.Detector.due`). A poll that ends after the next slot is a **poll
overrun**: the missed slots are skipped (never bunched) and counted in ``poll_overruns``
(``fabricd_watchdog_poll_overruns_total``). Samples go into one
:class:`~fabricd.watchdog.detector.Detector` under a lock; when the set of active storms changes, the pause tree is
analysed again (:mod:`fabricd.watchdog.rootcause`) and ``storm_detected`` events get their origin.

Sinks are called outside the lock, in detection order, from the polling threads; a sink must not block for long
(the webhook sink queues and posts from its own thread).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .detector import Detector
from .params import WatchdogParams
from .rootcause import Origin, RootCause, Topology, analyse
from .types import Batch, ChannelKey, Event, EventKind

log = logging.getLogger(__name__)

EventSink = Callable[[Event], None]


class Source(Protocol):
    """Anything that can be polled for samples: :class:`~fabricd.watchdog.sources.HostSource`,
    :class:`~fabricd.watchdog.sources.SwitchSource`, or a test's own."""

    name: str

    def poll(self, t: float) -> Batch: ...


@dataclass(frozen=True, slots=True)
class ChannelStat:
    """One channel's state for metrics: labels, whether a storm is active, storms detected and restored."""

    scope: str
    device: str
    interface: str
    priority: int
    direction: str
    active: bool
    detected: int
    restored: int


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """Health of one source for ``/status``: polls done, failures, last error, last poll duration (s)."""

    name: str
    polls: int
    failures: int
    overruns: int
    last_error: str | None
    last_poll_s: float | None
    last_ok_wall: float | None
    deadline_reads: int = 0


@dataclass
class _SourceState:
    polls: int = 0
    failures: int = 0
    overruns: int = 0
    last_error: str | None = None
    last_poll_s: float | None = None
    last_ok_wall: float | None = None
    deadline_reads: int = 0
    overrun_logged: float | None = None
    overruns_logged: int = 0


OVERRUN_LOG_EVERY_S = 60.0
"""A source that falls behind its schedule is logged at most this often (with the count since the last line)."""


@dataclass(frozen=True, slots=True)
class Clocks:
    """The watchdog's two clocks, injected so tests can drive time: ``monotonic`` seconds (polls, deadlines) and
    ``wall`` epoch seconds (event times)."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time


class Watchdog:
    """Runs sources against one detector, on ``clocks`` (:class:`Clocks`). ``policy_priorities`` are (priority,
    role) pairs exported as ``fabricd_policy_priority`` (role lossless | roce | cnp). ``periods`` overrides the poll
    period of sources by name (switch sessions poll slower than a host)."""

    def __init__(
        self,
        params: WatchdogParams,
        sources: Sequence[Source],
        *,
        topology: Topology | None = None,
        sinks: Iterable[EventSink] = (),
        policy_priorities: Iterable[tuple[int, str]] = (),
        periods: dict[str, float] | None = None,
        clocks: Clocks = Clocks(),
        keep_events: int = 1000,
    ) -> None:
        self.params = params
        self.sources = list(sources)
        self.topology = topology or Topology()
        self.sinks = list(sinks)
        self.policy_priorities = tuple(policy_priorities)
        self.periods = dict(periods or {})
        self.clock = clocks.monotonic
        self.wall = clocks.wall
        self.detector = Detector(params)
        self.recent: deque[Event] = deque(maxlen=keep_events)
        self.origins: tuple[Origin, ...] = ()
        self._rootcause = RootCause({}, ())
        self._active: frozenset[ChannelKey] = frozenset()
        self._lock = threading.Lock()
        self._state = {s.name: _SourceState() for s in self.sources}
        self._deadlines: dict[str, dict[str, float]] = {}
        self._threads: list[threading.Thread] = []
        self.started_wall: float | None = None

    # -- one poll -----------------------------------------------------------------------------------------------

    def step(self, source: Source, ports: list[str] | None = None) -> list[Event]:
        """Poll ``source`` once (or read only ``ports``: a deadline read), feed the detector, deliver and return
        the events."""
        st = self._state.setdefault(source.name, _SourceState())
        t0 = self.clock()
        try:
            # a source that "settles" leaves out samples that would only move an idle channel's time
            settled = self.detector.settled if getattr(source, "settles", False) else None
            if ports is not None:
                st.deadline_reads += 1
                batch = source.poll_ports(t0, ports, settled)  # type: ignore[attr-defined]
            elif settled is not None:
                batch = source.poll(t0, settled)  # type: ignore[call-arg]
            else:
                batch = source.poll(t0)
        except Exception as exc:  # a broken source must not stop the others; it is reported in /status
            st.failures += 1
            st.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("watchdog source %s failed: %s", source.name, st.last_error, extra={"target": source.name})
            return []
        finally:
            st.polls += 1
            st.last_poll_s = self.clock() - t0
        st.last_ok_wall = self.wall()
        st.last_error = batch.problems[-1] if batch.problems else None  # cleared once the source recovers
        events = self.feed(batch)
        if self._deadline_capable(source):
            self._note_deadlines(source.name, batch)
        return events

    @staticmethod
    def _deadline_capable(source: Source) -> bool:
        return callable(getattr(source, "poll_ports", None))

    def _note_deadlines(self, name: str, batch: Batch) -> None:
        """Remember, per port just read, the earliest time one of its channels completes a run or a restoration
        window (the detector's ``due``)."""
        with self._lock:
            due = self.detector.due
            mine = self._deadlines.setdefault(name, {})
            seen: set[str] = set()
            for s in batch.pause:
                port = s.key.interface
                if port not in seen:
                    seen.add(port)
                    mine.pop(port, None)
                d = due.get(s.key)
                if d is not None and d < mine.get(port, float("inf")):
                    mine[port] = d

    def feed(self, batch: Batch, wall_offset: float | None = None) -> list[Event]:
        """Feed one batch and deliver the events. An event's ``ts`` is its sample's time ``t`` (when that port was
        read) plus ``wall_offset`` (epoch - monotonic; measured now when not given)."""
        events: list[Event] = []
        off = self.wall() - self.clock() if wall_offset is None else wall_offset
        wall = self.clock() + off
        with self._lock:
            det = self.detector
            for s in batch.pause:
                ev = det.observe(s, s.t + off)
                if ev is not None:
                    events.append(ev)
            for d in batch.drops:
                ev = det.observe_drops(d, wall)
                if ev is not None:
                    events.append(ev)
            for w in batch.wd:
                ev = det.observe_wd(w, wall)
                if ev is not None:
                    events.append(ev)
            if any(e.event in (EventKind.STORM_DETECTED, EventKind.STORM_RESTORED) for e in events):
                self._reanalyse()
                events = [self._attribute(e) for e in events]
            self.recent.extend(events)
        for ev in events:
            for sink in self.sinks:
                try:
                    sink(ev)
                except Exception:  # a sink failing must not stop detection
                    log.exception("watchdog event sink failed")
        return events

    def _reanalyse(self) -> None:
        active = frozenset(self.detector.active())
        if active == self._active:
            return
        self._active = active
        self._rootcause = analyse(active, self.topology)
        self.origins = self._rootcause.origins

    def _attribute(self, ev: Event) -> Event:
        if ev.event is not EventKind.STORM_DETECTED or ev.priority is None or ev.direction is None:
            return ev
        key = ChannelKey(ev.scope, ev.device, ev.interface, ev.priority, ev.direction)
        att = self._rootcause.per_storm.get(key)
        if att is None:
            return ev
        return ev.model_copy(
            update={"origin": att.origin, "origin_path": list(att.path), "origin_kind": att.kind.value}
        )

    # -- the loop -----------------------------------------------------------------------------------------------

    def _loop(self, source: Source, stop: threading.Event, deadline: float | None) -> None:
        period = self.periods.get(source.name, self.params.poll_s)
        st = self._state.setdefault(source.name, _SourceState())
        margin = float(getattr(source, "deadline_margin_s", 0.0))
        due = self._deadlines.setdefault(source.name, {}) if self._deadline_capable(source) else {}
        next_t = self.clock()
        while not stop.is_set():
            now = self.clock()
            if deadline is not None and now >= deadline:
                return
            with self._lock:
                soonest = min(due.values(), default=float("inf")) + margin
            if now >= soonest and now < next_t:
                with self._lock:
                    ports = [p for p, d in due.items() if d + margin <= now]
                self.step(source, ports)
                continue
            if next_t > now:
                if stop.wait(min(next_t, soonest) - now):
                    return
                continue
            self.step(source)
            next_t += period
            after = self.clock()
            if after > next_t:
                missed = int((after - next_t) // period) + 1
                st.overruns += 1
                next_t += missed * period
                self._log_overrun(source.name, st, after, missed, period)

    @staticmethod
    def _log_overrun(name: str, st: _SourceState, now: float, missed: int, period: float) -> None:
        """A WARNING when a source's poll ended after its next slot (the host was busy, the source slow): the
        detection-time contract is stretched by that much. At most once per :data:`OVERRUN_LOG_EVERY_S`."""
        if st.overrun_logged is not None and now - st.overrun_logged < OVERRUN_LOG_EVERY_S:
            return
        since = st.overruns - st.overruns_logged
        st.overrun_logged, st.overruns_logged = now, st.overruns
        log.warning(
            "watchdog source %s fell behind its schedule: a poll ended %d poll period(s) (%.0f ms each) "
            "late; %d overrun(s) since the last such line (fabricd_watchdog_poll_overruns_total)",
            name,
            missed,
            period * 1000,
            since,
            extra={"target": name},
        )

    def start(self, stop: threading.Event, duration_s: float | None = None) -> None:
        """Start one polling thread per source; they end when ``stop`` is set or after ``duration_s``."""
        self.started_wall = self.wall()
        deadline = self.clock() + duration_s if duration_s is not None else None
        for source in self.sources:
            th = threading.Thread(
                target=self._loop, args=(source, stop, deadline), name=f"wd-{source.name}", daemon=True
            )
            th.start()
            self._threads.append(th)

    def join(self, timeout: float | None = None) -> None:
        for th in self._threads:
            th.join(timeout)

    def run(self, stop: threading.Event, duration_s: float | None = None) -> None:
        """Start and wait until ``stop`` is set or ``duration_s`` has passed."""
        self.start(stop, duration_s)
        self.join()

    # -- views for metrics and the status API -------------------------------------------------------------------

    @property
    def poll_overruns(self) -> int:
        return sum(s.overruns for s in self._state.values())

    def channel_stats(self) -> list[ChannelStat]:
        with self._lock:
            items = list(self.detector.channels.items())
        return [
            ChannelStat(
                k.scope.value, k.device, k.interface, k.priority, k.direction.value, st.active, st.detected, st.restored
            )
            for k, st in items
        ]

    def origin_stats(self) -> tuple[Origin, ...]:
        return self.origins

    def source_status(self) -> list[SourceStatus]:
        return [
            SourceStatus(
                name, s.polls, s.failures, s.overruns, s.last_error, s.last_poll_s, s.last_ok_wall, s.deadline_reads
            )
            for name, s in self._state.items()
        ]

    def events_since(self, ts: float = 0.0) -> list[Event]:
        with self._lock:
            return [e for e in self.recent if e.ts > ts]
