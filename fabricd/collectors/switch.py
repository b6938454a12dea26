"""Switch collector: PFC, queue, ECN and PFC-watchdog counters of every switch, polled through its platform driver
over a kept-open CLI session, with bounded concurrency, and parsed by ``fabricd.nos.<platform>.show``.

The collector depends only on :class:`CommandRunner` (``run(commands) -> {command: output}``, ``close()``), which
every platform driver (``fabricd.nos.<id>.driver``) satisfies; the CLI builds the runners, so this module never
imports netmiko. One session per switch is opened on first use and kept; a failed poll closes it and the next scrape
reconnects. A switch that fails is reported ``fabricd_switch_up 0`` and makes the collector's success 0; the others
are still exported. So does a command whose non-empty output parses to nothing (an output shape the parser does not
know): one WARNING line names the switch and the command when it starts (``fabricd.readers.switch.empty``).
"""

from __future__ import annotations

import logging
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


@dataclass(frozen=True)
class SwitchPoll:
    """The result of polling one switch: parsed counters, or the error that stopped it, and how long it took."""

    target: SwitchTarget
    counters: SwitchCounters | None
    error: str | None
    duration_s: float


def replay_targets(root: Path, names: Sequence[str] | None = None
                   ) -> tuple[list[SwitchTarget], Callable[[SwitchTarget], CommandRunner]]:
    """Targets and a runner factory for a ``fabricd capture`` folder: every captured device (or ``names``), with
    the platform and the interfaces of its per-interface commands from its manifest."""
    folder = ReplayFolder(root)
    wanted = list(names) if names else list(folder.devices)
    unknown = [n for n in wanted if n not in folder.devices]
    if unknown:
        raise UsageError(f"--device {', '.join(unknown)}: not in the capture {root}",
                         hint=f"captured: {', '.join(folder.devices)}")
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


def parse_outputs(target: SwitchTarget, outputs: Mapping[str, str], *,
                  on_empty: Callable[[str, str | None], None] | None = None) -> SwitchCounters:
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
                    part = replace(part, problems=tuple(
                        p if p.startswith(f"{target.name}:") else f"{target.name}: {p}" for p in part.problems))
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
        return SwitchCounters(merged.pfc, merged.queues, merged.pfcwd, merged.pfcwd_config, merged.interfaces,
                              merged.drops, merged.problems + tuple(problems))
    return merged


class SwitchPoller:
    """Polls switches with at most ``concurrency`` sessions working at once, keeping each session open.

    ``factory(target)`` opens a runner (a connected driver). ``timeout_s`` bounds one switch's poll; a switch whose
    previous poll is still running is reported as failed instead of being polled twice.
    """

    def __init__(self, targets: Sequence[SwitchTarget], factory: Callable[[SwitchTarget], CommandRunner], *,
                 concurrency: int = 16, timeout_s: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        for t in targets:
            if t.platform not in PLATFORMS:
                raise ValueError(f"switch {t.name}: unknown platform {t.platform!r}; expected one of "
                                 f"{', '.join(PLATFORMS)}")
        self.targets = list(targets)
        self.factory = factory
        self.timeout_s = timeout_s
        self._clock = clock
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="fabricd-switch")
        self._sessions: dict[str, CommandRunner] = {}
        self._busy: dict[str, Future[SwitchPoll]] = {}
        self._unsupported: dict[str, set[str]] = {}
        self._empty: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

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
        try:
            with self._lock:
                runner = self._sessions.get(target.name)
            if runner is None:
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
                    log.info("switch %s: %r not supported (%s); not asking again on this session", target.name,
                             command, exc, extra={"target": target.name})
            counters = parse_outputs(target, outputs,
                                     on_empty=lambda command, problem: self._empty_parse(target, command, problem))
            return SwitchPoll(target, counters, None, self._clock() - start)
        except Exception as exc:  # one switch's failure never stops the others
            self._drop_session(target.name)
            message = f"{type(exc).__name__}: {exc}"
            log.warning("switch %s: poll failed: %s", target.name, message, extra={"target": target.name})
            return SwitchPoll(target, None, message, self._clock() - start)

    def _drop_session(self, name: str) -> None:
        with self._lock:
            runner = self._sessions.pop(name, None)
            self._unsupported.pop(name, None)
        if runner is not None:
            try:
                runner.close()
            except Exception:  # closing a broken session must not raise
                log.debug("switch %s: close failed", name, exc_info=True)

    def poll(self) -> list[SwitchPoll]:
        """Poll every target once (concurrently) and return one result per target, in target order."""
        futures: dict[str, Future[SwitchPoll]] = {}
        results: dict[str, SwitchPoll] = {}
        for t in self.targets:
            busy = self._busy.get(t.name)
            if busy is not None and not busy.done():
                results[t.name] = SwitchPoll(t, None, "previous poll still running (slow or hung session)", 0.0)
                continue
            futures[t.name] = self._busy[t.name] = self._pool.submit(self._poll_one, t)
        deadline = self._clock() + self.timeout_s
        for t in self.targets:
            fut = futures.get(t.name)
            if fut is None:
                continue
            try:
                results[t.name] = fut.result(timeout=max(0.0, deadline - self._clock()))
            except FutureTimeout:
                results[t.name] = SwitchPoll(t, None, f"timed out after {self.timeout_s:g} s", self.timeout_s)
        return [results[t.name] for t in self.targets]

    def close(self) -> None:
        """Close every session and stop the worker threads."""
        for name in list(self._sessions):
            self._drop_session(name)
        self._pool.shutdown(wait=False, cancel_futures=True)


