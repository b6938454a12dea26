"""Small pieces of the fleet work: the agent's compliance per NIC (findings on a VLAN netdev or RDMA device count
against their NIC), the --hosts selector, the apply lock, and the agent's bad input (located, exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fabricd import settings
from fabricd.audit.report import AuditReport, CheckResult, Finding, Status
from fabricd.cli.host_fanout import select_hosts
from fabricd.errors import FabricdError, UsageError
from fabricd.hosts.lock import ApplyLock, LockBusy
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd.service.agent import compliance

FABRICD = str(Path(sys.executable).with_name("fabricd"))
FABRIC = load_inventory(settings.default_inventory()).fabric


def _finding(code: str, obj: str) -> Finding:
    return Finding(code=code, object=obj, path="p", message="m")


def test_compliance_maps_findings_to_their_nic() -> None:
    intent = host_intent(FABRIC, "gpu1")
    nic = intent.nics[0]
    assert nic.vlan_netdev and nic.rdma_device
    report = AuditReport(
        kind="host",
        target="gpu1",
        checks=[
            CheckResult(
                code="HOST-MTU", title="t", status=Status.FAIL, findings=[_finding("HOST-MTU", nic.vlan_netdev)]
            ),
            CheckResult(
                code="HOST-ROCE-TOS",
                title="t",
                status=Status.FAIL,
                findings=[_finding("HOST-ROCE-TOS", nic.rdma_device)],
            ),
            CheckResult(code="HOST-PFC", title="t", status=Status.PASS),
            CheckResult(code="HOST-ETS", title="t", status=Status.SKIP, note="no DCB source"),
        ],
    )
    got = compliance(intent, report)
    assert got == {
        (nic.netdev, "HOST-MTU"): False,
        (nic.netdev, "HOST-ROCE-TOS"): False,
        (nic.netdev, "HOST-PFC"): True,
    }


def test_host_selector() -> None:
    names = [h.name for h in FABRIC.hosts]
    assert [h.name for h in select_hosts(FABRIC, "all")] == names
    assert [h.name for h in select_hosts(FABRIC, "gpu1,gpu3")] == ["gpu1", "gpu3"]
    assert [h.name for h in select_hosts(FABRIC, "group:gpu,!gpu2,!gpu[3-8]")] == ["gpu1"]
    with pytest.raises(UsageError, match="matches no inventory host"):
        select_hosts(FABRIC, "gpu1,nosuch")
    with pytest.raises(UsageError, match="empty selector"):
        select_hosts(FABRIC, " , ")


def test_apply_lock_excludes_and_says_who_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "h.lock"
    with ApplyLock("h", "first", path=path), pytest.raises(LockBusy, match=rf"pid {os.getpid()} first"):
        ApplyLock("h", "second", path=path, wait_s=0.1).acquire()
    with ApplyLock("h", "third", path=path):  # released: free again
        assert "third" in path.read_text()


def test_apply_lock_that_cannot_be_opened_is_a_clear_error(tmp_path: Path) -> None:
    """A lock path that cannot be opened (here: its directory is a file; in the field, a lock file root left in
    /run/lock for a run as another user) is a FabricdError naming the path and FABRICD_APPLY_LOCK_DIR."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    lock = ApplyLock("h", "x", path=blocker / "h.lock")
    with pytest.raises(FabricdError, match="cannot open the apply lock") as err, lock:
        pass
    assert "FABRICD_APPLY_LOCK_DIR" in (err.value.hint or "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["agent"], "--host is required"),
        (["agent", "--host", "gpu1", "--mode", "fix"], "unknown mode"),
        (["agent", "http://example.invalid/f.yml", "--host", "gpu1"], "only https://"),
        (["agent", "/nonexistent/inv.yml", "--host", "gpu1", "--once"], "no such file"),
        (["agent", "--host", "nosuch", "--once"], "no host 'nosuch'"),
    ],
)
@pytest.mark.integration  # runs the fabricd CLI as a process
def test_agent_bad_input_is_located(args: list[str], message: str, tmp_path: Path) -> None:
    env = dict(os.environ, FABRICD_STATE_DIR=str(tmp_path))
    res = subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=60, check=False, env=env)
    assert res.returncode in (2, 3), res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr
