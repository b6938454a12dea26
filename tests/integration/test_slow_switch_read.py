"""A slow switch is read correctly or the read fails; it is never read as empty (issue 23 part 6).

The lab's simulators with the ``slow-ms`` fault answer every command that late while echoing at once. netmiko's
session preparation then returns before the prompts it asked for have all arrived, and before the fix such a late
prompt ended fabricd's next read: ``show running-config`` of a slow NX-OS read as empty and ``fabricd diff`` reported
every owned line missing (exit 1, not a failure). Real SSH over 127.0.0.1 (netmiko/paramiko -> asyncssh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from labports import move_lab_ports
from switchlab import LEAVES, switch_lab

from fabricd.deploy.pipeline import drift
from fabricd.errors import DriverError
from fabricd.platforms.base import DriverOptions
from fabricd_lab.faults import parse_fault

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FABRICD = [sys.executable, "-c", "from fabricd.cli.main import main; main()"]
SLOW_MS = 2000


@pytest.mark.parametrize("name", LEAVES)
def test_a_slow_switch_reads_its_running_config_every_time(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name], [parse_fault(f"{name}:slow-ms={SLOW_MS}")]) as lab:
        drv = lab.driver(name)
        drv.open()
        try:
            for _ in range(2):
                got = drv.get_config()
                assert drv.fingerprint(got).strip() == drv.fingerprint(lab.running(name)).strip()
        finally:
            drv.close()


def test_a_read_that_timed_out_leaves_the_session_in_step(tmp_path: Path) -> None:
    """Reads that time out (read timeout 1 s, answers 1.5 s late) fail; their replies, arriving later, are skipped by
    the next read, which returns its own command's output."""
    name = "leaf3-nxos"
    with switch_lab(tmp_path, [name], [parse_fault(f"{name}:slow-ms=1500")]) as lab:
        drv = lab.driver(name, DriverOptions(read_timeout_s=1.0, conn_timeout_s=10.0))
        drv.open()
        try:
            for _ in range(2):
                with pytest.raises(DriverError, match="no prompt within 1 s"):
                    drv.get_config()
            for _ in range(2):
                got = drv.plausible_config(drv.exec("show running-config", op="get_config", timeout=15))
                assert drv.fingerprint(got).strip() == drv.fingerprint(lab.running(name)).strip()
            summary = drv.exec("show checkpoint summary", timeout=15)  # the next command answers itself
            assert "version " not in summary and "Command:" not in summary, summary
        finally:
            drv.close()


def test_diff_against_a_slow_nxos_reports_the_true_drift(tmp_path: Path) -> None:
    name = "leaf3-nxos"
    with switch_lab(tmp_path, [name], [parse_fault(f"{name}:slow-ms={SLOW_MS}")]) as lab:
        [res] = drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        ref = lab.driver(name)
        truth = ref.compare(lab.running(name), lab.candidates[name])
        empty = ref.compare("", lab.candidates[name])
        assert truth.changes != empty.changes  # the two outcomes the test tells apart
        assert not res.failed, res.error
        assert res.changes == list(truth.changes)


def test_an_implausible_running_config_is_a_failed_read(tmp_path: Path) -> None:
    """The per-pack plausibility rule (patterns.RUNNING_CONFIG_MARK) on what a switch sends back."""
    with switch_lab(tmp_path, LEAVES) as lab:
        for name in LEAVES:
            drv = lab.driver(name)
            assert drv.plausible_config(lab.running(name)) == lab.running(name)
            for text in ("", "\n", "% Invalid command at '^' marker.\n"):
                with pytest.raises(DriverError, match="not plausible"):
                    drv.plausible_config(text)


def test_cli_diff_against_a_slow_nxos_is_drift_or_failure_never_all_missing(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    inv = tmp_path / "inv"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    env = {k: v for k, v in os.environ.items() if k not in ("FABRICD_LAB_PASSWORD", "FABRICD_INVENTORY")}
    env.update(FABRICD_STATE_DIR=str(tmp_path / "state"), HOME=str(tmp_path))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*FABRICD, *args], env=env, capture_output=True, text=True, timeout=240, check=False)

    move_lab_ports(inv, reserve_port)  # held until the test ends
    up = run("lab", "up", str(inv), "--fault", f"leaf3-nxos:slow-ms={SLOW_MS}")
    assert up.returncode == 0, up.stderr
    try:
        res = run("diff", str(inv), "--device", "leaf3-nxos", "--output", "json")
        assert res.returncode in (1, 3), res.stdout + res.stderr
        [r] = json.loads(res.stdout)["results"]
        if res.returncode == 3:
            assert r["failed"] and r["error"]
        else:  # the factory config lacks fabricd's QoS, but it has its interfaces: never "every line missing"
            from fabricd.deploy.targets import render_candidates
            from fabricd.inventory import load_inventory
            from fabricd.platforms.registry import make_driver

            fabric = load_inventory(inv).fabric
            sw = fabric.switch("leaf3-nxos")
            assert sw is not None
            candidate = render_candidates(fabric, [sw])["leaf3-nxos"]
            drv = make_driver(sw, None)  # type: ignore[arg-type]  # compare() needs no session
            assert r["changes"] != list(drv.compare("", candidate).changes), r["diff"]
    finally:
        run("lab", "down")
