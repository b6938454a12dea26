"""The real CLI (typer app from fabricd.cli.main.build_app): validate, show and headroom."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.intent.headroom import headroom
from fabricd.model import Speed
from fabricd.model.platform import known_platforms

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "inventory" / "examples").iterdir())


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("FORCE_COLOR", "FABRICD_INVENTORY", "FABRICD_OUTPUT", "FABRICD_FAIL_LINKS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("COLUMNS", "200")
    return CliRunner()


def run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(build_app(), list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_headroom_hand_computed_case() -> None:
    """400G, 100 m, MTU 9216: 9216 + 9216 + 2*100*400e9/198e6/8 + 905*512/8 = 126857.05 -> 126976 (124 x 1024)."""
    hr = headroom(Speed.G400, 100, 9216)
    assert hr.bytes_on_cable == pytest.approx(2 * 100 * 400e9 / 198e6 / 8)
    assert round(hr.bytes_on_cable, 2) == 50505.05
    assert hr.peer_response_bytes == 905 * 512 // 8 == 57920
    assert 9216 + 9216 + hr.bytes_on_cable + 57920 == pytest.approx(126857.05, abs=0.01)
    assert hr.xoff_bytes == 126976 == 124 * 1024
    assert hr.size_bytes == 126976 + 19456
    # lossless MTU 1024 (SONiC's LOSSLESS_TRAFFIC_PATTERN), 25G, 5 m: 1024 + 9216 + 157.83 + 5120 = 15517.83
    small = headroom(Speed.G25, 5, 9216, lossless_mtu_bytes=1024)
    assert small.xoff_bytes == math.ceil((1024 + 9216 + 2 * 5 * 25e9 / 198e6 / 8 + 80 * 64) / 1024) * 1024 == 16384


def test_headroom_cli_json_and_text(runner: CliRunner) -> None:
    code, out, _ = run(runner, "headroom", "--speed", "400G", "--cable-m", "100", "--mtu", "9216", "--output", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["bytes_on_cable"], data["peer_response_bytes"], data["xoff_unrounded_bytes"]) == (
        50505.05,
        57920,
        126857.05,
    )
    assert (data["xoff_bytes"], data["xon_bytes"], data["size_bytes"]) == (126976, 19456, 146432)
    code, out, _ = run(runner, "headroom", "--speed", "400G", "--cable-m", "100", "--mtu", "9216")
    assert code == 0
    assert "126976" in out and "50505.05" in out and "905 quanta x 512 bit / 8" in out


def test_headroom_cli_rejects_bad_input(runner: CliRunner) -> None:
    code, _, err = run(runner, "headroom", "--speed", "7G")
    assert code == 2 and "7G" in err
    code, _, err = run(runner, "headroom", "--mtu", "100")
    assert code == 2 and "--mtu" in err


def test_validate_lab_text(runner: CliRunner, lab_inventory: Path) -> None:
    code, out, err = run(runner, "validate", str(lab_inventory), "--fail-links", "1")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "PFC deadlock: no cyclic buffer dependency (4 switches with RDMA hosts in 1 twin class, 2 transit, "
        "0 dependencies between transit buffers)",
        "--fail-links 1: tried all 8 1-link failures: none creates a cycle",
        "lab: 6 switches, 8 hosts, 8 links: 0 errors, 0 warnings: ok",
    ]


def test_validate_default_inventory_is_the_lab(runner: CliRunner) -> None:
    code, out, _ = run(runner, "validate")
    assert code == 0 and out.splitlines()[-1].startswith("lab: 6 switches")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_validate_examples_exit_0(runner: CliRunner, path: Path) -> None:
    code, out, err = run(runner, "validate", str(path), "--fail-links", "1")
    assert code == 0, out + err
    assert "0 errors" in out.splitlines()[-1]


def test_validate_json_reports_findings_and_exit_1(runner: CliRunner, tmp_path: Path, lab_inventory: Path) -> None:
    inv = tmp_path / "inv"
    inv.mkdir()
    for f in lab_inventory.glob("*.yml"):
        (inv / f.name).write_text(f.read_text())
    fabric = inv / "fabric.yml"
    fabric.write_text(fabric.read_text().replace("poll_ms: 100", "poll_ms: 300"))
    code, out, _ = run(runner, "validate", str(inv), "--output", "json")
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False and data["exit_code"] == 1 and data["stage"] == "checks"
    codes = sorted({p["code"] for p in data["problems"]})
    # poll > detection (error); detection 200 ms is not a whole number of 300 ms polls on NVUE and NX-OS, nor is
    # restoration 200 ms on NX-OS, SONiC caps the poll at the smaller timer and EOS at half of it (five warnings:
    # the packs' codecs round them, validate says so at the line)
    assert codes == ["FAB040", "FAB042"]
    assert data["summary"] == {"errors": 1, "warnings": 5}
    first = data["problems"][0]
    assert first["file"] == str(fabric) and first["line"] == 21 and first["path"] == "policy.pfc.watchdog.poll_ms"
    assert data["deadlock"]["applicable"] is True and data["deadlock"]["cycles"] == []


def test_validate_load_error_is_exit_2_on_stderr(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("switches:\n  - name: s1\n    platform: qfx\n    mgmt: {host: h}\n")
    code, out, err = run(runner, "validate", str(bad))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {bad}:3: switches[s1].platform: unknown switch platform (expected one of "
        f"{', '.join(known_platforms())}, got 'qfx'); use one of these ids; a platform from another "
        "package needs that package installed (it registers its pack in the 'fabricd.platforms' entry "
        "point group) [INV100]\n"
    )
    code, out, err = run(runner, "validate", str(bad), "--output", "json")
    data = json.loads(out)
    assert code == 2 and data["stage"] == "load" and data["problems"][0]["code"] == "INV100" and err == ""


def test_validate_lossy_fabric_has_no_deadlock_analysis(runner: CliRunner) -> None:
    code, out, _ = run(runner, "validate", str(REPO / "inventory/examples/lossy-roce.yml"), "--fail-links", "1")
    assert code == 0
    assert "PFC deadlock: not applicable (transport roce_v2_lossy: no lossless traffic)" in out.splitlines()


def test_show_json_and_text(runner: CliRunner, lab_inventory: Path) -> None:
    code, out, _ = run(runner, "show", str(lab_inventory), "--output", "json")
    assert code == 0
    data = json.loads(out)
    fabric = data["fabric"]
    assert fabric["name"] == "lab" and len(fabric["switches"]) == 6 and len(fabric["hosts"]) == 8
    assert fabric["hosts"][0]["nics"][0]["mtu"] == 9000  # inherited from defaults.nic
    code, out, _ = run(runner, "show", str(lab_inventory), "--section", "policy", "--output", "json")
    assert code == 0 and json.loads(out)["policy"]["pfc"]["priorities"] == [3]
    code, out, _ = run(runner, "show", str(lab_inventory))
    assert code == 0
    for text in (
        "leaf3-nxos",
        "cisco_nxos",
        "gpu8",
        "ens1f0np0",
        "leaf4-nvue:swp52",
        "26->3, 48->6",
        "DSCP 26, priority 3, ToS 106",
    ):
        assert text in out, text


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_show_bad_inventory_is_exit_2(tmp_path: Path) -> None:
    """Through the console-script entry (main() turns FabricdError into a located message and exit 2)."""
    proc = subprocess.run(
        [sys.executable, "-c", "from fabricd.cli.main import main; main()", "show", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TERM": "dumb", "NO_COLOR": "1"},
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"error: {tmp_path / 'missing'}: inventory not found (expected a YAML file or a "
        "directory, got nothing at that path); pass an existing inventory file or directory; "
        "`fabricd init DIR` writes a starting one\n"
    )
