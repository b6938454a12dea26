"""A show command whose non-empty output parses to nothing is a failure, never a silent success (issue 16): the
switch collector reports ``fabricd_scrape_collector_success 0`` and ``fabricd_switch_up 0`` and logs one line naming
the switch and the command; ``fabricd audit switch`` reports an ``SW-PARSE`` finding.

The outputs are real captures answered to the *wrong* command (a SONiC table to an NX-OS ``| json`` command, an EOS
drop table to SONiC's commands), so these tests hold whichever parser is fixed or broken. The sessions are in-memory
stand-ins (no SSH): the lab simulators print the shapes the parsers read, so this failure path cannot be driven
through them; tests/integration/test_capture_replay.py drives the lab over SSH."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from metrics_text import metric_value

from fabricd.collectors.core import Registry
from fabricd.collectors.switch import PLATFORMS, SwitchCollector, SwitchPoller, SwitchTarget, commands_for
from fabricd.readers.switch.empty import has_rows, parsed_nothing

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers" / "switch"


def capture(rel: str) -> str:
    return (GOLDEN / rel).read_text().partition("\n")[2]


SONIC = {
    "show pfc counters": capture("sonic/show-pfc-counters-ntc.txt"),
    "show queue counters": capture("sonic/show-queue-counters-td3-issue6290.txt"),
    "show queue wredcounters": capture("sonic/show-queue-wredcounters-sonic-utilities-test.txt"),
    "show pfcwd stats": capture("sonic/pfcwd-show-stats-stormed-dx010-issue5898.txt"),
}
EOS_DROPS = capture("arista_eos/show-hardware-counter-drop-ntc.txt")
SONIC_PFC = SONIC["show pfc counters"]


class Session:
    """Answers each command from ``answers``, and every other one with ``default``."""

    def __init__(self, answers: dict[str, str], default: str) -> None:
        self.answers = answers
        self.default = default

    def run(self, commands: list[str]) -> dict[str, str]:
        return {c: self.answers.get(c, self.default) for c in commands}

    def close(self) -> None:
        pass


def test_one_unreadable_command_fails_the_switch(caplog: pytest.LogCaptureFixture) -> None:
    """SONiC answers every command with its real capture except ``show queue wredcounters``, which gets an EOS
    table: the rest is still exported, but the switch and the collector are not reported as fine."""
    answers = dict(SONIC)
    answers["show queue wredcounters"] = EOS_DROPS
    answers["show pfc counters --history"] = SONIC_PFC  # the optional command: also the wrong shape
    from fabricd.nos.sonic import show as sonic

    assert parsed_nothing(EOS_DROPS, sonic.parse_show_queue_wredcounters(EOS_DROPS))
    poller = SwitchPoller([SwitchTarget("leaf9", "sonic")], lambda t: Session(answers, ""))
    reg = Registry([SwitchCollector(poller)])
    try:
        with caplog.at_level(logging.DEBUG, logger="fabricd.collectors.switch"):
            text = reg.exposition()
            first = [
                r.getMessage()
                for r in caplog.records
                if r.levelno >= logging.WARNING and r.name == "fabricd.collectors.switch"
            ]
            caplog.clear()
            second_text = reg.exposition()
            second = [
                r.getMessage()
                for r in caplog.records
                if r.levelno >= logging.WARNING and r.name == "fabricd.collectors.switch"
            ]
    finally:
        poller.close()
    for exposition in (text, second_text):
        assert metric_value(exposition, 'fabricd_scrape_collector_success{collector="switch"}') == 0
        assert metric_value(exposition, 'fabricd_switch_up{switch="leaf9"}') == 0
    # what did parse is still exported
    assert (
        metric_value(
            text,
            'fabricd_switch_pfc_pause_frames_total{switch="leaf9",interface="Ethernet52",priority="3",direction="rx"}',
        )
        == 52
    )
    empty = [m for m in first if "parsed to nothing" in m]
    assert len(empty) == 2, first  # one line per command: the required one and the optional one
    assert any("leaf9" in m and "'show queue wredcounters'" in m for m in empty)
    assert any("'show pfc counters --history'" in m for m in empty)
    assert not [m for m in second if "parsed to nothing" in m], "logged once when it starts, not every scrape"


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_wrong_shape_on_every_platform_is_a_failure(platform: str) -> None:
    """Every command of every platform answered with a real output of another command: the poll fails and each
    command whose parser read nothing (and said nothing) is named."""
    wrong = EOS_DROPS if platform != "arista_eos" else SONIC_PFC
    show = PLATFORMS[platform]
    per_port = any("{interface}" in c for c in (*show.commands.values(), *show.optional.values()))
    target = SwitchTarget("sw1", platform, ("swp1",) if per_port else ())  # a pack that polls per port gets one
    poller = SwitchPoller([target], lambda t: Session({}, wrong))
    try:
        (poll,) = poller.poll()
    finally:
        poller.close()
    assert poll.counters is not None and poll.error is None
    silent = []
    for optional in (False, True):
        for role, command, interface in commands_for(target, optional=optional):
            parser = show.parsers[role]
            parsed = parser(wrong, interface) if interface is not None else parser(wrong)
            if not has_rows(parsed):
                # every platform parser reports a shape it does not know: an empty, problem-free result would be
                # taken as an empty answer
                assert parsed.problems, f"{platform}: {command!r} read nothing from another command's output silently"
                silent.append(command)
    assert silent, f"{platform}: the wrong-command output must be one the parsers read nothing from"
    for command in silent:
        assert any(
            p.startswith("sw1: ") and f"{command!r}" in p and "parsed to nothing" in p for p in poll.counters.problems
        ), command


# -- fabricd audit switch: SW-PARSE -----------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
LEAF = {"sonic": "leaf1-sonic", "arista_eos": "leaf2-eos", "cisco_nxos": "leaf3-nxos", "cumulus_nvue": "leaf4-nvue"}


def _audit(platform: str, running: str, watchdog_text: str) -> dict[str, tuple[str, list[str]]]:
    from fabricd.audit.switch import SwitchReadback, evaluate, parse_watchdog, watchdog_commands
    from fabricd.inventory import load_inventory
    from fabricd.nos.registry import SwitchIntentBuilder
    from fabricd.platforms.base import ConfigDelta

    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    switch = fabric.switch(LEAF[platform])
    assert switch is not None
    ports = [p.name for p in switch.ports]
    outputs = {c: watchdog_text for c, _ in watchdog_commands(switch.platform, ports)}
    back = SwitchReadback(
        "test", running, ConfigDelta(), parse_watchdog(switch.platform, outputs, ports, device=switch.name)
    )
    report = evaluate(SwitchIntentBuilder(fabric).build(switch), back)
    return {c.code: (c.status.value, [f.message for f in c.findings]) for c in report.checks}


@pytest.mark.parametrize("platform", sorted(LEAF))
def test_audit_reports_unreadable_outputs(platform: str) -> None:
    """A running config and watchdog output of the wrong command (real captures) are SW-PARSE findings naming the
    command; the stuck-watchdog check is skipped rather than passed on nothing."""
    wrong = EOS_DROPS if platform != "arista_eos" else SONIC_PFC
    checks = _audit(platform, wrong, wrong)
    status, messages = checks["SW-PARSE"]
    assert status == "fail", checks
    assert any(
        "running config" in m or "running-config" in m or "runningconfiguration" in m or "nv config show" in m
        for m in messages
    ), messages
    assert any("parsed to nothing" in m for m in messages), messages
    assert checks["SW-WD-STUCK"][0] == "skip"


def test_cli_error_and_content_rules() -> None:
    from fabricd.readers.switch.empty import cli_error, has_content

    assert cli_error("          ^\n% Invalid command at '^' marker.\n") == "% Invalid command at '^' marker."
    assert cli_error('Usage: show [OPTIONS] COMMAND [ARGS]...\nTry "show -h" for help.') is not None
    assert cli_error(SONIC_PFC) is None and cli_error(EOS_DROPS) is None
    assert not has_content(' {"interfaces": {}} ') and not has_content("\n \n")
    assert has_content('{"interfaces": {"Ethernet1": {"rx": 0}}}') and has_content("{not json")
    # a table header with no rows (the lab's `show pfcwd stats` before any watchdog) is nothing to report
    header_only = (
        "  QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP\n"
        "-------  --------  -------------------------  ------------"
    )
    assert not has_content(header_only)
    assert not has_content("Port  Rx  PFC0  PFC1  PFC2\n----  --  ----  ----  ----\n")
    assert has_content(header_only + "\nEthernet4  stormed  2/1  0/46,497,254")


def test_optional_command_rejected_in_text_is_unsupported_not_a_failure() -> None:
    """An optional command the device answers with its CLI error (NX-OS ``% Invalid command``) is remembered as
    unsupported, as when the driver raises; the poll still succeeds."""
    answers = dict(SONIC)
    answers["show pfc counters --history"] = "Error: No such option: --history\n"
    poller = SwitchPoller([SwitchTarget("s1", "sonic")], lambda t: Session(answers, ""))
    try:
        text = Registry([SwitchCollector(poller)]).exposition()
    finally:
        poller.close()
    assert metric_value(text, 'fabricd_scrape_collector_success{collector="switch"}') == 1
