"""The EOS defects of issue 16, one test each: what fabricd renders or refuses now, and the lab simulator's grammar
following AVD 6.4's schema (tests/conformance/test_arista_eos_avd.py holds the oracle itself)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import yaml

from fabricd.inventory import load_inventory
from fabricd.model import EcnProfile, Platform, Watchdog, WatchdogAction
from fabricd.nos.arista_eos.ecn import eos_ecn
from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.arista_eos.watchdog import eos_watchdog
from fabricd.nos.registry import switch_intents
from fabricd.nos.validate import run_checks
from fabricd_lab.device import DeviceSpec
from fabricd_lab.eos import EosSwitch

REPO = Path(__file__).resolve().parents[2]
Note = tuple[str, str, str, str]


def _notes() -> tuple[list[Note], Callable[[str, str, str, str], None]]:
    notes: list[Note] = []

    def warn(field: str, intended: str, rendered: str, reason: str) -> None:
        notes.append((field, intended, rendered, reason))

    return notes, warn


def test_alert_renders_notify_only_without_a_warning() -> None:
    notes, warn = _notes()
    wd = eos_watchdog(Watchdog(detection_ms=200, restoration_ms=200, poll_ms=100, action=WatchdogAction.ALERT), warn)
    assert wd.action == "notify-only" and notes == []


def test_forward_is_refused_by_validate_on_eos_only(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    shutil.copytree(REPO / "inventory" / "lab", root)
    fabric = root / "fabric.yml"
    fabric.write_text(fabric.read_text().replace("action: drop", "action: forward"))
    problems = [p for p in run_checks(load_inventory(root)) if p.code == "FAB120"]
    assert len(problems) == 1
    text = problems[0].render()
    assert f"{fabric}:" in text and "policy.pfc.watchdog.action" in text and "got forward" in text
    assert "notify-only" in text  # the hint names what EOS has
    # without an EOS switch, forward is fine for this check
    switches = root / "switches.yml"
    docs = yaml.safe_load(switches.read_text())
    docs["switches"] = [s for s in docs["switches"] if s["platform"] != "arista_eos"]
    switches.write_text(yaml.safe_dump(docs))
    links = root / "links.yml"
    names = {s["name"] for s in docs["switches"]}
    ldocs = yaml.safe_load(links.read_text())
    ldocs["links"] = [lk for lk in ldocs["links"] if lk["a"].split(":")[0] in names and lk["b"].split(":")[0] in names]
    links.write_text(yaml.safe_dump(ldocs))
    assert not [p for p in run_checks(load_inventory(root)) if p.code == "FAB120"]


def test_timers_off_the_10_ms_grid_round_up_with_a_warning() -> None:
    notes, warn = _notes()
    wd = eos_watchdog(Watchdog(detection_ms=125, restoration_ms=201, poll_ms=50), warn)
    assert (wd.timeout_s, wd.recovery_s, wd.polling_s) == ("0.13", "0.21", "0.05")
    assert [n[0] for n in notes] == ["watchdog.timeout_s", "watchdog.recovery_s"]
    assert notes[0][1:3] == ("125 ms", "0.13 s")


def test_sub_kbyte_ecn_thresholds_keep_their_value_in_bytes() -> None:
    notes, warn = _notes()
    assert eos_ecn(EcnProfile(name="e", min_bytes=500, max_bytes=900), 3, warn) == (500, 900, "bytes", 100)
    assert eos_ecn(EcnProfile(name="e", min_bytes=150_000, max_bytes=1_500_000), 3, warn) == (150, 1500, "kbytes", 100)
    assert notes == []
    assert eos_ecn(EcnProfile(name="e", min_bytes=0, max_bytes=1_000, max_mark_probability_percent=0), 3, warn) == (
        1,
        1_000,
        "bytes",
        1,
    )
    assert [n[0] for n in notes] == ["queues[3].ecn.min_threshold", "queues[3].ecn.probability_percent"]


def test_two_lossless_classes_example_keeps_strict_queues_on_top() -> None:
    inv = load_inventory(REPO / "inventory" / "examples" / "two-lossless-classes.yml")
    assert not [p for p in run_checks(inv) if p.severity == "error"]
    for sw in switch_intents(inv.fabric):
        if isinstance(sw, EosSwitchIntent):
            rr = [q.id for q in sw.queues if q.round_robin]
            assert all(q.id > max(rr) for q in sw.queues if q.strict), sw.queues


def test_the_old_two_lossless_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "two.yml"
    text = (REPO / "inventory" / "examples" / "two-lossless-classes.yml").read_text()
    path.write_text(
        text.replace(
            "{id: 0, name: bulk, priorities: [0], weight_percent: 15}",
            "{id: 0, name: bulk, priorities: [0], weight_percent: 10}",
        ).replace(
            "{id: 7, name: control, priorities: [7], scheduler: strict}",
            "{id: 7, name: control, priorities: [7], weight_percent: 5}",
        )
    )
    problems = [p for p in run_checks(load_inventory(path)) if p.code == "FAB121"]
    assert len(problems) == 1
    assert "strict class 'cnp' (id 6) is below DWRR class 'control' (id 7)" in problems[0].render()
    assert problems[0].location is not None and problems[0].location.line > 0


def test_lab_eos_grammar_follows_avd_schema() -> None:
    sh = EosSwitch(
        DeviceSpec("sw1", Platform.ARISTA_EOS, password="x", ports=(("Ethernet1", 400_000_000_000),))
    ).open_shell()
    sh.handle("configure terminal")
    sh.handle("qos profile P")
    ok = sh.handle("priority-flow-control pause watchdog port action notify-only").output
    assert "Invalid" not in ok
    assert "Invalid" in sh.handle("priority-flow-control pause watchdog port action no-drop").output
    assert (
        "Invalid"
        in sh.handle(
            "priority-flow-control pause watchdog port timer timeout 0.125 polling-interval 0.1 recovery-time 0.2"
        ).output
    )
    assert (
        "Invalid"
        not in sh.handle(
            "priority-flow-control pause watchdog port timer timeout 0.13 polling-interval 0.005 recovery-time 0.2"
        ).output
    )
    sh.handle("tx-queue 3")
    assert (
        "Invalid"
        not in sh.handle(
            "random-detect ecn minimum-threshold 500 bytes maximum-threshold 900 bytes max-mark-probability 5 weight 0"
        ).output
    )
