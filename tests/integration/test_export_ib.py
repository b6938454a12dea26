"""``fabricd export ib`` running its commands as real subprocesses.

No InfiniBand fabric runs here (no HCA, no subnet manager, no ib_umad; infiniband-diags is not installed), so the
live path runs stand-in ``ibnetdiscover`` and ``perfquery`` executables put first on PATH: real processes that the
exporter starts, times out and kills like the real tools, and that print real captures (treydock/infiniband_exporter's
``ibnetdiscover --ports`` and ``perfquery -x`` outputs, tests/golden/readers/) for the LID and port they are asked.
The stand-ins log when each call starts and ends, so the bound on concurrent calls is measured, not assumed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from wdhelpers import get, wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "readers"
FABRICD = str(Path(sys.executable).with_name("fabricd"))
PROMTOOL = shutil.which("promtool")

IBNETDISCOVER = f"""#!{sys.executable}
import sys
assert sys.argv[1:] == ["--ports"], sys.argv
sys.stdout.write(open({str(GOLDEN / "ibnetdiscover" / "ibnetdiscover-p--treydock-edr.txt")!r}).read())
"""

PERFQUERY = f"""#!{sys.executable}
# stand-in perfquery -x <lid> <port>: prints the captured block of that LID and port, or fails as perfquery does
import glob, os, sys, time
args = sys.argv[1:]
assert args[0] == "-x", args
lid, port = int(args[1]), int(args[2])
log = os.environ["STANDIN_LOG"]
with open(log, "a") as f:
    f.write(f"start {{time.monotonic()}} {{lid}} {{port}}\\n")
if str(lid) == os.environ.get("STANDIN_HANG_LID"):
    time.sleep(30)
blocks, current = {{}}, None
for path in sorted(glob.glob({str(GOLDEN / "perfquery")!r} + "/*.txt")):
    for line in open(path).read().splitlines():
        w = line.split()
        if line.startswith("# ") and "counters:" in line and "Lid" in w:
            i = w.index("Lid")
            current = (int(w[i + 1]), int(w[i + 3]))
            if "extended" not in line:
                current = None
            elif current in blocks:
                current = None
            else:
                blocks[current] = []
        if current is not None:
            blocks[current].append(line)
time.sleep(0.05)
with open(log, "a") as f:
    f.write(f"end {{time.monotonic()}} {{lid}} {{port}}\\n")
if (lid, port) not in blocks:
    sys.stderr.write(f"stand-in perfquery: no capture for Lid {{lid}} port {{port}}\\n")
    sys.exit(1)
print("\\n".join(blocks[(lid, port)]))
"""


@pytest.fixture
def standins(tmp_path: Path) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, text in (("ibnetdiscover", IBNETDISCOVER), ("perfquery", PERFQUERY)):
        path = bindir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "STANDIN_LOG": str(tmp_path / "calls.log")}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FABRICD, "export", "ib", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def rows(out: str, name: str) -> dict[tuple[str, ...], float]:
    return {tuple(r["labels"].values()): r["value"] for r in json.loads(out) if r["name"] == name}


def peak_concurrency(log: Path) -> int:
    events = sorted(
        (float(t), 1 if kind == "start" else -1)
        for kind, t, *_ in (line.split() for line in log.read_text().splitlines())
    )
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return peak


def test_export_ib_once_reads_every_linked_port_through_the_commands(standins: dict[str, str], tmp_path: Path) -> None:
    res = run(["--once", "--output", "json", "--concurrency", "2"], standins)
    assert res.returncode == 3, res.stderr  # five linked ports have no capture: their perfquery fails
    assert "5 port(s) could not be read" in res.stderr and "Traceback" not in res.stderr
    up = rows(res.stdout, "fabricd_ib_port_up")
    assert sum(up.values()) == 2 and len(up) == 7
    data = rows(res.stdout, "fabricd_ib_port_data_bytes_total")
    assert data[("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "1", "tx")] == 36298026860928 * 4
    assert "exit status 1: stand-in perfquery: no capture for Lid 1432 port 1" in res.stderr
    calls = [line for line in (tmp_path / "calls.log").read_text().splitlines() if line.startswith("start")]
    assert len(calls) == 7
    assert peak_concurrency(tmp_path / "calls.log") == 2


def test_a_hung_perfquery_is_killed_at_its_deadline(standins: dict[str, str]) -> None:
    env = {**standins, "STANDIN_HANG_LID": "1719"}  # every port of switch ib-i1l1s01 hangs
    start = time.monotonic()
    res = run(["--once", "--output", "json", "--timeout", "1", "--concurrency", "8"], env)
    assert time.monotonic() - start < 15  # three hung calls in parallel, each killed after 1 s
    assert res.returncode == 3
    up = rows(res.stdout, "fabricd_ib_port_up")
    assert up[("ib-i1l1s01", "0x7cfe9003009ce5b0", "1719", "1")] == 0
    assert up[("o0002 HCA-1", "0x7cfe9003003b4b96", "133", "1")] == 1  # the others are still read
    assert "no answer within 1 s (killed)" in res.stderr


def test_without_infiniband_diags_the_error_says_what_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # fabricd, and no ibnetdiscover
    res = run(["--once"], env)
    assert res.returncode == 2
    assert "ibnetdiscover: not found" in res.stderr and "apt install infiniband-diags" in res.stderr
    assert "Traceback" not in res.stderr
    res = run(["--once", "--ibnetdiscover", str(tmp_path / "nope") + " --ports"], env)
    assert res.returncode == 2 and "nope: not found" in res.stderr


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
def test_served_exposition_passes_promtool(
    standins: dict[str, str], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    proc = subprocess.Popen(
        [FABRICD, "export", "ib", "--listen", f"127.0.0.1:{port}"],
        env=standins,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "ib.log").open("w"),
    )
    try:

        def scrape() -> str | None:
            try:
                code, body = get(f"http://127.0.0.1:{port}/metrics", timeout=30)
            except OSError:
                return None
            return body if code == 200 else None

        body = wait_for(scrape, 60, 0.3)
        assert body, (tmp_path / "ib.log").read_text()
        assert 'fabricd_ib_port_up{node="ib-i1l1s01",guid="0x7cfe9003009ce5b0",lid="1719",port="1"} 1' in body
        check = subprocess.run(
            [str(PROMTOOL), "check", "metrics"], input=body, capture_output=True, text=True, timeout=60, check=False
        )
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        proc.terminate()
        proc.wait(20)
