"""What one HTTP endpoint of fabricd (the exporters, the agent, ``fabricd serve``) lets its clients hold.

- **Connections**: at most :attr:`ConnLimits.max_connections` at once (lowered to fit the process's open-file limit).
  A new connection past the cap first closes the longest-idle connection (kept alive between requests, never sent a
  request, or still sending its request headers after :data:`SLOW_HEADERS_S`); when none is idle it is refused: plain
  HTTP gets ``503`` and ``Connection: close``, TLS is closed. Refusals and evictions are logged at most once a minute,
  with counts.
- **Deadlines per connection**: the TLS handshake (:data:`HANDSHAKE_TIMEOUT_S`), the request line and headers
  (:attr:`ConnLimits.header_timeout_s`, counted from the request's first byte), an idle keep-alive connection
  (:attr:`ConnLimits.idle_timeout_s`), and the answer (:attr:`ConnLimits.response_timeout_s`, from the end of the
  headers until the response is written). No endpoint reads a request body: a request that announces one is answered
  and its connection closed, so a slow body holds nothing. A connection past its deadline is shut down, so a
  slowloris holds only its own slot, and only until its deadline.
- **Requests in flight**: at most :attr:`ConnLimits.max_requests` requests are answered at once; others wait for a
  slot within their response deadline, then get ``503``. This bounds the interpreter time the API can take from the
  watchdog's polling threads.
- **Failed authentication** (:class:`AuthGate`): a credential that passed is answered from a cache; a credential that
  failed is refused from a cache, without bcrypt; at most one bcrypt check runs at a time; a client address with
  :attr:`ConnLimits.auth_failures` failures within a minute gets ``429`` for credentials it has not proven, until the
  minute has passed. A flood of wrong passwords therefore costs at most one core, and a scraper whose credentials
  passed once is never queued behind it.
- **Descriptors**: ``accept()`` failing with EMFILE/ENFILE backs off (up to 1 s) instead of spinning, closes an idle
  connection to free one, and logs once a minute.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import resource
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, replace

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_S = 10.0
"""Longest a client may take to complete its TLS handshake before its connection is dropped."""
SLOW_HEADERS_S = 1.0
"""A connection still sending its request headers after this long may be closed to make room for a new one (a real
client sends them in one segment)."""
FD_RESERVE = 64
"""Descriptors kept free for everything else the process opens (files, switch sessions, netlink) when the
connection cap is lowered to fit the open-file limit."""
LOG_EVERY_S = 60.0


@dataclass(frozen=True)
class ConnLimits:
    """The bounds of one HTTP endpoint; every CLI that serves HTTP takes them as options (docs/security.md)."""

    max_connections: int = 256
    """Connections open at once (``--max-connections``); lowered at start to the open-file limit minus
    :data:`FD_RESERVE`."""
    header_timeout_s: float = 10.0
    """From a request's first byte until its headers are complete (``--header-timeout``)."""
    idle_timeout_s: float = 120.0
    """A connection with no request under way is closed after this long."""
    response_timeout_s: float = 60.0
    """From the end of the headers until the response is written (a client that does not read its answer)."""
    max_requests: int = 8
    """Requests answered at once; the others wait for a slot within their response deadline."""
    auth_failures: int = 10
    """Failed authentications per client address within a minute before it gets 429 for unproven credentials."""

    def fitted(self) -> ConnLimits:
        """These limits with ``max_connections`` lowered to fit ``RLIMIT_NOFILE`` (a warning says so)."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self
        room = max(8, int(soft) - FD_RESERVE)
        if self.max_connections <= room:
            return self
        log.warning(
            "--max-connections %d lowered to %d: the open-file limit is %d; raise it (LimitNOFILE= in the "
            "systemd unit, ulimit -n) to allow more",
            self.max_connections,
            room,
            soft,
        )
        return replace(self, max_connections=room)


class RateLog:
    """Counts an event and logs it at most once per ``every_s`` seconds, with the count since the last line."""

    def __init__(self, level: int, every_s: float = LOG_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.level = level
        self.every_s = every_s
        self.clock = clock
        self.total = 0
        self._pending = 0
        self._last: float | None = None
        self._lock = threading.Lock()

    def event(self, fmt: str, *args: object) -> None:
        """Count one; log ``fmt % args`` followed by the count when the interval has passed."""
        now = self.clock()
        with self._lock:
            self.total += 1
            self._pending += 1
            if self._last is not None and now - self._last < self.every_s:
                return
            count, self._pending, self._last = self._pending, 0, now
        log.log(
            self.level,
            fmt + " (%d time(s) since the last such line; logged at most every %.0f s)",
            *args,
            count,
            self.every_s,
        )


IDLE, HANDSHAKE, HEADERS, RESPONSE = "idle", "handshake", "headers", "response"


class Conn:
    """One accepted connection: its socket, state and the deadline of that state (monotonic seconds)."""

    __slots__ = ("closed", "deadline", "peer", "since", "sock", "state")

    def __init__(self, sock: socket.socket, peer: str, state: str, timeout_s: float) -> None:
        self.sock = sock
        self.peer = peer
        self.closed = False
        self.state = state
        self.since = time.monotonic()
        self.deadline = self.since + timeout_s

    def enter(self, state: str, timeout_s: float) -> None:
        self.state = state
        self.since = time.monotonic()
        self.deadline = self.since + timeout_s

    def idle(self, now: float) -> bool:
        """Whether it may be closed to make room: nothing under way, or headers trickling for too long."""
        return self.state == IDLE or (self.state == HEADERS and now - self.since >= SLOW_HEADERS_S)

    def kill(self) -> None:
        """Shut the socket down: the connection's thread wakes from its read or write and ends."""
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)


