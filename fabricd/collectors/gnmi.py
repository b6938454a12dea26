"""gNMI switch collector: each switch with ``telemetry.transport: gnmi`` streams its counters (Subscribe STREAM,
SAMPLE and ON_CHANGE as its pack's table says, fabricd/nos/<id>/gnmi.py) into the same
:class:`~fabricd.readers.switch.model.SwitchCounters` the SSH parsers produce, exported by
:class:`~fabricd.collectors.switch.SwitchCollector` under the same names and labels.

One asyncio loop in one background thread runs one task per switch (hundreds per process); each task holds one TLS
channel and one Subscribe stream per subscription group of the table, and keeps the latest value of every path.
A SAMPLE path with no update for ``stale_factor`` (2) times its interval (SONiC's stalling SAMPLE,
sonic-net/sonic-buildimage#22201) marks its stream stale: the switch is down (``fabricd_switch_up 0``, its counters
not exported) and that stream is re-subscribed on the same channel (the stall is the stream's: no new TLS handshake)
after the existing per-switch back-off (:class:`~fabricd.collectors.switch.Backoff`). A stream that ends or fails
otherwise closes the channel, and the switch is dialled again after the back-off. First dials are spaced
``dial_spacing_s`` (5 ms) apart, so a fleet's TLS handshakes do not all land in the same second.
``fabricd_switch_last_success_timestamp_seconds`` is the time of the
switch's latest update, so ``time() - it`` is how stale its counters are, as over SSH.

Series identity: the shared series carry no transport label (a switch moved from SSH to gNMI keeps its series and
its alerts; two series for one switch would double every sum). Which transport feeds a switch is a separate info
series, ``fabricd_switch_telemetry_transport_info{switch,transport}``; the gNMI stream's own state is
``fabricd_switch_gnmi_*`` (:class:`GnmiStreamCollector`).

grpc and the stubs are imported here and in fabricd.platforms.gnmi only, on first use (``fabricd --help`` never
loads them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricd.errors import Fix, UsageError
from fabricd.nos.gnmi import GnmiPath, GnmiTable, path_key, subscription_of
from fabricd.nos.gnmi_registry import table_for
from fabricd.platforms.secrets import Secret
from fabricd.readers.switch.model import SwitchCounters, merge

from .core import MetricSpec, Scrape
from .switch import Backoff, Poller, SwitchHealth, SwitchPoll, SwitchTarget, one_line

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GnmiEndpoint:
    """Where and how to stream one switch: address, login, the CA that verifies its certificate (None: system
    roots), the name to verify, and the SAMPLE interval asked for (None: the pack's defaults)."""

    host: str
    port: int
    username: str
    password: Secret
    ca_pem: bytes | None = None
    server_name: str | None = None
    interval_s: float | None = None


class StaleStreamError(Exception):
    """A SAMPLE path of a stream had no update for ``stale_factor`` x its interval."""


@dataclass
class _State:
    table: GnmiTable
    values: dict[str, Any] = field(default_factory=dict)
    last_update: dict[str, float] = field(default_factory=dict)  # path key -> monotonic time of its last update
    last_update_wall: dict[str, float] = field(default_factory=dict)
    lag_at_update: dict[str, float] = field(default_factory=dict)  # path key -> the loop's lag total at its update
    synced: set[str] = field(default_factory=set)  # groups that sent sync_response on the current session
    up: bool | None = None
    stale: bool = False
    attempts: int = 0
    updates: int = 0
    failures: int = 0
    consecutive: int = 0
    resubscribes: int = 0
    last_error: str | None = None
    last_success_wall: float | None = None
    next_due: float = 0.0
    down_since: float | None = None
    settled: threading.Event = field(default_factory=threading.Event)  # synced or failed once
    parts: dict[int, tuple[tuple[Any, ...], SwitchCounters]] = field(default_factory=dict)


@dataclass
class _Stream:
    """One subscription group of one switch on its channel: what :meth:`GnmiPoller._group` streams."""

    target: SwitchTarget
    st: _State
    stub: Any
    metadata: Any
    group: str
    paths: Sequence[GnmiPath]
    ep: GnmiEndpoint
    sample: dict[str, float] = field(default_factory=dict)
    """Subscribed SAMPLE path key -> its interval (a path silent for ``stale_factor`` x that is stale)."""
    _under: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        table = self.st.table
        self.sample = {
            path_key(p.target, p.origin, p.path): table.interval(p, self.ep.interval_s)
            for p in self.paths
            if p.mode == "SAMPLE"
        }

    def subscription(self, key: str) -> str:
        """The subscribed path key an update's key falls under (the key itself for a path streamed whole, as
        SONiC's virtual paths are; a leaf's container subscription on OpenConfig-style trees), cached per key."""
        found = self._under.get(key)
        if found is None:
            p = None if key in self.sample else subscription_of(tuple(self.paths), key)
            found = key if p is None else path_key(p.target, p.origin, p.path)
            self._under[key] = found
        return found


async def _read(call: Any, request: Any, queue: asyncio.Queue[Any], group: str) -> None:
    """Send ``request`` on a Subscribe call, then move its responses (then its end or error) into ``queue``. The
    request side stays open (a closed one ends some servers' streams) until the call is cancelled."""
    try:
        await call.write(request)
        async for response in call:
            queue.put_nowait(response)
        queue.put_nowait(ConnectionError(f"gNMI stream {group!r} ended"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        queue.put_nowait(exc)


@dataclass(frozen=True)
class Clocks:
    """The poller's time and randomness: ``monotonic`` paces streams, ``wall`` stamps updates, ``rng`` jitters
    the back-off (tests inject their own)."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    rng: Callable[[], float] = random.random


class GnmiPoller:
    """Streams every target over gNMI; :meth:`poll` hands out the latest counters of each (the streams run
    between scrapes). ``endpoint(target)`` resolves a switch's address and login (a failure there is that switch's
    error, retried with back-off); ``timeout_s`` bounds connecting and the first sync of a stream.
    """

    def __init__(
        self,
        targets: Sequence[SwitchTarget],
        endpoint: Callable[[SwitchTarget], GnmiEndpoint],
        *,
        timeout_s: float = 30.0,
        backoff: Backoff | None = None,
        stale_factor: float = 2.0,
        dial_spacing_s: float = 0.005,
        clocks: Clocks | None = None,
    ) -> None:
        self.targets = list(targets)
        for t in self.targets:
            table = table_for(t.platform)
            if not table.mapped:
                raise UsageError(
                    f"switch {t.name}: telemetry.transport gnmi: fabricd cannot read {t.platform} over "
                    "gNMI yet (its paths are recorded in fabricd/nos/"
                    f"{t.platform}/gnmi.py, not mapped to counters)",
                    hint="use telemetry.transport: ssh for this switch (docs/metrics.md, per NOS)",
                )
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.backoff = backoff if backoff is not None else Backoff()
        self.stale_factor = stale_factor
        self.dial_spacing_s = dial_spacing_s
        clocks = clocks if clocks is not None else Clocks()
        self._clock = clocks.monotonic
        self._wall = clocks.wall
        self._rng = clocks.rng
        self._state = {t.name: _State(table_for(t.platform)) for t in self.targets}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        self._handed: dict[str, int] = {}
        self._lag = 0.0
        self._lag_due = 0.0  # when the lag ticker is due next
        """Seconds this process's loop could not run so far (a scrape's conversion holding the GIL, a starved CPU):
        not counted as a switch's silence."""

    # -- the loop thread ------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the streams (the first :meth:`poll` does it)."""
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()

        def run() -> None:
            from fabricd.platforms.gnmi import settle

            asyncio.set_event_loop(loop)
            self._tasks = [loop.create_task(self._run(t, i)) for i, t in enumerate(self.targets)]
            self._tasks.append(loop.create_task(self._lag_ticker()))
            ready.set()
            loop.run_forever()
            for task in self._tasks:
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
                loop.run_until_complete(settle())  # gRPC's own tasks for the cancelled calls, before the loop closes
            loop.close()

        self._thread = threading.Thread(target=run, name="fabricd-gnmi", daemon=True)
        self._thread.start()
        ready.wait(10)

    async def _run(self, target: SwitchTarget, index: int = 0) -> None:
        st = self._state[target.name]
        await asyncio.sleep(index * self.dial_spacing_s)  # a fleet's TLS handshakes spread out, not all at once
        while not self._closed:
            try:
                await self._session(target, st)
                raise ConnectionError("the switch ended the stream")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one switch's failure never stops the others
                delay = self._failed(target, st, exc)
                st.settled.set()
                await asyncio.sleep(delay)

    async def _session(self, target: SwitchTarget, st: _State) -> None:
        from fabricd.platforms.gnmi import auth_metadata, gnmi_pb2_grpc, secure_channel

        ep = self.endpoint(target)
        with self._lock:
            st.attempts += 1
            st.synced.clear()
        channel = secure_channel(ep.host, ep.port, ca_pem=ep.ca_pem, server_name=ep.server_name)
        try:
            stub = gnmi_pb2_grpc.gNMIStub(channel)
            metadata = auth_metadata(ep.username, ep.password.reveal())
            groups = st.table.groups()
            tasks = [
                asyncio.ensure_future(self._resubscribing(_Stream(target, st, stub, metadata, name, paths, ep)))
                for name, paths in groups.items()
            ]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # raises the group's error
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await channel.close(grace=None)

    async def _resubscribing(self, stream: _Stream) -> None:
        """One group's stream; a stale one is re-subscribed on the same channel after the back-off (the stall is the
        stream's, not the connection's: no new TLS handshake). Any other error ends the session."""
        while True:
            try:
                await self._group(stream)
            except StaleStreamError as exc:
                await asyncio.sleep(self._failed(stream.target, stream.st, exc, stream.group))

    async def _group(self, stream: _Stream) -> None:
        from fabricd.platforms.gnmi import subscribe_request

        request = subscribe_request(stream.st.table, stream.paths, interval_s=stream.ep.interval_s)
        tick = min(stream.sample.values(), default=self.timeout_s)

        call = stream.stub.Subscribe(metadata=stream.metadata, timeout=None)  # written to, not fed an iterator
        queue: asyncio.Queue[Any] = asyncio.Queue()
        reading = asyncio.ensure_future(_read(call, request, queue, stream.group))
        started, lag0 = self._clock(), self._lag
        try:
            while True:
                synced = stream.group in stream.st.synced
                wait = tick if synced else max(0.05, self.timeout_s - (self._clock() - started))
                try:  # not asyncio.wait_for: on 3.11 it loses a cancel that lands as the get completes (close hangs)
                    async with asyncio.timeout(min(wait, tick)):
                        response = await queue.get()
                except TimeoutError:
                    response = None
                if response is not None:
                    self._drain(stream, queue, response)
                now = self._clock()
                if stream.group not in stream.st.synced:
                    if now - started > self.timeout_s:
                        raise TimeoutError(
                            f"gNMI stream {stream.group!r}: no sync_response within {self.timeout_s:g} s"
                        )
                    continue
                if self._stale(stream, now, started, lag0) is not None:
                    await asyncio.sleep(0)  # responses this busy loop has not moved yet count before a verdict
                    self._drain(stream, queue)
                    self._check_stale(stream, self._clock(), started, lag0)
        finally:
            reading.cancel()
            call.cancel()

    def _take(self, stream: _Stream, response: Any, now: float) -> None:
        """One SubscribeResponse: sync (the switch is up once every group synced) or an update, whose values are
        kept by leaf key and whose arrival counts for the subscribed path it falls under."""
        from fabricd.platforms.gnmi import decode_value, path_text

        st = stream.st
        if response.sync_response:
            with self._lock:
                st.synced.add(stream.group)
                self._maybe_up(stream.target, st)
            return
        if not response.HasField("update"):
            return
        note = response.update
        wall = note.timestamp / 1e9 if note.timestamp else self._wall()
        decoded = [
            (path_key(note.prefix.target, note.prefix.origin, path_text(u.path, note.prefix)), decode_value(u.val))
            for u in note.update
        ]
        with self._lock:
            for key, value in decoded:
                st.values[key] = value
                sub = stream.subscription(key)
                st.last_update[sub] = now
                st.last_update_wall[sub] = wall
                st.lag_at_update[sub] = self._lag
            st.updates += 1
            if st.up:
                st.last_success_wall = self._wall()

    def _drain(self, stream: _Stream, queue: asyncio.Queue[Any], first: Any = None) -> None:
        """Take ``first`` and every response already queued behind it (a backlog left while this loop was busy is
        the switch's updates, not silence); a queued error or end of stream is raised."""
        response = first if first is not None else (queue.get_nowait() if not queue.empty() else None)
        while response is not None:
            if isinstance(response, BaseException):
                raise response
            self._take(stream, response, self._clock())
            response = queue.get_nowait() if not queue.empty() else None

    async def _lag_ticker(self, period_s: float = 0.1) -> None:
        """Add up how late this loop wakes (time it could not run): a switch is silent only for the rest."""
        self._lag_due = self._clock() + period_s
        while not self._closed:
            await asyncio.sleep(period_s)
            now = self._clock()
            self._lag += max(0.0, now - self._lag_due)
            self._lag_due = now + period_s

    def _lag_now(self, now: float) -> float:
        """The lag so far, with the ticker's own lateness if it has not run yet (it may run after the stream)."""
        return self._lag + (max(0.0, now - self._lag_due) if self._lag_due else 0.0)

    def _stale(self, stream: _Stream, now: float, started: float, lag0: float) -> tuple[str, float, float] | None:
        """The first SAMPLE path silent for more than ``stale_factor`` x its interval, not counting the time this
        process's loop could not run (its own backlog is not the switch's silence): (key, silence, interval)."""
        st = stream.st
        for key, interval in stream.sample.items():
            lag = self._lag_now(now) - st.lag_at_update.get(key, lag0)
            silence = now - st.last_update.get(key, started) - lag
            if silence > self.stale_factor * interval:
                return key, silence, interval
        return None

    def _check_stale(self, stream: _Stream, now: float, started: float, lag0: float) -> None:
        found = self._stale(stream, now, started, lag0)
        if found is not None:
            key, silence, interval = found
            raise StaleStreamError(
                f"gNMI stream {stream.group!r} stale: no update of {key} for {silence:.1f} s "
                f"({self.stale_factor:g}x its {interval:g} s interval); re-subscribing"
            )

    def _maybe_up(self, target: SwitchTarget, st: _State) -> None:
        if len(st.synced) < len(st.table.groups()):
            return
        if st.up is False:
            down = "" if st.down_since is None else f" after {self._clock() - st.down_since:.1f} s"
            log.info(
                "switch %s: gNMI streaming again%s (%d failed attempt(s))",
                target.name,
                down,
                st.consecutive,
                extra={"target": target.name},
            )
        st.up, st.stale, st.consecutive, st.down_since, st.last_error = True, False, 0, None, None
        st.last_success_wall = self._wall()
        st.settled.set()

    def _failed(self, target: SwitchTarget, st: _State, exc: BaseException, group: str | None = None) -> float:
        """Account a failure (``group``: only that stream went stale; the channel stays) and return the back-off."""
        message = _describe(exc)
        with self._lock:
            st.failures += 1
            st.consecutive += 1
            st.last_error = message
            if isinstance(exc, StaleStreamError):
                st.stale = True
                st.resubscribes += 1
            if group is None:
                st.synced.clear()
            else:
                st.synced.discard(group)
            delay = self.backoff.delay(st.consecutive, self._rng)
            st.next_due = self._clock() + delay
            was_up = st.up
            st.up = False
            if was_up is not False:
                st.down_since = self._clock()
        extra = {"target": target.name}
        if was_up is not False:
            log.warning(
                "switch %s: down: %s; retrying with back-off (next in %.1f s, at most every %g s)",
                target.name,
                message,
                delay,
                self.backoff.ceiling_s,
                extra=extra,
            )
        else:
            log.debug("switch %s: still down (%d in a row): %s", target.name, st.consecutive, message, extra=extra)
        return delay

    # -- the scrape side ------------------------------------------------------------------------------------------

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
        """The latest counters of every switch, in target order. The first call starts the streams and waits for
        each switch's first sync or failure, at most ``wait_s`` (None: ``timeout_s``)."""
        first = self._thread is None
        self.start()
        if first:
            deadline = time.monotonic() + (self.timeout_s if wait_s is None else wait_s)
            for st in self._state.values():
                st.settled.wait(max(0.0, deadline - time.monotonic()))
        out = []
        for t in self.targets:
            st = self._state[t.name]
            start = time.perf_counter()
            with self._lock:
                up = bool(st.up)
                values = dict(st.values) if up else None
                error = st.last_error if not up else None
                if st.up is None and error is None:
                    error = "gNMI: no sync_response yet"
                updates = st.updates
            counters = self._counters(st, values) if values is not None else None
            fresh = updates != self._handed.get(t.name)
            self._handed[t.name] = updates
            out.append(SwitchPoll(t, counters, error, time.perf_counter() - start, fresh, self._health(t.name, st)))
        return out

    @staticmethod
    def _counters(st: _State, values: dict[str, Any]) -> SwitchCounters | None:
        """The switch's counters from its latest values; a part of the table whose inputs are the same objects as
        last time is not converted again (a value is replaced, never changed in place, when an update arrives)."""
        table = st.table
        if not table.parts:
            return table.to_counters(values) if table.to_counters is not None else None
        out = []
        for i, part in enumerate(table.parts):
            inputs = tuple(values.get(k) for k in part.reads)
            cached = st.parts.get(i)
            if (
                cached is None
                or len(cached[0]) != len(inputs)
                or any(a is not b for a, b in zip(cached[0], inputs, strict=True))
            ):
                cached = (
                    inputs,
                    part.convert({k: v for k, v in zip(part.reads, inputs, strict=True) if v is not None}),
                )
                st.parts[i] = cached
            out.append(cached[1])
        return merge(out)

    def _health(self, name: str, st: _State) -> SwitchHealth:
        with self._lock:
            retry = max(0.0, st.next_due - self._clock()) if st.up is False else None
            return SwitchHealth(
                name,
                st.up,
                st.attempts,
                st.updates,
                st.failures,
                0,
                st.consecutive,
                st.last_error,
                st.last_success_wall,
                retry,
            )

    def health(self) -> list[SwitchHealth]:
        return [self._health(t.name, self._state[t.name]) for t in self.targets]

    def stream_state(self) -> list[tuple[str, bool, int, dict[str, float]]]:
        """Per switch: (name, stale, re-subscriptions after a stall, last update wall time per path)."""
        with self._lock:
            return [
                (
                    t.name,
                    self._state[t.name].stale,
                    self._state[t.name].resubscribes,
                    dict(self._state[t.name].last_update_wall),
                )
                for t in self.targets
            ]

    def close(self) -> None:
        self._closed = True
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)


