"""Switch collector: PFC, queue, ECN and PFC-watchdog counters of every switch, polled through its platform driver
over a kept-open CLI session, with bounded concurrency, and parsed by ``fabricd.nos.<platform>.show``.

The collector depends only on :class:`CommandRunner` (``run(commands) -> {command: output}``, ``close()``), which
every platform driver (``fabricd.nos.<id>.driver``) satisfies; the CLI builds the runners, so this module never
imports netmiko. One session per switch is opened on first use and kept; a failed poll closes it and the next attempt
reconnects, after an exponential back-off with jitter (:class:`Backoff`), so a switch that is down is not re-dialled
on every scrape. Each switch has its own deadline: a hung one delays only itself. A switch that fails is reported
``fabricd_switch_up 0`` and makes the collector's success 0; the others are still exported, and
``fabricd_switch_last_success_timestamp_seconds`` says how old each switch's counters are. So does a command whose
non-empty output parses to nothing (an output shape the parser does not know): one WARNING line names the switch and
the command when it starts (``fabricd.readers.switch.empty``).
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from fabricd.errors import UsageError
from fabricd.nos.registry import SPECS
from fabricd.nos.spec import ShowTable
from fabricd.readers.switch.empty import cli_error, empty_parse_problem, has_rows, parsed_nothing
from fabricd.readers.switch.model import SwitchCounters, merge
from fabricd.readers.switch.replay import ReplayFolder

from .core import MetricSpec, Scrape
from .switch_families import (
    CONNECT_ATTEMPTS,
    CONSECUTIVE_FAILURES,
    LAST_SUCCESS,
    METRICS,
    PG_HEADROOM,
    POLL_DURATION,
    POLL_OVERRUNS,
    UP,
    emit_counters,
)

log = logging.getLogger(__name__)

PLATFORMS: dict[str, ShowTable] = {platform.value: spec.show for platform, spec in SPECS.items()}
"""Platform id -> its pack's show table (commands and parsers by role, :class:`fabricd.nos.spec.ShowTable`)."""


class CommandRunner(Protocol):
    """A session to one switch that runs show commands (the ``run`` verb of a platform driver)."""

    def run(self, commands: list[str]) -> dict[str, str]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class SwitchTarget:
    """One switch to poll: its inventory name, platform id, and the interfaces for per-interface commands."""

    name: str
    platform: str
    interfaces: tuple[str, ...] = ()
    headroom: tuple[tuple[str, int, int], ...] = ()
    """``(port, priority group, xoff bytes)`` of each lossless PG as the inventory's intent sizes its headroom
    (PG n carries priority n, SONiC's default ``pfc_to_pg_map``); empty without an inventory (a replay)."""


@dataclass(frozen=True)
class Backoff:
    """Exponential back-off with jitter for a failing switch: after the n-th failure in a row the next attempt waits
    ``min(ceiling_s, base_s * 2**(n-1))`` scaled by a random factor in ``[1 - jitter, 1]`` (so a fleet that failed
    together does not retry together)."""

    base_s: float = 1.0
    ceiling_s: float = 60.0
    jitter: float = 0.5

    def delay(self, failures: int, rng: Callable[[], float] = random.random) -> float:
        if failures <= 0:
            return 0.0
        full = min(self.ceiling_s, self.base_s * 2.0 ** min(failures - 1, 60))
        return full * (1.0 - self.jitter * rng())


@dataclass(frozen=True)
class SwitchHealth:
    """One switch's polling health (``/status`` and the ``fabricd_switch_*`` health series).

    ``attempts`` counts connection attempts (sessions opened or tried), ``failures`` failed polls (a poll past its
    deadline counts once, when the deadline passes), ``overruns`` polls that ran past their deadline,
    ``consecutive_failures`` the failures since the last success, ``retry_in_s`` the wait left before the next
    attempt (None when none is pending)."""

    name: str
    up: bool | None
    attempts: int
    polls: int
    failures: int
    overruns: int
    consecutive_failures: int
    last_error: str | None
    last_success_wall: float | None
    retry_in_s: float | None