class ConnTable:
    """The open connections of one server, the cap on them and their deadlines."""

    def __init__(self, limits: ConnLimits) -> None:
        self.limits = limits
        self._conns: dict[int, Conn] = {}
        self._lock = threading.Lock()
        self.refused = RateLog(logging.WARNING)
        self.evicted = RateLog(logging.INFO)
        self.expired = RateLog(logging.INFO)
        self.requests = threading.BoundedSemaphore(limits.max_requests)

    def __len__(self) -> int:
        return len(self._conns)

    def admit(self, sock: socket.socket, peer: str, state: str, timeout_s: float) -> Conn | None:
        """Register a new connection, closing the longest-idle one when the cap is reached; None: refuse it."""
        now = time.monotonic()
        victim: Conn | None = None
        conn: Conn | None = None
        with self._lock:
            open_now = len(self._conns)
            if open_now >= self.limits.max_connections:
                victim = self._idlest(now)
                if victim is not None:
                    del self._conns[id(victim.sock)]
            if open_now < self.limits.max_connections or victim is not None:
                conn = Conn(sock, peer, state, timeout_s)
                self._conns[id(sock)] = conn
        if victim is not None:
            victim.kill()
            self.evicted.event(
                "HTTP connection cap %d reached: closed the longest-idle connection (from %s) for a new one",
                self.limits.max_connections,
                victim.peer,
            )
        elif conn is None:
            self.refused.event(
                "HTTP connection cap reached: %d connections open, none idle; refused one from %s "
                "(raise --max-connections, or find the client holding them)",
                open_now,
                peer,
            )
        return conn

    def rebind(self, old: socket.socket, new: socket.socket) -> None:
        """The connection's socket was replaced (wrapped in TLS)."""
        with self._lock:
            conn = self._conns.pop(id(old), None)
            if conn is not None:
                conn.sock = new
                self._conns[id(new)] = conn

    def get(self, sock: socket.socket) -> Conn | None:
        return self._conns.get(id(sock))

    def release(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.pop(id(sock), None)

    def _idlest(self, now: float) -> Conn | None:
        best: Conn | None = None
        for c in self._conns.values():
            if c.idle(now) and (best is None or (c.state, c.since) < (best.state, best.since)):
                best = c  # idle connections before trickling ones ("headers" > "idle"), then the oldest
        return best

    def free_one(self) -> bool:
        """Close the longest-idle connection (descriptors ran out); False when none is idle."""
        with self._lock:
            victim = self._idlest(time.monotonic())
            if victim is not None:
                del self._conns[id(victim.sock)]
        if victim is None:
            return False
        victim.kill()
        return True

    def reap(self) -> None:
        """Shut down every connection past its deadline."""
        now = time.monotonic()
        with self._lock:
            late = [c for c in self._conns.values() if c.deadline <= now and not c.closed]
        for c in late:
            c.kill()
            self.expired.event("HTTP connection from %s closed: %s deadline passed", c.peer, c.state)


class AuthGate:
    """Basic auth behind a limiter, so that a flood of wrong credentials cannot starve real scrapes.

    ``check`` is the web config's own check (bcrypt; constant-time concerns are its own). Around it: credentials
    that passed are remembered (a SHA-256 of the header) and go straight to ``check``, which answers them from its
    cache; credentials that failed are refused from a cache for :attr:`FAILED_TTL_S`; at most one check of unproven
    credentials runs at a time, waited for up to :attr:`WAIT_S`; a client address with ``max_failures`` failures in
    the last minute is refused (429) for unproven credentials until the minute has passed.
    """

    FAILED_TTL_S = 300.0
    FAILED_MAX = 4096
    PROVEN_MAX = 64
    ADDRS_MAX = 4096
    WINDOW_S = 60.0
    WAIT_S = 5.0

    OK, DENIED, LIMITED, BUSY = "ok", "denied", "limited", "busy"

    def __init__(self, check: Callable[[str | None], bool], max_failures: int) -> None:
        self.check = check
        self.max_failures = max_failures
        self._proven: OrderedDict[bytes, None] = OrderedDict()
        self._failed: OrderedDict[bytes, float] = OrderedDict()
        self._by_addr: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()
        self._slow = threading.Lock()
        self.limited = RateLog(logging.WARNING)

    def verdict(self, header: str | None, addr: str) -> str:
        """OK, DENIED (401), LIMITED (429: too many failures from ``addr``) or BUSY (503: no check slot in time)."""
        if not header or not header.startswith("Basic "):
            return self.OK if self.check(header) else self.DENIED  # no password to check: no bcrypt
        key = hashlib.sha256(header.encode("utf-8", "surrogateescape")).digest()
        now = time.monotonic()
        with self._lock:
            if key in self._proven:
                self._proven.move_to_end(key)
                proven = True
            else:
                proven = False
                until = self._failed.get(key)
                if until is not None and until > now:
                    return self.DENIED
                fails = self._by_addr.get(addr, deque())
                while fails and fails[0] <= now - self.WINDOW_S:
                    fails.popleft()
                limited = len(fails) >= self.max_failures
        if proven:
            return self.OK if self.check(header) else self.DENIED
        if limited:
            self.limited.event(
                "authentication from %s refused (429): %d failures within %.0f s",
                addr,
                self.max_failures,
                self.WINDOW_S,
            )
            return self.LIMITED
        if not self._slow.acquire(timeout=self.WAIT_S):
            return self.BUSY
        try:
            ok = self.check(header)
        finally:
            self._slow.release()
        with self._lock:
            if ok:
                self._proven[key] = None
                while len(self._proven) > self.PROVEN_MAX:
                    self._proven.popitem(last=False)
            else:
                self._failed[key] = time.monotonic() + self.FAILED_TTL_S
                self._failed.move_to_end(key)
                while len(self._failed) > self.FAILED_MAX:
                    self._failed.popitem(last=False)
                fails = self._by_addr.setdefault(addr, deque())
                self._by_addr.move_to_end(addr)
                fails.append(time.monotonic())
                while len(self._by_addr) > self.ADDRS_MAX:
                    self._by_addr.popitem(last=False)
        return self.OK if ok else self.DENIED