S = ("switch",)
SI = ("switch", "interface")
SRC = "switch CLI via the platform driver (fabricd.nos.<platform>.show)"

UP = MetricSpec("fabricd_switch_up", "gauge", "1 when the switch answered every show command in this scrape, else 0.",
                S, SRC)
POLL_DURATION = MetricSpec("fabricd_switch_poll_duration_seconds", "gauge",
                           "Time the switch's show commands took in this scrape, in seconds.", S, SRC)
PFC_FRAMES = MetricSpec(
    "fabricd_switch_pfc_pause_frames_total", "counter",
    "PFC pause frames per port and priority; rx = received from the neighbour (the port was paused), tx = sent "
    "(the switch paused its neighbour).", (*SI, "priority", "direction"), SRC)
PFC_FRAMES_ALL = MetricSpec(
    "fabricd_switch_pfc_frames_total", "counter",
    "PFC frames per port over all priorities, for platforms that report only the total (NX-OS RxPPP/TxPPP, EOS "
    "RxPfc/TxPfc, NVUE RoCE counters).", (*SI, "direction"), SRC)
PFC_DURATION = MetricSpec(
    "fabricd_switch_pfc_pause_duration_seconds_total", "counter",
    "Time paused per port and priority, in seconds, where the platform reports it (NVUE; microseconds / 1e6).",
    (*SI, "priority", "direction"), SRC)
QUEUE_PACKETS = MetricSpec("fabricd_switch_queue_packets_total", "counter", "Packets sent by an egress queue.",
                           (*SI, "queue", "type"), SRC)
QUEUE_BYTES = MetricSpec("fabricd_switch_queue_bytes_total", "counter", "Bytes sent by an egress queue, in bytes.",
                         (*SI, "queue", "type"), SRC)
QUEUE_DROPPED = MetricSpec("fabricd_switch_queue_dropped_packets_total", "counter",
                           "Packets dropped by an egress queue (a lossless queue should show none).",
                           (*SI, "queue", "type"), SRC)
QUEUE_DROPPED_BYTES = MetricSpec("fabricd_switch_queue_dropped_bytes_total", "counter",
                                 "Bytes dropped by an egress queue, in bytes.", (*SI, "queue", "type"), SRC)
QUEUE_WRED = MetricSpec("fabricd_switch_queue_wred_dropped_packets_total", "counter",
                        "Packets WRED dropped in an egress queue.", (*SI, "queue", "type"), SRC)
QUEUE_ECN = MetricSpec("fabricd_switch_queue_ecn_marked_packets_total", "counter",
                       "Packets ECN-marked (CE) by an egress queue: the DCQCN congestion signal.",
                       (*SI, "queue", "type"), SRC)
PFCWD_DETECTED = MetricSpec("fabricd_switch_pfcwd_detected_total", "counter",
                            "PFC storms the switch watchdog detected on a lossless queue (priority = queue index "
                            "under the standard TC map).", (*SI, "priority"), SRC)
PFCWD_RESTORED = MetricSpec("fabricd_switch_pfcwd_restored_total", "counter",
                            "PFC storms the switch watchdog restored from. detected > restored for long = stuck.",
                            (*SI, "priority"), SRC)
PFCWD_STORMED = MetricSpec("fabricd_switch_pfcwd_stormed", "gauge",
                           "1 while the switch watchdog reports the queue stormed, 0 when operational.",
                           (*SI, "priority"), SRC)
PFCWD_DROPPED = MetricSpec("fabricd_switch_pfcwd_dropped_packets_total", "counter",
                           "Packets the watchdog action dropped on a stormed queue.", (*SI, "priority", "direction"),
                           SRC)
IF_DISCARDS = MetricSpec("fabricd_switch_interface_discards_total", "counter",
                         "Packets a port discarded (reason empty = the port's total).", (*SI, "direction", "reason"),
                         SRC)
