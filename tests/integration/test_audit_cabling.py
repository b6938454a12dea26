"""``fabricd audit cabling`` against ``fabricd lab up`` (all four NOS simulators, real SSH with host keys verified),
as a user runs it: clean on the lab as cabled; after ``--fault leaf1-sonic:swap-cables=Ethernet0,Ethernet8`` it names
exactly the two swapped cables with the fix (text, JSON, JUnit); the same from a ``fabricd capture`` folder with
``--replay``; and a switch that cannot be read exits 3. An uplink swap is checked from both ends (the spines)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from labports import move_lab_ports

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).parent / "fabricd")
Run = Callable[..., tuple[int, str, str]]


def _run(*args: str, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


@pytest.fixture
def cabling_lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_main: Run, reserve_port: Callable[[], int]
) -> Iterator[tuple[Path, Run, Callable[..., None]]]:
    """A copy of inventory/lab on free ports with a private state dir; yields the inventory, the real entry point
    run in-process, and ``up(*faults)`` that (re)starts ``fabricd lab up`` (a daemon) with those faults. The ports are
    held by this process until the test ends (``reserve_port``): no other process takes one between restarts."""
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    move_lab_ports(inv, reserve_port)  # up() restarts the daemon on the same ports
    state = tmp_path / "state"
    env = {**os.environ, "FABRICD_STATE_DIR": str(state)}
    for var in ("FABRICD_INVENTORY", "FABRICD_OUTPUT"):
        env.pop(var, None)
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FABRICD_STATE_DIR", str(state))
    monkeypatch.setenv("COLUMNS", "250")

    run = run_main  # the real entry point in-process (tests/conftest.py)

    def down() -> None:
        pid_file = state / "lab" / "lab.pid"
        if pid_file.exists():
            done = _run("lab", "down", env=env, timeout=60)
            if done.returncode != 0 and pid_file.exists():  # never leave our daemon behind
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)

    def up(*faults: str) -> None:
        down()
        args = [a for f in faults for a in ("--fault", f)]
        started = _run("lab", "up", str(inv), *args, env=env)
        if started.returncode != 0:
            pytest.fail(f"fabricd lab up failed: {started.stderr}")

    try:
        yield inv, run, up
    finally:
        down()


def test_clean_then_swapped_cables_named_with_the_fix(
    cabling_lab: tuple[Path, Run, Callable[..., None]], tmp_path: Path
) -> None:
    inv, run, up = cabling_lab
    up()
    code, out, err = run("audit", "cabling", str(inv))
    assert code == 0, out + err
    assert "audit cabling lab: compliant" in out and "6 of 6 device(s) read" in out

    up("leaf1-sonic:swap-cables=Ethernet0,Ethernet8")
    junit = tmp_path / "cabling.xml"
    code, out, err = run("audit", "cabling", str(inv), "--junit", str(junit))
    assert code == 1, out + err
    fail_lines = [line for line in out.splitlines() if line.strip().startswith(("FAIL", "CAB-"))]
    assert [line.split()[0] for line in fail_lines] == ["FAIL", "CAB-MISWIRE"], out
    assert (
        "cables swapped on leaf1-sonic: leaf1-sonic Ethernet0 reaches gpu2 ens1f0np0 (intended gpu1 ens1f0np0), "
        "leaf1-sonic Ethernet8 reaches gpu1 ens1f0np0 (intended gpu2 ens1f0np0)"
    ) in out
    assert "swap the cables in leaf1-sonic Ethernet0 and Ethernet8" in out
    (failure,) = ET.parse(junit).getroot().findall("./testsuite/testcase/failure")
    assert failure.get("type") == "CAB-MISWIRE"

    code, out, err = run("audit", "cabling", str(inv), "--output", "json")
    assert code == 1, err
    data = json.loads(out)
    (finding,) = [f for c in data["checks"] for f in c["findings"]]
    assert finding["got"] == {"leaf1-sonic Ethernet0": "gpu2 ens1f0np0", "leaf1-sonic Ethernet8": "gpu1 ens1f0np0"}

    # The same from a capture folder, read without dialling.
    cap = tmp_path / "cap"
    code, out, err = run("capture", str(inv), "--out", str(cap))
    assert code == 0, out + err
    code, out, err = run("audit", "cabling", str(inv), "--replay", str(cap), "--output", "json")
    assert code == 1, err
    assert [f for c in json.loads(out)["checks"] for f in c["findings"]] == [finding]


def test_uplink_swap_seen_from_both_ends_and_unreadable_switch(
    cabling_lab: tuple[Path, Run, Callable[..., None]], tmp_path: Path
) -> None:
    inv, run, up = cabling_lab
    up("leaf2-eos:swap-cables=Ethernet49,Ethernet50")
    code, out, err = run("audit", "cabling", str(inv), "--output", "json")
    assert code == 1, err
    (finding,) = [f for c in json.loads(out)["checks"] for f in c["findings"]]
    assert finding["code"] == "CAB-MISWIRE" and "confirmed from spine1 Ethernet8 and spine2 swp2" in finding["message"]
    assert finding["hint"].startswith("swap the cables in leaf2-eos Ethernet49 and Ethernet50")

    code, _, err = run("lab", "down")
    assert code == 0, err
    lab_dir = tmp_path / "state" / "lab"
    lab_dir.mkdir(parents=True, exist_ok=True)
    (lab_dir / "password").write_text("unused\n")
    (lab_dir / "password").chmod(0o600)
    code, out, err = run("audit", "cabling", str(inv), "--device", "leaf3-nxos")
    assert code == 3, out + err
    assert "leaf3-nxos" in err and "Traceback" not in err