def _describe(exc: BaseException) -> str:
    """One line: a gRPC status as ``CODE: details``, anything else as ``Type: message``."""
    code = getattr(exc, "code", None)
    details = getattr(exc, "details", None)
    if callable(code) and callable(details):
        with contextlib.suppress(Exception):
            return one_line(f"gNMI {code().name}: {details()}")
    if isinstance(exc, StaleStreamError | ConnectionError):
        return one_line(str(exc))
    return one_line(f"{type(exc).__name__}: {exc}")


class CombinedPoller:
    """An SSH and a gNMI poller behind one :class:`Poller`: results in ``order`` (the inventory's switch order)."""

    def __init__(self, pollers: Sequence[Poller], order: Sequence[str]) -> None:
        self.pollers = list(pollers)
        self.order = {name: i for i, name in enumerate(order)}

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
        results = [r for p in self.pollers for r in p.poll(wait_s)]
        return sorted(results, key=lambda r: self.order.get(r.target.name, len(self.order)))

    def health(self) -> list[SwitchHealth]:
        out = [h for p in self.pollers for h in p.health()]
        return sorted(out, key=lambda h: self.order.get(h.name, len(self.order)))

    def close(self) -> None:
        for p in self.pollers:
            p.close()


S = ("switch",)
SRC = "gNMI Subscribe streams (fabricd.collectors.gnmi, paths in fabricd/nos/<platform>/gnmi.py)"
TRANSPORT = MetricSpec(
    "fabricd_switch_telemetry_transport_info",
    "gauge",
    "1 for the transport that reads the switch's counters (transport = ssh or gnmi; inventory telemetry.transport). "
    "The counter series carry no transport label, so a switch keeps its series when it changes transport.",
    ("switch", "transport"),
    "inventory (telemetry.transport)",
)
STALE = MetricSpec(
    "fabricd_switch_gnmi_stream_stale",
    "gauge",
    "1 when the switch's latest gNMI stream stopped updating (a SAMPLE path silent for 2x its interval) and is being "
    "re-subscribed; 0 otherwise.",
    S,
    SRC,
)
RESUBSCRIBES = MetricSpec(
    "fabricd_switch_gnmi_stale_resubscriptions_total",
    "counter",
    "gNMI streams of the switch found stale and re-subscribed.",
    S,
    SRC,
)
LAST_UPDATE = MetricSpec(
    "fabricd_switch_gnmi_last_update_timestamp_seconds",
    "gauge",
    "When the switch last sent an update of the path (the switch's timestamp, Unix time).",
    ("switch", "path"),
    SRC,
)


