"""Switch poller behaviour that needs no switch: a refused connection, an optional command a device lacks, a hung
session, and reconnecting after a failure. The sessions here are in-memory stand-ins (no SSH), because these are
failure paths of the poller itself; tests/integration/test_export_switches_lab.py drives the real lab over SSH."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from metrics_text import metric_value

from fabricd.collectors.core import Registry
from fabricd.collectors.switch import Backoff, SwitchCollector, SwitchPoller, SwitchTarget, commands_for

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers" / "switch" / "sonic"


def capture(name: str) -> str:
    return (GOLDEN / name).read_text().partition("\n")[2]


OUTPUTS = {
    "show pfc counters": capture("show-pfc-counters-ntc.txt"),
    "show queue counters": capture("show-queue-counters-td3-issue6290.txt"),
    "show queue wredcounters": capture("show-queue-wredcounters-sonic-utilities-test.txt"),
    "show pfcwd stats": capture("pfcwd-show-stats-stormed-dx010-issue5898.txt"),
}


class Session:
    """Answers the required SONiC commands from captures; the optional PFC-history command fails like an old
    release's ``Error: no such option``."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.closed = False

    def run(self, commands: list[str]) -> dict[str, str]:
        self.log.extend(commands)
        if commands == ["show pfc counters --history"]:
            raise RuntimeError("Error: no such option: --history")
        return {c: OUTPUTS[c] for c in commands}

    def close(self) -> None:
        self.closed = True


def test_refused_switch_is_down_and_others_still_exported() -> None:
    log: list[str] = []

    def factory(target: SwitchTarget) -> Session:
        if target.name == "gone":
            raise ConnectionRefusedError("connection refused")
        return Session(log)

    poller = SwitchPoller([SwitchTarget("gone", "sonic"), SwitchTarget("ok", "sonic")], factory)
    try:
        text = Registry([SwitchCollector(poller)]).exposition()
    finally:
        poller.close()
    assert metric_value(text, 'fabricd_switch_up{switch="gone"}') == 0
    assert metric_value(text, 'fabricd_switch_up{switch="ok"}') == 1
    assert metric_value(text, 'fabricd_switch_pfcwd_stormed{switch="ok",interface="Ethernet44",priority="4"}') == 1
    assert metric_value(text, 'fabricd_scrape_collector_success{collector="switch"}') == 0


def test_optional_command_asked_once_per_session_and_session_kept() -> None:
    log: list[str] = []
    opened: list[Session] = []

    def factory(target: SwitchTarget) -> Session:
        opened.append(Session(log))
        return opened[-1]

    poller = SwitchPoller([SwitchTarget("s1", "sonic")], factory)
    try:
        reg = Registry([SwitchCollector(poller)])
        for _ in range(3):
            text = reg.exposition()
            assert metric_value(text, 'fabricd_switch_up{switch="s1"}') == 1
    finally:
        poller.close()
    assert len(opened) == 1 and opened[0].closed
    assert log.count("show pfc counters --history") == 1
    assert log.count("show pfc counters") == 3


def test_failed_poll_reconnects_next_scrape() -> None:
    state = {"fail": True}
    opened: list[Session] = []

    class Flaky(Session):
        def run(self, commands: list[str]) -> dict[str, str]:
            if state["fail"]:
                raise EOFError("session dropped")
            return super().run(commands)

    def factory(target: SwitchTarget) -> Session:
        opened.append(Flaky([]))
        return opened[-1]

    now = [0.0]
    poller = SwitchPoller(
        [SwitchTarget("s1", "sonic")], factory, clock=lambda: now[0], backoff=Backoff(base_s=5.0, jitter=0.0)
    )
    try:
        reg = Registry([SwitchCollector(poller)])
        assert metric_value(reg.exposition(), 'fabricd_switch_up{switch="s1"}') == 0
        state["fail"] = False
        text = reg.exposition()  # backing off: not re-dialled yet
        assert metric_value(text, 'fabricd_switch_up{switch="s1"}') == 0 and len(opened) == 1
        assert metric_value(text, 'fabricd_switch_consecutive_failures{switch="s1"}') == 1
        now[0] = 5.0
        text = reg.exposition()
        assert metric_value(text, 'fabricd_switch_up{switch="s1"}') == 1
        assert metric_value(text, 'fabricd_switch_consecutive_failures{switch="s1"}') == 0
        assert metric_value(text, 'fabricd_switch_connection_attempts_total{switch="s1"}') == 2
    finally:
        poller.close()
    assert len(opened) == 2 and opened[0].closed


