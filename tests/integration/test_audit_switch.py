"""``fabricd audit switch`` against the lab simulators of all four NOSes, over real SSH (netmiko -> asyncssh).

In-process tests use the switch-lab helpers (``switchlab.switch_lab``: simulators on ephemeral ports, private
known_hosts and state): audit before and after a push, a hand edit that turns PFC off on one port and the MTU down on
another, and PFC storms driven in the counter model (one never ends: stuck; one ends: restored). The CLI test runs
the real entry point (in-process, to stay fast) against ``fabricd lab up`` on a copy of inventory/lab with private
ports and state dir, as a user would: push, JUnit, JSON, a storm driven with ``fabricd lab drive``, bad input (exit
2) and an unreachable switch (exit 3).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from labports import move_lab_ports
from switchlab import LEAVES, PORT_MTU, SwitchLab, lab_fabric, switch_lab, write_lab_credentials

from fabricd.audit.report import AuditReport, Status
from fabricd.audit.switch import SWITCH_CHECKS, audit_switch, reachable
from fabricd.cli.report import render_junit
from fabricd.deploy.pipeline import push

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).parent / "fabricd")

TAMPER = {
    "leaf1-sonic": [
        'sudo sonic-cfggen -a \'{"PORT_QOS_MAP":{"Ethernet0":{"pfc_enable":""}}}\' --write-to-db',
        "sudo config interface mtu Ethernet8 1500",
    ],
    "leaf2-eos": [
        "configure",
        "interface Ethernet1",
        "priority-flow-control off",
        "interface Ethernet2",
        "mtu 1500",
        "end",
    ],
    "leaf3-nxos": [
        "configure terminal",
        "interface Ethernet1/1",
        "priority-flow-control mode off",
        "interface Ethernet1/2",
        "mtu 1500",
        "end",
    ],
    "leaf4-nvue": ["nv unset interface swp1 qos pfc", "nv set interface swp2 link mtu 1500", "nv config apply -y"],
}
"""A hand edit on each platform: PFC off on the first host port, MTU 1500 on the second."""

HOST_PORTS = {
    "leaf1-sonic": ("Ethernet0", "Ethernet8"),
    "leaf2-eos": ("Ethernet1", "Ethernet2"),
    "leaf3-nxos": ("Ethernet1/1", "Ethernet1/2"),
    "leaf4-nvue": ("swp1", "swp2"),
}


def _audit(lab: SwitchLab, name: str) -> AuditReport:
    return audit_switch(lab_fabric(), lab.switches[name], lab.factory())


def _status(report: AuditReport) -> dict[str, Status]:
    return {c.code: c.status for c in report.checks}


def _findings(report: AuditReport, code: str) -> list[tuple[str, str]]:
    return [(f.object, f.message) for c in report.checks if c.code == code for f in c.findings]


def _push(lab: SwitchLab) -> None:
    report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
    assert not report.failed, [r.error for r in report.failed]


def test_factory_config_fails_then_push_audits_clean_on_all_platforms(tmp_path: Path) -> None:
    with switch_lab(tmp_path) as lab:
        for name in LEAVES:
            before = _audit(lab, name)
            status = _status(before)
            assert status["SW-REACH"] is Status.PASS, before
            for code in ("SW-DRIFT", "SW-TRUST", "SW-DSCP-MAP", "SW-PFC", "SW-ECN", "SW-WD", "SW-MTU"):
                assert status[code] is Status.FAIL, (name, code, before)
            (pfc,) = _findings(before, "SW-PFC")
            assert pfc == (", ".join(p.name for p in lab.switches[name].ports), "PFC is off"), pfc
        _push(lab)
        reports = [_audit(lab, name) for name in LEAVES]
        for report in reports:
            assert report.compliant, report
            assert [c.code for c in report.checks] == [c.code for c in SWITCH_CHECKS]
            assert all(c.status is Status.PASS for c in report.checks), report
        suites = ET.fromstring(render_junit(reports))
        assert suites.get("tests") == str(len(LEAVES) * len(SWITCH_CHECKS)) and suites.get("failures") == "0"
        assert len(suites.findall("./testsuite/testcase")) == len(LEAVES) * len(SWITCH_CHECKS)


@pytest.mark.parametrize("name", LEAVES)
def test_hand_edit_pfc_off_and_mtu_are_found_then_repaired(tmp_path: Path, name: str) -> None:
    with switch_lab(tmp_path, [name]) as lab:
        _push(lab)
        assert _audit(lab, name).compliant
        drv = lab.driver(name)
        drv.open()
        try:
            for out in drv.run(TAMPER[name]).values():
                assert not drv.error_pattern.search(out), out
        finally:
            drv.close()
        report = _audit(lab, name)
        first, second = HOST_PORTS[name]
        status = _status(report)
        assert status["SW-DRIFT"] is Status.FAIL
        (pfc,) = _findings(report, "SW-PFC")
        assert pfc[0] == first and pfc[1].startswith("PFC is off"), pfc
        (mtu,) = [f for c in report.checks if c.code == "SW-MTU" for f in c.findings]
        assert (mtu.object, mtu.expected, mtu.got) == (second, PORT_MTU[name], "1500"), mtu
        assert mtu.hint, "the first finding of a check carries its fix hint"
        for code in ("SW-TRUST", "SW-DSCP-MAP", "SW-ECN", "SW-WD-STUCK"):
            assert status[code] is Status.PASS, (code, report)
        _push(lab)
        assert _audit(lab, name).compliant


def test_storm_detected_never_restored_is_stuck_restored_one_is_not(tmp_path: Path) -> None:
    """Two full storms per switch on priority 3: one keeps going (the watchdog detects it and never restores:
    stuck), one stops after detection (the watchdog restores it: not stuck)."""
    with switch_lab(tmp_path) as lab:
        _push(lab)
        counters = {n: lab.thread.switch(n).counters for n in LEAVES}
        for n in LEAVES:
            stuck, restored = HOST_PORTS[n]
            lab.thread.call(lambda c=counters[n], a=stuck, b=restored: (c.storm_start(a, 3), c.storm_start(b, 3)))
        time.sleep(0.35)  # > detection (200 ms on every platform in inventory/lab)
        for n in LEAVES:
            lab.thread.call(lambda c=counters[n], b=HOST_PORTS[n][1]: c.storm_stop(b, 3))
        time.sleep(0.35)  # > restoration (200 ms; 100 ms on NVUE)
        for n in LEAVES:
            report = _audit(lab, n)
            stuck, restored = HOST_PORTS[n]
            found = _findings(report, "SW-WD-STUCK")
            assert [obj for obj, _ in found] == [f"{stuck}:3"], (n, found)
            assert "never restored" in found[0][1]
            wd = lab.thread.call(
                lambda c=counters[n], b=restored: (c.read()[b].watchdog[3].detected, c.read()[b].watchdog[3].restored)
            )
            assert wd == (1, 1), f"{n}: the stopped storm was detected and restored"
            status = _status(report)
            assert all(status[c.code] is Status.PASS for c in SWITCH_CHECKS if c.code != "SW-WD-STUCK"), report


def test_unreachable_switch_is_reported_not_raised(tmp_path: Path) -> None:
    with switch_lab(tmp_path, ["leaf2-eos"]) as lab:
        sw = lab.switches["leaf2-eos"]
    # the simulator is gone: the port refuses connections
    report = audit_switch(lab_fabric(), sw, lab.factory())
    assert not reachable(report) and not report.compliant
    (reach,) = [c for c in report.checks if c.code == "SW-REACH"]
    assert reach.status is Status.FAIL and "cannot reach" in str(reach.findings[0].got)
    assert all(c.status is Status.SKIP for c in report.checks if c.code != "SW-REACH")


# ------------------------------------------------------------------------------------------------------------
# The CLI, as a user runs it
# ------------------------------------------------------------------------------------------------------------


def _run(*args: str, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


Main = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli_lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_main: Main, reserve_port: Callable[[], int]
) -> Iterator[tuple[Path, Main]]:
    """``fabricd lab up`` (a daemon, so a subprocess) on a copy of inventory/lab with held free ports and a private
    state dir; yields the inventory and the real entry point (``fabricd.cli.main.main``) run in-process."""
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    move_lab_ports(inv, reserve_port)
    state = tmp_path / "state"
    env = {**os.environ, "FABRICD_STATE_DIR": str(state)}
    for var in ("FABRICD_INVENTORY", "FABRICD_OUTPUT"):
        env.pop(var, None)
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FABRICD_STATE_DIR", str(state))
    monkeypatch.setenv("COLUMNS", "250")

    run = run_main  # the real entry point in-process (tests/conftest.py)

    up = _run("lab", "up", str(inv), env=env)
    if up.returncode != 0:
        pytest.fail(f"fabricd lab up failed: {up.stderr}")
    try:
        yield inv, run
    finally:
        pid_file = state / "lab" / "lab.pid"
        if pid_file.exists():  # the test may have stopped it already
            down = _run("lab", "down", env=env, timeout=60)
            if down.returncode != 0 and pid_file.exists():  # never leave our daemon behind
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)


def test_cli_junit_json_stuck_bad_input_and_unreachable(
    cli_lab: tuple[Path, Main], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv, run = cli_lab
    code, _, err = run("push", str(inv), "--device", "leaf1-sonic", "--device", "leaf3-nxos", "--yes")
    assert code == 0, err
    junit = tmp_path / "out" / "audit.xml"
    code, out, err = run(
        "audit", "switch", str(inv), "--device", "leaf1-sonic", "--device", "leaf3-nxos", "--junit", str(junit)
    )
    assert code == 0, out + err
    assert "audit switch leaf1-sonic: compliant" in out and "audit switch leaf3-nxos: compliant" in out
    suites = ET.parse(junit).getroot()
    cases = suites.findall("./testsuite/testcase")
    assert len(cases) == 2 * len(SWITCH_CHECKS) and suites.get("failures") == "0"
    assert {c.get("name", "").split()[0] for c in cases} == {c.code for c in SWITCH_CHECKS}

    code, _, err = run("lab", "drive", "leaf1-sonic", "storm-start", "--port", "Ethernet8", "--priority", "3")
    assert code == 0, err
    time.sleep(0.35)  # > the 200 ms detection time
    code, out, err = run(
        "audit", "switch", str(inv), "--device", "leaf1-sonic", "--output", "json", "--junit", str(junit)
    )
    assert code == 1, out + err
    data = json.loads(out)
    failed = {c["code"]: c for c in data["checks"] if c["status"] == "fail"}
    assert list(failed) == ["SW-WD-STUCK"] and data["compliant"] is False
    (finding,) = failed["SW-WD-STUCK"]["findings"]
    assert finding["object"] == "Ethernet8:3" and finding["got"] == "detected 1, restored 0"
    (failure,) = ET.parse(junit).getroot().findall("./testsuite/testcase/failure")
    assert failure.get("type") == "SW-WD-STUCK" and "Ethernet8:3" in (failure.text or "")

    for args in (("--device", "leaf9"), ()):
        code, _, err = run("audit", "switch", str(inv), *args)
        assert code == 2 and "Traceback" not in err and "error:" in err, err

    code, _, err = run("lab", "down")
    assert code == 0, err
    write_lab_credentials(tmp_path / "state", "not-used")  # `lab down` removed the lab's files: get past them
    code, out, err = run("audit", "switch", str(inv), "--device", "leaf3-nxos", "--junit", str(junit))
    assert code == 3, out + err
    assert "cannot reach" in err and "Traceback" not in err
    suite = ET.parse(junit).getroot()
    assert (suite.get("failures"), suite.get("skipped")) == ("1", str(len(SWITCH_CHECKS) - 1))