class GnmiStreamCollector:
    """``switch`` transport series: which transport reads each switch, and the gNMI streams' staleness."""

    name = "switch_transport"
    metrics: tuple[MetricSpec, ...] = (TRANSPORT, STALE, RESUBSCRIBES, LAST_UPDATE)

    def __init__(self, gnmi: GnmiPoller | None, ssh_names: Sequence[str]) -> None:
        self.gnmi = gnmi
        self.ssh_names = list(ssh_names)

    def collect(self, scrape: Scrape) -> None:
        fam = scrape.family
        for name in self.ssh_names:
            fam(TRANSPORT).add((name, "ssh"), 1)
        if self.gnmi is None:
            return
        for name, stale, resubscribes, last in self.gnmi.stream_state():
            fam(TRANSPORT).add((name, "gnmi"), 1)
            fam(STALE).add((name,), int(stale))
            fam(RESUBSCRIBES).add((name,), resubscribes)
            for path, wall in sorted(last.items()):
                fam(LAST_UPDATE).add((name, path), wall)


def read_ca(path: Path | None, switch: str) -> bytes | None:
    """The PEM bytes of ``telemetry.gnmi.tls_ca`` (expanded like password_file), or None for the system roots."""
    if path is None:
        return None
    from fabricd import settings

    try:
        resolved = settings.expand_path(path)
        data = resolved.read_bytes()
    except settings.UnsetVariableError as exc:
        raise UsageError(f"switch {switch}: telemetry.gnmi.tls_ca: {exc}", hint=exc.hint) from None
    except OSError as exc:
        raise UsageError(
            f"switch {switch}: telemetry.gnmi.tls_ca {path}: cannot read it ({exc.strerror})",
            hint="name the PEM file of the CA that signed the switch's gNMI certificate",
            fixes=(Fix(("lab", "up"), text="a lab writes its CA to ${FABRICD_STATE_DIR}/lab/gnmi-ca.pem"),),
        ) from None
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise UsageError(
            f"switch {switch}: telemetry.gnmi.tls_ca {path}: not a PEM certificate (expected a "
            "'-----BEGIN CERTIFICATE-----' block)",
            hint="name the CA's PEM file",
        )
    return data
