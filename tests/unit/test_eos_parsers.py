"""EOS show-output parsers on the real shapes (tests/golden/readers/switch/arista_eos/*-anta.txt, ntc-templates) and
the rule that an output the parser does not recognise is a problem, never an empty success."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fabricd.nos.arista_eos import show as arista_eos
from fabricd.readers.switch.model import SwitchCounters

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers" / "switch" / "arista_eos"


def capture(name: str) -> str:
    return (GOLDEN / name).read_text().partition("\n")[2]


def test_ecn_counters_real_shape_values() -> None:
    """ANTA's eAPI output: counts are strings, '-' is a queue without ECN (skipped, not 0)."""
    got = arista_eos.parse_show_qos_ecn_counters(capture("show-qos-ecn-counters-json-anta.txt"))
    assert got.problems == ()
    marked = {(q.interface, q.index): q.ecn_marked_packets for q in got.queues}
    assert marked[("Ethernet10/20/1", 1)] == 2 and marked[("Ethernet10/3/1", 2)] == 2
    assert ("Ethernet10/28/1", 0) not in marked and ("Ethernet10/16/1", 2) not in marked
    assert len(marked) == 10


def test_pfc_counters_real_shape_values() -> None:
    got = arista_eos.parse_show_priority_flow_control_counters(capture("show-pfc-counters-json-anta.txt"))
    frames = {(p.interface, p.direction): p.frames for p in got.pfc}
    assert frames[("Ethernet3/1/1", "rx")] == 1 and frames[("Ethernet3/2/1", "tx")] == 2
    assert all(p.priority is None for p in got.pfc) and got.problems == ()


def test_watchdog_before_any_event_is_an_empty_valid_answer() -> None:
    """EOS answers {"interfaces": {}} until a first watchdog event (facebook/DNE-TaaC pfc_wd_health_check.py)."""
    got = arista_eos.parse_show_pfc_counters_watchdog('{\n  "interfaces": {}\n}\n')
    assert got.pfcwd == () and got.problems == ()


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        # the invented shape fabricd's parser and lab used to speak: the real output has no 'interfaces' key
        (
            arista_eos.parse_show_qos_ecn_counters,
            '{"interfaces": {"Ethernet1": {"txQueues": {"3": {"ecnMarkedPackets": 5}}}}}',
        ),
        (arista_eos.parse_show_qos_ecn_counters, "% Invalid input"),
        (arista_eos.parse_show_pfc_counters_watchdog, '{"intfQueueCounters": {}}'),
        (arista_eos.parse_show_pfc_counters_watchdog, "{not json"),
        (arista_eos.parse_show_priority_flow_control_counters, '{"errors": ["boom"]}'),
        (arista_eos.parse_show_priority_flow_control_counters, "something else entirely"),
        (arista_eos.parse_show_interfaces_counters_queue_detail, "% Invalid input (at token 3: 'detail')"),
        (
            arista_eos.parse_show_hardware_counter_drop,
            "% Unavailable command (not supported on this hardware platform)",
        ),
    ],
)
def test_unrecognised_output_is_a_problem(parser: Callable[[str], SwitchCounters], text: str) -> None:
    got = parser(text)
    assert len(got.problems) == 1, got
    assert "output starts" in got.problems[0]
    assert not (got.pfc or got.queues or got.pfcwd or got.drops)


@pytest.mark.parametrize(
    "parser",
    [
        arista_eos.parse_show_qos_ecn_counters,
        arista_eos.parse_show_pfc_counters_watchdog,
        arista_eos.parse_show_priority_flow_control_counters,
        arista_eos.parse_show_interfaces_counters_queue_detail,
    ],
)
def test_empty_output_is_empty_without_a_problem(parser: Callable[[str], SwitchCounters]) -> None:
    got = parser("")
    assert got.problems == ()


def test_the_old_invented_ecn_shape_fails_the_poll() -> None:
    """Through the collector's merge: the ECN output in the shape fabricd used to expect is a problem of the poll
    (collector success 0), while the real shapes of the other commands still parse."""
    from fabricd.collectors.switch import SwitchTarget, parse_outputs

    target = SwitchTarget("leaf-eos", "arista_eos")
    outputs = {
        arista_eos.COMMANDS["pfc"]: capture("show-pfc-counters-json-anta.txt"),
        arista_eos.COMMANDS["queue"]: capture("show-interfaces-counters-queue-detail-egress-ntc.txt"),
        arista_eos.COMMANDS["ecn"]: '{"interfaces": {"Ethernet1": {"txQueues": {"3": {"ecnMarkedPackets": 5}}}}}',
        arista_eos.COMMANDS["pfcwd"]: '{"interfaces": {}}',
    }
    got = parse_outputs(target, outputs)
    assert len(got.problems) == 1 and arista_eos.COMMANDS["ecn"] in got.problems[0]
    assert got.pfc and got.queues
    outputs[arista_eos.COMMANDS["ecn"]] = capture("show-qos-ecn-counters-json-anta.txt")
    assert parse_outputs(target, outputs).problems == ()
