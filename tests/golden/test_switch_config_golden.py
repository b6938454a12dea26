"""Golden tests of the running-config parsers (fabricd/readers/switch/config_<platform>.py) and of the pure half of
``fabricd audit switch`` (:func:`fabricd.audit.switch.evaluate`).

Captures in tests/golden/switch_config/<platform>/: real configs copied from ../shared/fixtures (EOS AVD qos
profiles, NX-OS Azure Local TOR policies) and the lab simulators' configs after a push of inventory/lab
(``capture_lab.py``), each with a first ``# source:`` line. Each has an expected normalised JSON next to it;
regenerate with ``pytest tests/golden/test_switch_config_golden.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricd.audit.report import AuditReport, Status
from fabricd.audit.switch import CONFIG_PARSERS, SWITCH_CHECKS, SwitchReadback, evaluate, intended_timers, is_stuck
from fabricd.inventory import load_inventory
from fabricd.model import Platform
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd.nos.cumulus_nvue.running import interfaces
from fabricd.nos.registry import AnySwitchIntent, SwitchIntentBuilder
from fabricd.platforms.base import ConfigDelta
from fabricd.readers.switch.config_model import LosslessConfig, int_list
from fabricd.readers.switch.model import PfcwdCounter, SwitchCounters

GOLDEN = Path(__file__).parent / "switch_config"
REPO = Path(__file__).resolve().parents[2]
LEAF = {
    Platform.SONIC: "leaf1-sonic",
    Platform.ARISTA_EOS: "leaf2-eos",
    Platform.CISCO_NXOS: "leaf3-nxos",
    Platform.CUMULUS_NVUE: "leaf4-nvue",
}
CAPTURES = sorted(GOLDEN.glob("*/*.txt"))


def capture(path: Path) -> str:
    text = path.read_text()
    first, _, rest = text.partition("\n")
    assert first.startswith("# source:"), f"{path} must start with a '# source:' line"
    return rest


def as_json(config: LosslessConfig) -> Any:
    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): fix(v) for k, v in value.items()}
        if isinstance(value, frozenset | set):
            return sorted(value)
        if isinstance(value, list | tuple):
            return [fix(v) for v in value]
        return value

    return fix(dataclasses.asdict(config))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_config_golden(path: Path, update_goldens: bool) -> None:
    config = CONFIG_PARSERS[Platform(path.parent.name)](capture(path))
    got = json.dumps(as_json(config), indent=1, sort_keys=True) + "\n"
    expected = path.with_suffix(".json")
    if update_goldens:
        expected.write_text(got)
        return
    assert expected.exists(), f"missing golden {expected}; run pytest --update-goldens and review it"
    assert json.loads(got) == json.loads(expected.read_text()), f"{expected} differs"


def test_real_captures_key_facts() -> None:
    """Values read by eye from the real captures."""
    eos = CONFIG_PARSERS[Platform.ARISTA_EOS](capture(GOLDEN / "arista_eos/avd-qos-profiles.txt"))
    test = eos.profiles["test"]
    assert test.trust == "dscp"
    assert test.ecn[2].min_bytes == 320_000 and test.ecn[2].probability_percent == 90
    assert test.ecn[4].min_bytes is None, "segments have no fixed size in bytes"
    pfc = eos.profiles["test_with_pfc"]
    # `priority-flow-control all off` at the top overrides the profile's `priority-flow-control on`
    assert pfc.pfc_priorities == frozenset() and pfc.pfc_note == "priority-flow-control all off (global)"
    assert (pfc.detection_ms, pfc.restoration_ms) == (50, 1110), "port timer: timeout 0.05, recovery-time 1.11"
    nx = CONFIG_PARSERS[Platform.CISCO_NXOS](capture(GOLDEN / "cisco_nxos/azurelocal-tor.txt"))
    port = nx.ports["Ethernet1/17"]
    assert port.trust == "pcp" and port.pcp_to_queue == {3: 3, 7: 7}
    assert port.pfc_priorities == frozenset({3}), "`priority-flow-control mode on send-tlv` + `pause pfc-cos 3`"
    assert port.watchdog_priorities == frozenset(), "no watch-dog-interval in the capture"
    assert port.ecn[3].enabled and port.ecn[3].max_bytes == 300_000
    assert port.queue_mtu_bytes == {0: 9216, 3: 9216, 7: 9216}


def test_list_helpers() -> None:
    assert int_list("0-25,27-47,49-63") == [*range(26), *range(27, 48), *range(49, 64)]
    assert int_list("0 1 2") == [0, 1, 2]
    assert int_list("3,x") is None and int_list("7-3") is None and int_list("64") is None
    assert interfaces("swp1-3,swp7") == ["swp1", "swp2", "swp3", "swp7"]
    assert interfaces("swp1s0-1") == ["swp1s0", "swp1s1"]


# ------------------------------------------------------------------------------------------------------------
# evaluate(): the lab captures against the lab intent, and edits of them
# ------------------------------------------------------------------------------------------------------------


def _intent(platform: Platform) -> AnySwitchIntent:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    switch = fabric.switch(LEAF[platform])
    assert switch is not None
    return SwitchIntentBuilder(fabric).build(switch)


def _evaluate(
    platform: Platform, edit: Callable[[str], str] = lambda t: t, pfcwd: tuple[PfcwdCounter, ...] = ()
) -> AuditReport:
    text = edit(capture(GOLDEN / platform.value / "lab-pushed.txt"))
    return evaluate(_intent(platform), SwitchReadback("lab", text, ConfigDelta(), SwitchCounters(pfcwd=pfcwd)))


def _failed(report: AuditReport) -> dict[str, list[tuple[str, str, Any, Any]]]:
    return {
        c.code: [(f.object, f.message, f.expected, f.got) for f in c.findings]
        for c in report.checks
        if c.status is Status.FAIL
    }


@pytest.mark.parametrize("platform", list(LEAF), ids=lambda p: p.value)
def test_lab_capture_is_compliant(platform: Platform) -> None:
    report = _evaluate(platform)
    assert report.compliant, _failed(report)
    assert [c.code for c in report.checks] == [c.code for c in SWITCH_CHECKS]


EDITS: list[tuple[Platform, str, str, str, tuple[str, str, Any, Any]]] = [
    (
        Platform.ARISTA_EOS,
        "maximum-threshold 1500 kbytes",
        "maximum-threshold 3000 kbytes",
        "SW-ECN",
        (
            "Ethernet1, Ethernet2, Ethernet49, Ethernet50",
            "ECN thresholds on queue 3 differ",
            "min 150000 B, max 1500000 B, 100 %",
            "min 150000 B, max 3000000 B, 100 %",
        ),
    ),
    (
        Platform.ARISTA_EOS,
        "   qos trust dscp\n",
        "   qos trust cos\n",
        "SW-TRUST",
        ("Ethernet1, Ethernet2, Ethernet49, Ethernet50", "port does not classify on the intended field", "dscp", "pcp"),
    ),
    (
        Platform.ARISTA_EOS,
        "qos map dscp 26 to traffic-class 3",
        "qos map dscp 26 to traffic-class 0",
        "SW-DSCP-MAP",
        (
            "Ethernet1, Ethernet2, Ethernet49, Ethernet50",
            "1 mapping(s) differ from the intent",
            "the policy's map",
            "DSCP 26: priority 0 (expected 3)",
        ),
    ),
    (
        Platform.CISCO_NXOS,
        "    mtu 9216\n    pause pfc-cos 3",
        "    mtu 1500\n    pause pfc-cos 3",
        "SW-MTU",
        (
            "Ethernet1/1, Ethernet1/2, Ethernet1/49, Ethernet1/50",
            "no-drop class MTU of queue 3 is below the port MTU: larger frames are dropped",
            ">= 9216",
            "1500",
        ),
    ),
    (
        Platform.CISCO_NXOS,
        "  match dscp 26\n",
        "  match dscp 27\n",
        "SW-DSCP-MAP",
        (
            "Ethernet1/1, Ethernet1/2, Ethernet1/49, Ethernet1/50",
            "1 mapping(s) differ from the intent",
            "the policy's map",
            "DSCP 26: queue not set (device default) (expected 3)",
        ),
    ),
    (
        Platform.CISCO_NXOS,
        "priority-flow-control fixed-restore multiplier 2",
        "priority-flow-control fixed-restore multiplier 5",
        "SW-WD",
        (
            "Ethernet1/1, Ethernet1/2, Ethernet1/49, Ethernet1/50",
            "PFC watchdog timers differ from the intent",
            "detection 200 ms, restoration 200 ms",
            "detection 200 ms, restoration 500 ms",
        ),
    ),
    (
        Platform.SONIC,
        '"detection_time": "200"',
        '"detection_time": "400"',
        "SW-WD",
        (
            "Ethernet0, Ethernet8, Ethernet48, Ethernet56",
            "PFC watchdog timers differ from the intent",
            "detection 200 ms, restoration 200 ms",
            "detection 400 ms, restoration 200 ms",
        ),
    ),
    (
        Platform.SONIC,
        '"pfc_enable": "3"',
        '"pfc_enable": "3,4"',
        "SW-PFC",
        (
            "Ethernet0, Ethernet8, Ethernet48, Ethernet56",
            "PFC is on priority 4, which the policy keeps lossy",
            "3",
            "3,4",
        ),
    ),
    (
        Platform.CUMULUS_NVUE,
        "nv set interface swp51 qos pfc-watchdog state enable\n",
        "nv set interface swp51 qos pfc-watchdog state disable\n",
        "SW-WD",
        ("swp51", "PFC watchdog is off", "3", "none"),
    ),
    (
        Platform.CUMULUS_NVUE,
        "nv set interface swp52 qos pfc-watchdog state enable\n",
        "",
        "SW-WD",
        ("swp52", "PFC watchdog is off", "3", "none"),
    ),
    (
        Platform.CUMULUS_NVUE,
        "nv set qos pfc fabricd-400g-40m tx enable",
        "nv set qos pfc fabricd-400g-40m tx disable",
        "SW-PFC",
        ("swp51, swp52", "PFC is off: qos pfc fabricd-400g-40m has tx disabled", "3", "none"),
    ),
]


@pytest.mark.parametrize(
    ("platform", "old", "new", "code", "finding"),
    EDITS,
    ids=[f"{p.value}-{c}-{i}" for i, (p, _, _, c, _) in enumerate(EDITS)],
)
def test_edit_gives_exactly_its_finding(
    platform: Platform, old: str, new: str, code: str, finding: tuple[str, str, Any, Any]
) -> None:
    text = capture(GOLDEN / platform.value / "lab-pushed.txt")
    assert old in text
    report = _evaluate(platform, lambda t: t.replace(old, new))
    failed = _failed(report)
    assert list(failed) == [code], failed
    assert failed[code] == [finding]


def test_stuck_rule_is_metas() -> None:
    """Stuck = storms detected and none restored (facebook/DNE-TaaC pfc_wd_health_check.py); without a restore count
    (NVUE) a queue still in DEADLOCK with storms counted."""

    def row(detected: int | None, restored: int | None, status: str | None) -> PfcwdCounter:
        return PfcwdCounter("Ethernet0", 3, status, detected, restored)

    assert is_stuck(row(1, 0, "stormed")) and is_stuck(row(3, 0, "operational"))
    assert not is_stuck(row(0, 0, "operational")) and not is_stuck(row(None, None, None))
    assert not is_stuck(row(2, 1, "stormed")), "it has restored before: a storm in progress, not a stuck watchdog"
    assert is_stuck(row(1, None, "stormed")) and not is_stuck(row(1, None, "operational"))
    report = _evaluate(Platform.SONIC, pfcwd=(row(1, 0, "stormed"), PfcwdCounter("Ethernet8", 3, "operational", 1, 1)))
    assert _failed(report) == {
        "SW-WD-STUCK": [
            (
                "Ethernet0:3",
                "PFC watchdog detected 1 storm(s) and never restored (status stormed)",
                "restored after every detection",
                "detected 1, restored 0",
            )
        ]
    }


def test_intended_timers_per_platform() -> None:
    assert {p: intended_timers(_intent(p)) for p in LEAF} == {
        Platform.SONIC: (200, 200),
        Platform.ARISTA_EOS: (200, 200),
        Platform.CISCO_NXOS: (200, 200),
        Platform.CUMULUS_NVUE: (200, 100),
    }


def test_unreadable_switch_skips_everything_else() -> None:
    report = evaluate(_intent(Platform.SONIC), SwitchReadback("lab", error="leaf1-sonic: connect: cannot reach"))
    assert {c.code: c.status for c in report.checks} == {
        c.code: Status.FAIL if c.code == "SW-REACH" else Status.SKIP for c in SWITCH_CHECKS
    }


def test_unreadable_watchdog_output_is_a_finding() -> None:
    """A watchdog output the parser reads nothing from is an audit finding, never "no stuck queue"."""
    garbled = cisco_nxos.parse_show_queuing_pfc_queue('{"interfaces": {"Ethernet1/1": []}}')
    assert garbled.problems
    text = capture(GOLDEN / "cisco_nxos" / "lab-pushed.txt")
    report = evaluate(_intent(Platform.CISCO_NXOS), SwitchReadback("lab", text, ConfigDelta(), garbled))
    assert not report.compliant
    findings = _failed(report)["SW-PARSE"]
    assert any("no row in a known NX-OS shape" in str(f) for f in findings), findings
    assert {c.code: c.status for c in report.checks}["SW-WD-STUCK"] == Status.SKIP