@dataclass(frozen=True)
class SwitchPoll:
    """The result of polling one switch: parsed counters, or the error that stopped it, and how long it took.
    ``fresh`` is False when this repeats an earlier result (the switch is backing off, or its poll is still within
    its deadline); ``health`` is the switch's polling health when the result was handed out."""

    target: SwitchTarget
    counters: SwitchCounters | None
    error: str | None
    duration_s: float
    fresh: bool = True
    health: SwitchHealth | None = None


@dataclass
class _State:
    up: bool | None = None
    attempts: int = 0
    polls: int = 0
    failures: int = 0
    overruns: int = 0
    consecutive: int = 0
    last_error: str | None = None
    last_success_wall: float | None = None
    next_due: float = 0.0
    future: Future[SwitchPoll] | None = None
    started: float = 0.0  # when the poll was handed to the pool
    running: float | None = None  # when a worker began it (a poll queued behind busy workers is not overdue)
    overdue: bool = False
    down_since: float | None = None
    latest: SwitchPoll | None = None


def replay_targets(
    root: Path, names: Sequence[str] | None = None
) -> tuple[list[SwitchTarget], Callable[[SwitchTarget], CommandRunner]]:
    """Targets and a runner factory for a ``fabricd capture`` folder: every captured device (or ``names``), with
    the platform and the interfaces of its per-interface commands from its manifest."""
    folder = ReplayFolder(root)
    wanted = list(names) if names else list(folder.devices)
    unknown = [n for n in wanted if n not in folder.devices]
    if unknown:
        raise UsageError(
            f"{', '.join(unknown)}: not in the capture {root}",
            option="device",
            hint=f"captured: {', '.join(folder.devices)}",
        )
    targets = []
    for name in wanted:
        dev = folder.devices[name]
        interfaces = tuple(dict.fromkeys(c.interface for c in dev.manifest.commands if c.interface is not None))
        targets.append(SwitchTarget(name, dev.manifest.platform, interfaces))
    return targets, lambda target: folder.device(target.name)


def commands_for(target: SwitchTarget, *, optional: bool = False) -> list[tuple[str, str, str | None]]:
    """``(role, command, interface)`` triples for a target (its ``OPTIONAL_COMMANDS`` with ``optional``);
    per-interface commands are expanded."""
    show = PLATFORMS[target.platform]
    out: list[tuple[str, str, str | None]] = []
    table: Mapping[str, str] = show.optional if optional else show.commands
    for role, command in table.items():
        if "{interface}" in command:
            out.extend((role, command.format(interface=i), i) for i in target.interfaces)
        else:
            out.append((role, command, None))
    return out


def parse_outputs(
    target: SwitchTarget, outputs: Mapping[str, str], *, on_empty: Callable[[str, str | None], None] | None = None
) -> SwitchCounters:
    """Parse each command's output with its platform parser and merge them. A missing output is a problem, and so
    is a non-empty output that parses to nothing (an output shape the parser does not know): ``on_empty(command,
    problem)`` hears each command's verdict (``None`` when it parsed), so the caller can log the change."""
    show = PLATFORMS[target.platform]
    parts: list[SwitchCounters] = []
    problems: list[str] = []
    for optional in (False, True):
        for role, command, interface in commands_for(target, optional=optional):
            text = outputs.get(command)
            if text is None:
                if not optional:
                    problems.append(f"{target.name}: no output for {command!r}")
                continue
            parser = show.parsers[role]
            part = parser(text, interface) if interface is not None else parser(text)
            problem = None
            if has_rows(part):
                if part.problems:  # rows read, and something the parser could not: say on which switch
                    part = replace(
                        part,
                        problems=tuple(
                            p if p.startswith(f"{target.name}:") else f"{target.name}: {p}" for p in part.problems
                        ),
                    )
            elif parsed_nothing(text, part):
                # one problem naming the device and command, with the parser's own reason
                problem = empty_parse_problem(target.name, command, text, "; ".join(part.problems) or None)
                part = replace(part, problems=())
            else:
                # nothing to read (blank, a JSON document without values, a table header without rows), or a shape
                # the parser recognised as an empty answer (it reports shapes it does not know: see
                # tests/unit/test_switch_empty_parse.py): the device says there is nothing
                part = replace(part, problems=())
            if problem is not None:
                problems.append(problem)
            parts.append(part)
            if on_empty is not None:
                on_empty(command, problem)
    merged = merge(parts)
    if problems:
        return replace(merged, problems=merged.problems + tuple(problems))
    return merged


