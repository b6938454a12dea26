"""validate-fabric --matrix on the two Soft-RoCE VMs: real RC traffic for every pair of the matrix, each judged
against the bar (given in Gb/s: rxe on virtio under TCG moves ~0.1 Gb/s, far from its 100G peer port), with the
counter-delta checks of a single pair. The VMs come from conftest.py (one pair per session)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.timeout(1800)]

SOFTROCE = Path(__file__).resolve().parents[2] / "inventory/examples/softroce.yml"


def test_all_pairs_and_ring_give_per_pair_verdicts(lab_vm: Any, tmp_path: Path) -> None:
    env = dict(os.environ)  # the session's VMs are found through the state directory: keep it
    code = "import sys; from fabricd.cli.main import main; sys.argv[0] = 'fabricd'; main()"
    junit = tmp_path / "matrix.xml"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "validate-fabric",
            str(SOFTROCE),
            "--name",
            lab_vm.name,
            "--matrix",
            "ring",
            "--bar-gbps",
            "0.001",
            "--iterations",
            "64",
            "--baseline",
            "off",
            "--output",
            "json",
            "--junit",
            str(junit),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    data = json.loads(r.stdout)
    assert r.returncode == 0, (r.stderr[-2000:], data["verdicts"])
    assert [(v["client"], v["server"]) for v in data["verdicts"]] == [("rxe-a", "rxe-b"), ("rxe-b", "rxe-a")]
    assert all(v["verdict"] == "pass" and v["gbit_s"] > 0.001 for v in data["verdicts"])
    assert {v["round"] for v in data["verdicts"]} == {0, 1}
    for pair in data["pairs"]:
        status = {c["code"]: c["status"] for c in pair["checks"]}
        assert status["FABRIC-TRAFFIC"] == "pass" and status["FABRIC-DSCP"] == "pass", pair
    assert ET.parse(junit).getroot().get("failures") == "0"

    # all-pairs of two hosts is one pair; an impossible bar fails it, and with no third host it stays unresolved
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "validate-fabric",
            str(SOFTROCE),
            "--name",
            lab_vm.name,
            "--matrix",
            "all-pairs",
            "--bar-gbps",
            "1000",
            "--iterations",
            "64",
            "--baseline",
            "off",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    data = json.loads(r.stdout)
    assert r.returncode == 1, r.stderr[-2000:]
    (v,) = data["verdicts"]
    assert v["verdict"] == "fail" and v["bar_gbit_s"] == 1000
    assert data["localisation"]["unresolved"] == ["rxe-a", "rxe-b"]