IF_ERRORS = MetricSpec("fabricd_switch_interface_errors_total", "counter",
                       "Packets with errors on a port (reason empty = the port's total).",
                       (*SI, "direction", "reason"), SRC)
IF_PAUSE = MetricSpec("fabricd_switch_link_pause_frames_total", "counter",
                      "IEEE 802.3x link pause frames on a port (not PFC).", (*SI, "direction"), SRC)
IF_ECN = MetricSpec("fabricd_switch_interface_ecn_marked_packets_total", "counter",
                    "Packets ECN-marked on a port (platforms that count per port, e.g. NVUE RoCE counters).",
                    (*SI, "direction"), SRC)
DROPS = MetricSpec("fabricd_switch_drops_total", "counter",
                   "Device drop counters not tied to a port (EOS hardware counters), by chip and reason.",
                   ("switch", "location", "reason"), SRC)


class SwitchCollector:
    """``switch``: polls every target once per scrape through a :class:`SwitchPoller`."""

    name = "switch"
    metrics: tuple[MetricSpec, ...] = (
        UP, POLL_DURATION, PFC_FRAMES, PFC_FRAMES_ALL, PFC_DURATION, QUEUE_PACKETS, QUEUE_BYTES, QUEUE_DROPPED,
        QUEUE_DROPPED_BYTES, QUEUE_WRED, QUEUE_ECN, PFCWD_DETECTED, PFCWD_RESTORED, PFCWD_STORMED, PFCWD_DROPPED,
        IF_DISCARDS, IF_ERRORS, IF_PAUSE, IF_ECN, DROPS,
    )

    def __init__(self, poller: SwitchPoller, *, on_poll: Callable[[SwitchPoll], None] | None = None) -> None:
        self.poller = poller
        self.on_poll = on_poll

    def collect(self, scrape: Scrape) -> None:
        for result in self.poller.poll():
            if self.on_poll is not None:
                self.on_poll(result)
            self.emit(scrape, result)

    @staticmethod
    def emit(scrape: Scrape, result: SwitchPoll) -> None:
        """Add one switch's poll result to the scrape."""
        fam = scrape.family
        sw = result.target.name
        c = result.counters
        up = c is not None and not c.problems
        fam(UP).add((sw,), int(up))
        fam(POLL_DURATION).add((sw,), result.duration_s)
        if result.error is not None:
            scrape.problem(f"switch {sw}: {result.error}")
        if c is None:
            return
        for p in c.problems:
            scrape.problem(p)
        seen: set[tuple[str, tuple[str, ...]]] = set()

        def add(spec: MetricSpec, labels: tuple[str, ...], value: int | float | None) -> None:
            if value is None or (spec.name, labels) in seen:
                return
            seen.add((spec.name, labels))
            fam(spec).samples.append((labels, value))

        for pfc in c.pfc:
            if pfc.priority is None:
                add(PFC_FRAMES_ALL, (sw, pfc.interface, pfc.direction), pfc.frames)
                continue
            labels = (sw, pfc.interface, str(pfc.priority), pfc.direction)
            add(PFC_FRAMES, labels, pfc.frames)
            if pfc.duration_us is not None:
                add(PFC_DURATION, labels, pfc.duration_us / 1e6)
        for q in c.queues:
            ql = (sw, q.interface, str(q.index), q.kind)
            add(QUEUE_PACKETS, ql, q.packets)
            add(QUEUE_BYTES, ql, q.bytes)
            add(QUEUE_DROPPED, ql, q.dropped_packets)
            add(QUEUE_DROPPED_BYTES, ql, q.dropped_bytes)
            add(QUEUE_WRED, ql, q.wred_dropped_packets)
            add(QUEUE_ECN, ql, q.ecn_marked_packets)
        for wd in c.pfcwd:
            wl = (sw, wd.interface, str(wd.queue))
            add(PFCWD_DETECTED, wl, wd.detected)
            add(PFCWD_RESTORED, wl, wd.restored)
            if wd.status is not None:
                add(PFCWD_STORMED, wl, int(wd.status.lower() == "stormed"))
            add(PFCWD_DROPPED, (*wl, "tx"), wd.tx_drop)
            add(PFCWD_DROPPED, (*wl, "rx"), wd.rx_drop)
        for i in c.interfaces:
            d = i.direction or ""
            if i.counter == "discards":
                add(IF_DISCARDS, (sw, i.interface, d, i.reason or ""), i.value)
            elif i.counter == "errors":
                add(IF_ERRORS, (sw, i.interface, d, i.reason or ""), i.value)
            elif i.counter == "pause_frames":
                add(IF_PAUSE, (sw, i.interface, d), i.value)
            elif i.counter == "ecn_marked_packets":
                add(IF_ECN, (sw, i.interface, d), i.value)
        for drop in c.drops:
            add(DROPS, (sw, drop.location, drop.name), drop.value)