class SwitchPoller:
    """Polls switches with at most ``concurrency`` sessions working at once, keeping each session open.

    Every switch has its own schedule and its own deadline: ``factory(target)`` opens a runner (a connected
    driver); ``timeout_s`` bounds one switch's poll, and a poll still running past it is reported as failed (an
    overrun) without holding up the other switches; it is never started twice. A switch that fails waits before the
    next attempt as ``backoff`` says (exponential, with jitter, up to a ceiling), so a switch that is down is not
    re-dialled on every poll. The log gets one line per change of state (down with the reason, up again), not one
    per failed attempt. ``clock`` is monotonic seconds, ``wall`` epoch seconds, ``rng`` the jitter's source.
    """

    def __init__(
        self,
        targets: Sequence[SwitchTarget],
        factory: Callable[[SwitchTarget], CommandRunner],
        *,
        concurrency: int = 16,
        timeout_s: float = 30.0,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        rng: Callable[[], float] = random.random,
    ) -> None:
        for t in targets:
            if t.platform not in PLATFORMS:
                raise ValueError(
                    f"switch {t.name}: unknown platform {t.platform!r}; expected one of {', '.join(PLATFORMS)}"
                )
        self.targets = list(targets)
        self.factory = factory
        self.timeout_s = timeout_s
        self.backoff = backoff if backoff is not None else Backoff()
        self._clock = clock
        self._wall = wall
        self._rng = rng
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="fabricd-switch")
        self._sessions: dict[str, CommandRunner] = {}
        self._state: dict[str, _State] = {t.name: _State() for t in self.targets}
        self._unsupported: dict[str, set[str]] = {}
        self._empty: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._poll_lock = threading.Lock()
        quiet_ssh_tracebacks()

    def _empty_parse(self, target: SwitchTarget, command: str, problem: str | None) -> None:
        """Log an empty parse once (WARNING) when it starts, at DEBUG while it lasts, and once when it ends."""
        key = (target.name, command)
        extra = {"target": target.name}
        with self._lock:
            known = key in self._empty
            if problem is None:
                self._empty.discard(key)
            else:
                self._empty.add(key)
        if problem is not None:
            log.log(logging.DEBUG if known else logging.WARNING, "switch %s", problem, extra=extra)
        elif known:
            log.info("switch %s: %r parses again", target.name, command, extra=extra)

    def _poll_one(self, target: SwitchTarget) -> SwitchPoll:
        start = self._clock()
        with self._lock:
            self._state[target.name].running = start
        try:
            with self._lock:
                runner = self._sessions.get(target.name)
            if runner is None:
                with self._lock:
                    self._state[target.name].attempts += 1
                runner = self.factory(target)
                with self._lock:
                    self._sessions[target.name] = runner
            outputs = runner.run([c for _, c, _ in commands_for(target)])
            skip = self._unsupported.setdefault(target.name, set())
            for _, command, _ in commands_for(target, optional=True):
                if command in skip:
                    continue
                try:
                    reply = runner.run([command])
                    rejected = cli_error(reply.get(command, ""))
                    if rejected is not None:
                        raise RuntimeError(rejected)
                    outputs.update(reply)
                except Exception as exc:  # an optional command this device lacks: remember, poll on without it
                    skip.add(command)
                    log.info(
                        "switch %s: %r not supported (%s); not asking again on this session",
                        target.name,
                        command,
                        one_line(str(exc)),
                        extra={"target": target.name},
                    )
            counters = parse_outputs(
                target, outputs, on_empty=lambda command, problem: self._empty_parse(target, command, problem)
            )
            return SwitchPoll(target, counters, None, self._clock() - start)
        except Exception as exc:  # one switch's failure never stops the others; _settle logs the change of state
            self._drop_session(target.name)
            return SwitchPoll(target, None, one_line(f"{type(exc).__name__}: {exc}"), self._clock() - start)

    def _drop_session(self, name: str) -> None:
        with self._lock:
            runner = self._sessions.pop(name, None)
            self._unsupported.pop(name, None)
        if runner is not None:
            try:
                runner.close()
            except Exception:  # closing a broken session must not raise
                log.debug("switch %s: close failed", name, exc_info=True)

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
        """Start a poll of every switch that is due (not running, not backing off) and return one result per
        target, in target order. Waits for each switch up to its own deadline (``timeout_s`` after its poll
        started), or at most ``wait_s`` for all: a switch that has not answered by then is collected by a later
        call, and meanwhile its previous result is handed out again with ``fresh=False``."""
        with self._poll_lock:
            now = self._clock()
            for t in self.targets:
                st = self._state[t.name]
                if st.future is None and now >= st.next_due:
                    st.started, st.running, st.overdue = now, None, False
                    st.future = self._pool.submit(self._poll_one, t)
            limit = now + wait_s if wait_s is not None else float("inf")
            for t in self.targets:
                st = self._state[t.name]
                if st.future is None or st.overdue:
                    continue
                began = st.running if st.running is not None else self._clock()
                with contextlib.suppress(FutureTimeout):
                    st.future.result(timeout=max(0.0, min(began + self.timeout_s, limit) - self._clock()))
            return [self._settle(t) for t in self.targets]

    def _settle(self, t: SwitchTarget) -> SwitchPoll:
        st = self._state[t.name]
        now = self._clock()
        if st.future is not None and st.future.done():
            result = st.future.result()
            st.future = None
            if not st.overdue and result.duration_s >= self.timeout_s:
                st.overruns += 1  # answered late, but before anyone looked: an overrun, not a failure
            self._record(t, st, result, now, counted=st.overdue)
            return replace(result, health=self._health(t.name, st, now))
        running = st.running
        if st.future is not None and running is not None and now - running >= self.timeout_s:
            error = f"no answer within {self.timeout_s:g} s (poll running for {now - running:.1f} s)"
            if not st.overdue:
                st.overdue = True
                st.overruns += 1
                self._record(t, st, SwitchPoll(t, None, error, now - running), now, counted=False)
            return SwitchPoll(t, None, error, now - running, health=self._health(t.name, st, now))
        if st.latest is not None:
            return replace(st.latest, fresh=False, health=self._health(t.name, st, now))
        return SwitchPoll(
            t, None, "first poll still running", now - st.started, fresh=False, health=self._health(t.name, st, now)
        )

    def _record(self, t: SwitchTarget, st: _State, result: SwitchPoll, now: float, *, counted: bool) -> None:
        """Account one finished (or overdue) poll: counters, back-off, and a log line when the state changes.
        ``counted``: the poll already counted as a failure when it passed its deadline."""
        extra = {"target": t.name}
        if not counted:
            st.polls += 1
        if result.counters is not None:
            if st.up is False:
                down = "" if st.down_since is None else f" after {now - st.down_since:.1f} s"
                log.info("switch %s: up again%s (%d failed attempt(s))", t.name, down, st.consecutive, extra=extra)
            st.up, st.consecutive, st.next_due, st.down_since = True, 0, 0.0, None
            st.last_error = None
            st.last_success_wall = self._wall()
            st.latest = result
            return
        st.latest = result
        if not counted:
            st.failures += 1
            st.consecutive += 1
        st.last_error = result.error
        delay = self.backoff.delay(st.consecutive, self._rng)
        st.next_due = now + delay
        if st.up is not False:
            st.down_since = now
            log.warning(
                "switch %s: down: %s; retrying with back-off (next in %.1f s, at most every %g s)",
                t.name,
                result.error,
                delay,
                self.backoff.ceiling_s,
                extra=extra,
            )
        else:
            log.debug(
                "switch %s: still down (%d in a row): %s; next attempt in %.1f s",
                t.name,
                st.consecutive,
                result.error,
                delay,
                extra=extra,
            )
        st.up = False

    def _health(self, name: str, st: _State, now: float) -> SwitchHealth:
        retry = max(0.0, st.next_due - now) if st.future is None and st.up is False else None
        return SwitchHealth(
            name,
            st.up,
            st.attempts,
            st.polls,
            st.failures,
            st.overruns,
            st.consecutive,
            st.last_error,
            st.last_success_wall,
            retry,
        )

    def health(self) -> list[SwitchHealth]:
        """Every switch's polling health, in target order."""
        now = self._clock()
        return [self._health(t.name, self._state[t.name], now) for t in self.targets]

    def close(self) -> None:
        """Close every session and stop the worker threads."""
        for name in list(self._sessions):
            self._drop_session(name)
        self._pool.shutdown(wait=False, cancel_futures=True)


