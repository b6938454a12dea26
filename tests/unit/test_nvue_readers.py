"""Cumulus NVUE readers against shapes NVIDIA documents: an output fabricd cannot read is a problem, never an empty
success; the watchdog state and NVUE's compressed interface lists are read as NVUE prints them."""

from __future__ import annotations

from typing import Any

from fabricd.nos.cumulus_nvue import show as cumulus_nvue
from fabricd.nos.cumulus_nvue.running import interfaces, parse_running_config

DISABLED = """\
                 operational  applied 
---------------  -----------  ------- 
state            disabled     disabled
"""  # noqa: W291 - NVUE pads its columns


def test_unknown_shapes_are_problems_not_empty_successes() -> None:
    for parse, text in (
        (cumulus_nvue.parse_pfc_watchdog, "traffic class 3 is fine\n"),
        (cumulus_nvue.parse_counters_qos, '{"egress-queues": {"3": {"frames": 1}}}'),
        (cumulus_nvue.parse_counters_qos, "Egress Queue Statistics\n=====\nnothing here\n"),
        (cumulus_nvue.parse_qos_roce_counters, "something else entirely\n"),
    ):
        got = parse(text, "swp1")
        assert got.problems and "swp1: nothing read" in got.problems[0], (parse.__name__, got)


def test_empty_output_is_not_a_problem_of_the_parser() -> None:
    """An empty reply is the poller's to report (no output for the command), not a parse problem."""
    assert cumulus_nvue.parse_pfc_watchdog("", "swp1").problems == ()
    assert cumulus_nvue.parse_counters_qos("", "swp1").problems == ()


def test_a_port_with_the_watchdog_disabled_has_no_rows_and_no_problem() -> None:
    got = cumulus_nvue.parse_pfc_watchdog(DISABLED, "swp1")
    assert got.pfcwd == () and got.problems == ()


def test_compressed_interface_lists() -> None:
    assert interfaces("swp1-2,32") == ["swp1", "swp2", "swp32"]
    assert interfaces("swp1-4,swp7") == ["swp1", "swp2", "swp3", "swp4", "swp7"]
    assert interfaces("swp1s0-1,swp3") == ["swp1s0", "swp1s1", "swp3"]
    assert interfaces("swp1,3-4") == ["swp1", "swp3", "swp4"]


def test_watchdog_state_in_the_running_config() -> None:
    base = "nv set qos pfc p switch-priority 3\nnv set interface swp1-2,32 qos pfc profile p\n"
    on = parse_running_config(
        base + "nv set interface swp1-2,32 qos pfc-watchdog state enable\n"
        "nv set interface swp2 qos pfc-watchdog state disable\n"
    )
    assert on.ports["swp1"].watchdog_priorities == frozenset({3})
    assert on.ports["swp32"].watchdog_priorities == frozenset({3})
    assert on.ports["swp2"].watchdog_priorities == frozenset()
    later = parse_running_config(base + "nv set interface swp1 qos pfc-watchdog state enabled\n")
    assert later.ports["swp1"].watchdog_priorities == frozenset({3})  # CL 5.15+ spelling
    bad = parse_running_config(base + "nv set interface swp1 qos pfc-watchdog state maybe\n")
    assert bad.problems and "unreadable pfc-watchdog state" in bad.problems[0]


def _lab_switch() -> object:
    from pathlib import Path

    from fabricd.inventory import load_inventory
    from fabricd_lab.runtime import spec_for, switch_class

    repo = Path(__file__).resolve().parents[2]
    sw = next(s for s in load_inventory(repo / "inventory" / "lab").fabric.switches if s.name == "leaf4-nvue")
    return switch_class(sw.platform)(spec_for(sw, password="x", port=0), clock=lambda: 1000.0)


def test_the_lab_prints_the_documented_shapes() -> None:
    """The simulator (a real part run in-process) answers as NVIDIA's captures print: the watchdog in the 5.11 guide's
    text shape (which the parser reads), no invented -o json for it, and `nv show system` as the command reference."""
    from fabricd_lab.counters import WatchdogSettings

    sim: Any = _lab_switch()
    sim.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3}), ports=frozenset({"swp1"})))
    shell = sim.open_shell()
    text = shell.handle("nv show interface swp1 qos pfc-watchdog").output
    assert "PFC WD Status" in text and "state            enabled      enabled" in text
    got = cumulus_nvue.parse_pfc_watchdog(text, "swp1")
    assert [c.queue for c in got.pfcwd] == list(range(8)) and got.problems == ()
    off = shell.handle("nv show interface swp2 qos pfc-watchdog").output
    assert cumulus_nvue.parse_pfc_watchdog(off, "swp2") == cumulus_nvue.SwitchCounters()
    assert shell.handle("nv show interface swp1 qos pfc-watchdog -o json").output.startswith("Error:")
    system = shell.handle("nv show system").output.splitlines()
    assert system[0].split() == ["operational", "applied"]
    assert [line.split()[0] for line in system[2:]] == ["hostname", "build", "uptime", "timezone"]
    assert "Cumulus Linux 5.11.0" in system[3]
