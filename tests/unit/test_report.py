"""`fabricd report` draws real PNGs from a run record. The record here is built in the test (a short synthetic
storm), since a real one needs the whole demo; tests/integration/test_demo.py covers the real run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd_lab.report.record import Panel, RunRecord, Series, StormTimeline, save_record

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _record(t0: float = 1_700_000_000.0) -> RunRecord:
    points = [(t0 + i * 0.5, 0.9 if 10 <= i < 30 else 0.01) for i in range(60)]
    pause = Series(name="ratio", labels={"interface": "ens1f0np0", "priority": "3", "direction": "tx"}, points=points)
    storm = StormTimeline(
        device="gpu3",
        interface="ens1f0np0",
        priority=3,
        injected_ts=t0 + 5,
        detected_ts=t0 + 5.2,
        stopped_ts=t0 + 15,
        restored_ts=t0 + 15.2,
        origin_device="gpu3",
        origin_interface="ens1f0np0",
        paused_ports=["leaf2-eos:Ethernet1"],
    )
    return RunRecord(
        fabric="lab",
        started_ts=t0,
        ended_ts=t0 + 30,
        pause=[pause],
        storm=storm,
        panels=[Panel(title="pause", series=[pause]), Panel(title="empty")],
    )


def test_report_writes_three_pngs(tmp_path: Path, lab_inventory: Path) -> None:
    run = tmp_path / "run.json"
    save_record(_record(), run)
    result = CliRunner().invoke(
        build_app(),
        ["report", str(lab_inventory), "--run", str(run), "--out", str(tmp_path / "img"), "--output", "json"],
    )
    assert result.exit_code == 0, result.output
    paths = [Path(p) for p in json.loads(result.stdout)["pictures"]]
    assert [p.name for p in paths] == ["storm-timeline.png", "dashboard.png", "topology.png"]
    for p in paths:
        data = p.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000


def test_storm_latency_is_derived() -> None:
    storm = _record().storm
    assert storm is not None and round(storm.detection_latency_ms or 0) == 200


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_missing_run_is_a_clear_error(tmp_path: Path, lab_inventory: Path) -> None:
    missing = tmp_path / "nope.json"
    proc = subprocess.run(
        [sys.executable, "-m", "fabricd", "report", str(lab_inventory), "--run", str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert f"{missing}: no saved run; run `fabricd demo` first" in proc.stderr
    assert "Traceback" not in proc.stderr
