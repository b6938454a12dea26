"""Switch poller behaviour that needs no switch: a refused connection, an optional command a device lacks, a hung
session, and reconnecting after a failure. The sessions here are in-memory stand-ins (no SSH), because these are
failure paths of the poller itself; tests/integration/test_export_switches_lab.py drives the real lab over SSH."""

from __future__ import annotations

import threading
from pathlib import Path

from fabricd.collectors.core import Registry
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget, commands_for

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers" / "switch" / "sonic"


def capture(name: str) -> str:
    return (GOLDEN / name).read_text().partition("\n")[2]


OUTPUTS = {
    "show pfc counters": capture("show-pfc-counters-ntc.txt"),
    "show queue counters": capture("show-queue-counters-td3-issue6290.txt"),
    "show queue wredcounters": capture("show-queue-wredcounters-sonic-utilities-test.txt"),
    "show pfcwd stats": capture("pfcwd-show-stats-stormed-dx010-issue5898.txt"),
}


def sample(text: str, series: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


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
    assert sample(text, 'fabricd_switch_up{switch="gone"}') == 0
    assert sample(text, 'fabricd_switch_up{switch="ok"}') == 1
    assert sample(text, 'fabricd_switch_pfcwd_stormed{switch="ok",interface="Ethernet44",priority="4"}') == 1
    assert sample(text, 'fabricd_scrape_collector_success{collector="switch"}') == 0


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
            assert sample(text, 'fabricd_switch_up{switch="s1"}') == 1
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

    poller = SwitchPoller([SwitchTarget("s1", "sonic")], factory)
    try:
        reg = Registry([SwitchCollector(poller)])
        assert sample(reg.exposition(), 'fabricd_switch_up{switch="s1"}') == 0
        state["fail"] = False
        assert sample(reg.exposition(), 'fabricd_switch_up{switch="s1"}') == 1
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
        assert sample(reg.exposition(), 'fabricd_switch_up{switch="slow"}') == 0  # timed out
        assert sample(reg.exposition(), 'fabricd_switch_up{switch="slow"}') == 0  # still running: not re-polled
    finally:
        release.set()
        poller.close()


def test_nvue_per_interface_commands() -> None:
    target = SwitchTarget("leaf4", "cumulus_nvue", ("swp1", "swp2"))
    cmds = [c for _, c, _ in commands_for(target)]
    assert cmds == ["nv show interface swp1 counters qos -o json", "nv show interface swp2 counters qos -o json"]
