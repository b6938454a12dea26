"""validate-fabric --matrix glue: JSON, JUnit, localisation output and baselines per fabric revision.

The pair runs here come from the simulated fleet (fleetsim.py) standing in for `validate_pair`: no traffic can run
on this machine without the Soft-RoCE lab VMs (tests/lab runs real traffic). The "no lab VM" path runs the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer
from fleetsim import SimFleet

from fabricd import settings
from fabricd.cli.common import OutputFormat
from fabricd.cli.validate_matrix import link_speeds, run_matrix_cli
from fabricd.inventory import load_inventory
from fabricd.traffic.matrix import Matrix
from fabricd.traffic.validate import PairReport

FABRICD = str(Path(sys.executable).with_name("fabricd"))


def _sim_runner(fleet: SimFleet):  # type: ignore[no-untyped-def]
    def run(client: str, server: str) -> PairReport:
        gbit = fleet.gbit_s((client, server))
        return PairReport(client=client, server=server, ran=True, traffic={"ops": [{"gbit_s": gbit}]})

    return run


def test_matrix_cli_json_junit_localisation_and_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    fabric = load_inventory(settings.default_inventory()).fabric
    hosts = [h.name for h in fabric.hosts]
    links = link_speeds(fabric, hosts)
    fleet = SimFleet(hosts, links)
    junit = tmp_path / "m.xml"

    # first run, all healthy: a baseline is saved for this fabric revision
    run_matrix_cli(
        fabric,
        hosts,
        Matrix.parse("all-pairs"),
        _sim_runner(fleet),
        bar=0.9,
        bar_gbps=None,
        baseline="auto",
        output=OutputFormat.JSON,
        junit=junit,
    )
    first = json.loads(capsys.readouterr().out)
    assert first["ok"] and len(first["verdicts"]) == len(hosts) * (len(hosts) - 1) // 2
    assert first["baseline"].startswith("saved ")
    assert ET.parse(junit).getroot().get("failures") == "0"

    # a slow host: named, its pairs fail, and the baseline comparison flags the drops
    fleet.slow_hosts[hosts[2]] = 0.5
    with pytest.raises(typer.Exit) as ex:
        run_matrix_cli(
            fabric,
            hosts,
            Matrix.parse("all-pairs"),
            _sim_runner(fleet),
            bar=0.9,
            bar_gbps=None,
            baseline="auto",
            output=OutputFormat.JSON,
            junit=junit,
        )
    assert ex.value.exit_code == 1
    second = json.loads(capsys.readouterr().out)
    assert second["localisation"]["degraded_hosts"] == [hosts[2]]
    assert second["baseline"].startswith("compared with ")
    assert {d["pair"] for d in second["baseline_drops"]} == {
        v["client"] + "->" + v["server"] for v in second["verdicts"] if hosts[2] in (v["client"], v["server"])
    }
    failing = {s.get("name") for s in ET.parse(junit).getroot() if s.get("failures") != "0"}
    assert len(failing) == len(hosts) - 1


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_without_lab_vms_every_pair_is_not_run(tmp_path: Path) -> None:
    env = dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state"))
    res = subprocess.run(
        [FABRICD, "validate-fabric", "--matrix", "ring", "--output", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 3, res.stderr
    data = json.loads(res.stdout)
    assert data["verdicts"] and all(v["verdict"] == "not_run" for v in data["verdicts"])
    assert all("no runner pool 'lab' is running" in p["error"] for p in data["pairs"])
    bad = subprocess.run(
        [FABRICD, "validate-fabric", "--matrix", "mesh"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "unknown matrix" in bad.stderr