class _SshTracebacks(logging.Filter):
    """Drops the ERROR lines paramiko's transport thread logs when a connection fails (``Exception (client): ...``
    and the traceback, one record per line): the same error reaches the poller, which logs one line per change of
    state."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


_SSH_FILTER = _SshTracebacks()


def quiet_ssh_tracebacks() -> None:
    """Install :class:`_SshTracebacks` on paramiko's transport logger (by name; idempotent)."""
    logger = logging.getLogger("paramiko.transport")
    if _SSH_FILTER not in logger.filters:
        logger.addFilter(_SSH_FILTER)


def one_line(text: str, limit: int = 300) -> str:
    """An error message on one line (netmiko's run over several), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class Poller(Protocol):
    """What :class:`SwitchCollector` needs of a poller: :class:`SwitchPoller` (SSH) or
    :class:`fabricd.collectors.gnmi.GnmiPoller` (gNMI streams), or both behind a
    :class:`fabricd.collectors.gnmi.CombinedPoller`."""

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]: ...

    def health(self) -> list[SwitchHealth]: ...

    def close(self) -> None: ...


class SwitchCollector:
    """``switch``: polls every target once per scrape through a :class:`SwitchPoller`.

    ``wait_s`` bounds how long one scrape waits for the switches it started (None: each switch's own deadline, for
    a one-shot scrape). A switch that has not answered by then is exported from its last result, with its
    ``fabricd_switch_last_success_timestamp_seconds`` saying how old that is (its first poll still running: up 0),
    and its answer is collected by a later scrape; so a hung switch never holds a scrape past Prometheus' timeout.
    """

    name = "switch"
    metrics: tuple[MetricSpec, ...] = METRICS

    def __init__(
        self, poller: Poller, *, on_poll: Callable[[SwitchPoll], None] | None = None, wait_s: float | None = None
    ) -> None:
        self.poller = poller
        self.on_poll = on_poll
        self.wait_s = wait_s

    def collect(self, scrape: Scrape) -> None:
        for result in self.poller.poll(wait_s=self.wait_s):
            if self.on_poll is not None:
                self.on_poll(result)
            self.emit(scrape, result)

    @staticmethod
    def emit(scrape: Scrape, result: SwitchPoll) -> None:
        """Add one switch's poll result to the scrape: its polling health, then its counters
        (:func:`~fabricd.collectors.switch_families.emit_counters`)."""
        fam = scrape.family
        sw = result.target.name
        c = result.counters
        fam(UP).add((sw,), int(c is not None and not c.problems))
        for port, pg, xoff in result.target.headroom:
            fam(PG_HEADROOM).add((sw, port, str(pg)), xoff)
        fam(POLL_DURATION).add((sw,), result.duration_s)
        h = result.health
        if h is not None:
            if h.last_success_wall is not None:
                fam(LAST_SUCCESS).add((sw,), h.last_success_wall)
            fam(CONSECUTIVE_FAILURES).add((sw,), h.consecutive_failures)
            fam(CONNECT_ATTEMPTS).add((sw,), h.attempts)
            fam(POLL_OVERRUNS).add((sw,), h.overruns)
        if result.error is not None:
            scrape.problem(f"switch {sw}: {result.error}")
        if c is not None:
            emit_counters(scrape, sw, c)
