"""The HTTP endpoints' bounds (fabricd/collectors/httplimits.py): the connection table's cap and eviction order, the
failed-authentication gate, the rate-limited log line, and the watchdog's overrun log. Real sockets (socketpairs)."""

from __future__ import annotations

import logging
import resource
import socket
import time

import pytest

from fabricd.collectors.httplimits import HEADERS, IDLE, RESPONSE, AuthGate, ConnLimits, ConnTable, RateLog
from fabricd.watchdog import runner


def _pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair()


def test_cap_evicts_the_longest_idle_then_refuses() -> None:
    table = ConnTable(ConnLimits(max_connections=2))
    (a, a_peer), (b, b_peer), (c, _c_peer), (d, _d_peer) = _pair(), _pair(), _pair(), _pair()
    ca = table.admit(a, "a", IDLE, 60)
    cb = table.admit(b, "b", IDLE, 60)
    assert ca is not None and cb is not None
    cb.enter(RESPONSE, 60)  # b is answering: never evicted
    assert table.admit(c, "c", IDLE, 60) is not None  # a (idle) was closed for c
    assert ca.closed and a_peer.recv(1) == b""
    cc = table.get(c)
    assert cc is not None
    cc.enter(HEADERS, 10)  # c has just started its headers: not yet "slow"
    assert table.admit(d, "d", IDLE, 60) is None  # nothing idle: refused
    assert table.refused.total == 1 and len(table) == 2
    for s in (a, a_peer, b, b_peer, c, d):
        s.close()


def test_reap_shuts_down_a_connection_past_its_deadline() -> None:
    """Under load: the deadline before the first reap is a minute away (a 50 ms one could pass while the test is
    descheduled), and the second reap runs once the clock is past the 50 ms deadline, however late that is."""
    table = ConnTable(ConnLimits())
    s, peer = _pair()
    conn = table.admit(s, "x", HEADERS, 60.0)
    assert conn is not None
    table.reap()
    assert not conn.closed
    conn.enter(HEADERS, 0.05)
    while time.monotonic() <= conn.deadline:
        time.sleep(0.01)
    table.reap()
    assert conn.closed and peer.recv(1) == b""
    s.close()
    peer.close()


def test_limits_fit_the_open_file_limit(caplog: pytest.LogCaptureFixture) -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    with caplog.at_level(logging.WARNING):
        fitted = ConnLimits(max_connections=10**9).fitted()
    assert fitted.max_connections == max(8, soft - 64)
    assert "open-file limit" in caplog.text and "LimitNOFILE" in caplog.text


def test_auth_gate_caches_failures_and_throttles_an_address() -> None:
    calls: list[str | None] = []

    def check(header: str | None) -> bool:
        calls.append(header)
        return header == "Basic good"

    gate = AuthGate(check, max_failures=3)
    assert gate.verdict("Basic good", "10.0.0.1") == AuthGate.OK
    for i in range(3):
        assert gate.verdict(f"Basic bad{i}", "10.0.0.9") == AuthGate.DENIED
    n = len(calls)
    assert gate.verdict("Basic bad0", "10.0.0.9") == AuthGate.DENIED  # a known failure: no check
    assert gate.verdict("Basic bad-new", "10.0.0.9") == AuthGate.LIMITED  # too many failures from this address
    assert len(calls) == n
    assert gate.verdict("Basic good", "10.0.0.9") == AuthGate.OK  # proven credentials pass from the same address
    assert gate.verdict("Basic other", "10.0.0.2") == AuthGate.DENIED  # another address is not throttled
    assert gate.verdict(None, "10.0.0.9") == AuthGate.DENIED


def test_rate_log_logs_once_per_interval_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    rl = RateLog(logging.WARNING, every_s=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            rl.event("refused %s", "x")
        now[0] = 61.0
        rl.event("refused %s", "y")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and rl.total == 6
    assert lines[0].startswith("refused x (1 time(s)") and lines[1].startswith("refused y (5 time(s)")


def test_watchdog_overrun_is_logged_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    st = runner._SourceState()
    with caplog.at_level(logging.WARNING):
        for t in (0.0, 1.0, 2.0, 61.0):
            st.overruns += 1
            runner.Watchdog._log_overrun("host:gpu1", st, t, 3, 0.05)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "host:gpu1 fell behind its schedule" in lines[0] and "3 poll period(s) (50 ms each)" in lines[0]
    assert "3 overrun(s) since the last such line" in lines[1]