def test_hung_session_times_out_and_is_not_polled_twice() -> None:
    release = threading.Event()

    class Hung(Session):
        def run(self, commands: list[str]) -> dict[str, str]:
            release.wait(10)
            return super().run(commands)

    poller = SwitchPoller([SwitchTarget("slow", "sonic")], lambda t: Hung([]), timeout_s=0.2)
    try:
        reg = Registry([SwitchCollector(poller)])
        assert metric_value(reg.exposition(), 'fabricd_switch_up{switch="slow"}') == 0  # timed out
        assert metric_value(reg.exposition(), 'fabricd_switch_up{switch="slow"}') == 0  # still running: not re-polled
    finally:
        release.set()
        poller.close()


def test_nvue_per_interface_commands() -> None:
    target = SwitchTarget("leaf4", "cumulus_nvue", ("swp1", "swp2"))
    cmds = [c for _, c, _ in commands_for(target)]
    assert cmds == ["nv show interface swp1 counters qos -o json", "nv show interface swp2 counters qos -o json"]


def test_backoff_delay_doubles_up_to_the_ceiling_with_jitter() -> None:
    b = Backoff(base_s=1.0, ceiling_s=10.0, jitter=0.5)
    assert [b.delay(n, lambda: 0.0) for n in range(6)] == [0.0, 1.0, 2.0, 4.0, 8.0, 10.0]
    assert b.delay(50, lambda: 1.0) == 5.0  # the most jitter takes half off
    assert b.delay(10_000, lambda: 0.0) == 10.0  # no overflow far past the ceiling


def test_down_switch_is_redialled_with_backoff_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """120 polls one (fake) second apart against a refusing switch: a handful of attempts, not 120; the healthy one
    answers every poll; one WARNING when it goes down, one INFO when it comes back, and last_error clears."""
    now = [0.0]
    refused = {"on": True}
    tries: list[float] = []

    def factory(target: SwitchTarget) -> Session:
        if target.name == "gone":
            tries.append(now[0])
            if refused["on"]:
                raise ConnectionRefusedError(111, "Connection refused\n(netmiko puts the advice on more lines)")
        return Session([])

    poller = SwitchPoller(
        [SwitchTarget("gone", "sonic"), SwitchTarget("ok", "sonic")],
        factory,
        clock=lambda: now[0],
        backoff=Backoff(base_s=1.0, ceiling_s=16.0, jitter=0.0),
    )
    caplog.set_level(logging.DEBUG, logger="fabricd.collectors.switch")
    try:
        fresh_ok = 0
        for second in range(120):
            now[0] = float(second)
            gone, ok = poller.poll()
            fresh_ok += ok.fresh and ok.counters is not None
            assert gone.counters is None and gone.error is not None and "\n" not in gone.error
        assert fresh_ok == 120
        # attempts at 0, 1, 3, 7, 15, then every 16 s: 31, 47, ..., 111
        assert tries == [0, 1, 3, 7, 15, 31, 47, 63, 79, 95, 111]
        (h_gone, h_ok) = poller.health()
        assert (h_gone.up, h_gone.attempts, h_gone.failures, h_gone.consecutive_failures) == (False, 11, 11, 11)
        assert h_gone.last_error is not None and "ConnectionRefusedError" in h_gone.last_error
        assert h_gone.retry_in_s == 16 - (119 - 111)
        assert (h_ok.up, h_ok.attempts, h_ok.polls, h_ok.failures) == (True, 1, 120, 0)
        refused["on"] = False
        now[0] = 127.0
        gone, _ = poller.poll()
        assert gone.counters is not None and gone.health is not None
        assert gone.health.last_error is None and gone.health.consecutive_failures == 0
    finally:
        poller.close()
    lines = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.levelno >= logging.INFO and "not supported" not in r.getMessage()
    ]  # the stand-in's old release
    assert [lvl for lvl, _ in lines] == ["WARNING", "INFO"], lines
    assert "switch gone: down" in lines[0][1] and "switch gone: up again" in lines[1][1]


def test_hung_poll_is_one_overrun_and_one_failure_and_others_are_not_held() -> None:
    """A session that never answers: past its deadline it counts once as an overrun and a failure, is never
    started twice, and the healthy switch's results stay fresh on every poll meanwhile (real time, 0.2 s deadline).

    Under load: a round is far shorter than the hung session's 10 s (held at a load average of 10 on 2 cores), and
    its late failure is waited for (with a deadline), not assumed done after a sleep."""
    release = threading.Event()

    class Hung(Session):
        def run(self, commands: list[str]) -> dict[str, str]:
            release.wait(10)
            raise EOFError("gave up")

    opened: list[str] = []

    def factory(target: SwitchTarget) -> Session:
        opened.append(target.name)
        return Hung([]) if target.name == "hung" else Session([])

    poller = SwitchPoller(
        [SwitchTarget("hung", "sonic"), SwitchTarget("ok", "sonic")],
        factory,
        timeout_s=0.2,
        backoff=Backoff(base_s=30.0),
    )
    try:
        for _ in range(4):
            t0 = time.monotonic()
            hung, ok = poller.poll(wait_s=0.1)
            # the hung session blocks for 10 s: a round far shorter than that did not wait on it (a bound near
            # wait_s would time the machine, not the poller; this one held at a load average of 6.5 on 2 cores)
            assert time.monotonic() - t0 < 5.0
            assert ok.fresh and ok.counters is not None
            time.sleep(0.05)
        hung, _ = poller.poll(wait_s=0.1)
        assert hung.counters is None and hung.error is not None and "no answer within 0.2 s" in hung.error
        assert hung.health is not None
        assert (hung.health.overruns, hung.health.failures, hung.health.attempts) == (1, 1, 1)
        release.set()
        # the late failure: collected by the first round after the session gave up (however long a loaded machine
        # takes to run it), not counted twice, now backing off
        deadline = time.monotonic() + 10.0
        while True:
            hung, _ = poller.poll(wait_s=0.1)
            assert hung.health is not None
            if hung.health.retry_in_s is not None or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert hung.health.failures == 1 and hung.health.retry_in_s is not None, hung.health
        assert hung.health.last_error == "EOFError: gave up"
    finally:
        release.set()
        poller.close()
    assert opened.count("hung") == 1


def test_fleet_feeds_the_watchdog_only_new_results(lab_inventory: Path) -> None:
    """A round that ends before a slow switch answers hands its previous counters to the exporter but not to the
    watchdog (a repeated sample would look like a quiet counter); the next round delivers the late answer.

    Under load: rounds are repeated until a poll has answered (each counted in ``calls``), so what is asserted is
    which poll's counters reach the watchdog, never how many rounds the machine took."""
    from fabricd.inventory import load_inventory
    from fabricd.service.wiring import SwitchFleet

    calls = {"n": 0}

    class Slow(Session):
        def run(self, commands: list[str]) -> dict[str, str]:
            if "show pfc counters" in commands:  # the required batch: once per poll
                calls["n"] += 1
                if calls["n"] == 2:
                    time.sleep(0.6)
            return super().run(commands)

    fabric = load_inventory(lab_inventory).fabric
    fleet = SwitchFleet(fabric, ["leaf1-sonic"], factory=lambda t: Slow([]), wait_s=0.2, timeout_s=5.0)
    try:
        first = fleet.poll(0.0)
        for t in range(1, 50):  # a loaded machine may not finish the first (fast) poll in one 0.2 s round
            if first.pause:
                break
            first = fleet.poll(t / 100)
        assert calls["n"] == 1 and first.pause and not first.problems
        second = fleet.poll(1.0)  # the 0.6 s poll outlasts this 0.2 s round: nothing new for the watchdog
        assert not second.pause and not second.problems
        (latest,) = fleet.latest()
        assert latest.counters is not None and not latest.fresh  # the exporter keeps the last counters
        time.sleep(0.6)
        third = fleet.poll(2.0)
        for t in range(3, 50):  # until the late answer arrives (at once when unloaded), nothing new meanwhile
            if third.pause:
                break
            assert not fleet.latest()[0].fresh
            third = fleet.poll(float(t))
        assert calls["n"] == 2 and third.pause and fleet.latest()[0].fresh
    finally:
        fleet.close()


def test_a_poll_queued_behind_busy_workers_is_not_overdue() -> None:
    """One worker, a switch that takes 0.5 s and a 0.3 s deadline: the slow one is an overrun (it answered late,
    while the call waited for the other, so not a failure); the one waiting for the worker is not an overrun (its
    deadline starts when it starts) and answers in the same call."""
    slow_once = threading.Event()

    class Slow(Session):
        def run(self, commands: list[str]) -> dict[str, str]:
            if not slow_once.is_set():
                slow_once.set()
                time.sleep(0.5)
            return super().run(commands)

    poller = SwitchPoller(
        [SwitchTarget("slow", "sonic"), SwitchTarget("queued", "sonic")],
        lambda t: Slow([]) if t.name == "slow" else Session([]),
        concurrency=1,
        timeout_s=0.3,
    )
    try:
        slow, queued = poller.poll()
        assert slow.health is not None and slow.health.overruns == 1 and slow.health.failures == 0
        assert queued.counters is not None and queued.fresh
        assert queued.health is not None and queued.health.overruns == 0 and queued.health.failures == 0
    finally:
        poller.close()
