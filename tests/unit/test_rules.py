"""The shipped rule pack: promtool check + unit tests, and the pack's own conventions.

Uses Debian's real promtool (scripts/sysdeps.sh installs it); skips with the reason when it is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "exporters" / "rules" / "fabricd.rules.yml"
RULE_FILES = sorted((REPO / "exporters" / "rules").glob("*.rules.yml"))
TESTS = sorted((REPO / "exporters" / "rules" / "tests").glob("*.yml"))
ALERTS_DOC = REPO / "docs" / "alerts.md"
PROMTOOL = shutil.which("promtool") or ("/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None)
AMTOOL = shutil.which("amtool")

REQUIRED_ALERTS = {
    "FabricPfcStorm",
    "FabricPfcStormActive",
    "FabricPfcWatchdogStuck",
    "FabricLosslessDrops",
    "FabricRdmaOutOfBuffer",
    "FabricRdmaOutOfSequence",
    "FabricCnpWithoutEcn",
    "FabricEcnDisabledOnRocePriority",
    "FabricExporterDown",
}


def _alerts() -> list[dict[str, object]]:
    docs = [yaml.safe_load(f.read_text()) for f in RULE_FILES]
    return [r for doc in docs for g in doc["groups"] for r in g["rules"] if "alert" in r]


needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")


@needs_promtool
@pytest.mark.integration  # runs promtool
def test_promtool_check_rules() -> None:
    assert PROMTOOL is not None
    assert RULES in RULE_FILES and len(RULE_FILES) >= 2
    out = subprocess.run(
        [PROMTOOL, "check", "rules", *map(str, RULE_FILES)], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("SUCCESS") == len(RULE_FILES)


@needs_promtool
@pytest.mark.integration  # runs promtool
def test_promtool_test_rules() -> None:
    assert PROMTOOL is not None
    out = subprocess.run(
        [PROMTOOL, "test", "rules", *[t.name for t in TESTS]],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=TESTS[0].parent,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("SUCCESS") == len(TESTS)


@needs_promtool
@pytest.mark.integration  # runs promtool
@pytest.mark.parametrize("recording_first", [True, False], ids=["recording-first", "alerts-first"])
def test_rule_tests_hold_in_either_group_order(tmp_path: Path, recording_first: bool) -> None:
    """Prometheus evaluates rule groups concurrently, and promtool, without ``group_eval_order``, in map order: an
    alert test that only passes when the recording group ran first in the same evaluation is a flake (CI hit it).
    Every unit test file must pass with the recording groups pinned first and with them pinned last."""
    assert PROMTOOL is not None
    rules_dir = tmp_path / "rules"
    (rules_dir / "tests").mkdir(parents=True)
    for f in RULE_FILES:
        (rules_dir / f.name).write_bytes(f.read_bytes())
    for t in TESTS:
        doc = yaml.safe_load(t.read_text())
        groups = [g["name"] for r in doc["rule_files"] for g in yaml.safe_load((t.parent / r).read_text())["groups"]]
        recording = [g for g in groups if g.endswith("-recording")]
        assert recording, f"{t.name}: its rule files have no *-recording group"
        rest = [g for g in groups if g not in recording]
        doc["group_eval_order"] = recording + rest if recording_first else rest + recording
        (rules_dir / "tests" / t.name).write_text(yaml.safe_dump(doc, sort_keys=False))
    out = subprocess.run(
        [PROMTOOL, "test", "rules", *[t.name for t in TESTS]],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=rules_dir / "tests",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("SUCCESS") == len(TESTS)


def test_every_required_alert_is_shipped_with_labels_and_annotations() -> None:
    alerts = _alerts()
    names = {str(a["alert"]) for a in alerts}
    assert names >= REQUIRED_ALERTS
    for a in alerts:
        labels = a.get("labels") or {}
        ann = a.get("annotations") or {}
        assert isinstance(labels, dict) and isinstance(ann, dict)
        assert labels.get("severity") in ("critical", "warning"), a["alert"]
        for key in ("summary", "description", "runbook_url"):
            assert ann.get(key), (a["alert"], key)
        assert str(ann["runbook_url"]).endswith("#" + str(a["alert"]).lower())


def test_every_alert_has_a_firing_and_a_not_firing_unit_test() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for path in TESTS:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for t in case.get("alert_rule_test", []):
                (firing if t.get("exp_alerts") else silent).add(t["alertname"])
    names = {str(a["alert"]) for a in _alerts()}
    assert names - firing == set(), "alerts without a firing test"
    assert names - silent == set(), "alerts without a not-firing test"


def test_every_alert_has_a_runbook_section() -> None:
    headings = set(re.findall(r"^### (\w+)$", ALERTS_DOC.read_text(), re.MULTILINE))
    names = {str(a["alert"]) for a in _alerts()}
    assert names - headings == set()


@pytest.mark.skipif(AMTOOL is None, reason="amtool not installed (Debian package prometheus-alertmanager)")
@pytest.mark.integration  # runs amtool
def test_alertmanager_example_is_valid() -> None:
    assert AMTOOL is not None
    out = subprocess.run(
        [AMTOOL, "check-config", str(REPO / "exporters" / "alertmanager.yml")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout
