"""`host apply` then `audit host` on a fake tree of each NIC family (fabricd_lab.fake_host; captures in
tests/golden/host and tests/golden/readers/ethtool), through the real CLI and the real sysfs backend: applied,
compliant, tampering found, restored; and a write that fails halfway restores everything before it.

The hosts are those of inventory/examples/mixed-nics.yml: gpu1 ConnectX-7 (mlx5), stor1 E810 RoCEv2 and stor2
E810 iWARP (ice/irdma), gpu2 BCM57608 (bnxt_en/bnxt_re). Links and DCB need a live host (--skip netlink; a replay
root has no DCB source), so these tests cover the sysfs/configfs side each family differs on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.hosts.sysfs import SysfsBackend
from fabricd.intent.host import HostIntent, host_intent
from fabricd.inventory import load_inventory
from fabricd_lab.fake_host import build_fake_host, fake_nics_for, write_ethtool

REPO = Path(__file__).resolve().parents[2]
MIXED = str(REPO / "inventory" / "examples" / "mixed-nics.yml")
BNXT_CC = "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"
runner = CliRunner()

# host -> (a family file apply must set, the text it must hold after apply, a file to tamper with)
FAMILY_FILES = {
    "gpu1": (
        "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
        "106",
        "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp",
    ),
    "stor1": (
        "/sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable",
        "1",
        "/sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable",
    ),
    "stor2": (
        "/sys/kernel/config/irdma/iwp23s0f0/iw_ecn_enable",
        "1",
        "/sys/kernel/config/irdma/iwp23s0f0/iw_ecn_enable",
    ),
    "gpu2": (f"{BNXT_CC}/cnp_dscp", "0x30", f"{BNXT_CC}/ecn_enable"),
}


def intent_of(host: str) -> HostIntent:
    return host_intent(load_inventory(MIXED).fabric, host)


def make_tree(tmp_path: Path, host: str) -> Path:
    nics = fake_nics_for(intent_of(host))
    root = build_fake_host(tmp_path / host, nics)
    write_ethtool(root, nics)
    return root


def read(root: Path, path: str) -> str:
    return (root / path.lstrip("/")).read_text().strip()


def run(args: list[str]) -> tuple[int, str]:
    res = runner.invoke(build_app(), args)
    code = getattr(res.exception, "exit_code", res.exit_code) if res.exception else res.exit_code
    return int(code), res.stdout


@pytest.mark.parametrize("host", sorted(FAMILY_FILES))
def test_apply_audit_tamper_restore_per_family(host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    root = make_tree(tmp_path, host)
    target, value, tamper = FAMILY_FILES[host]
    if host == "stor2":  # irdma's default already has iw_ecn_enable on: start from a host where it was turned off
        (root / target.lstrip("/")).write_text("0\n")
    before = read(root, target)
    common = ["--host", host, "--root", str(root), "--skip", "netlink"]
    code, out = run(["host", "apply", MIXED, *common, "--yes", "--output", "json"])
    assert code == 0, out
    assert read(root, target) == value
    code, out = run(["audit", "host", MIXED, *common, "--output", "json"])
    assert code == 0, out
    checks = {c["code"]: c for c in json.loads(out)["checks"]}
    assert all(c["status"] != "fail" for c in checks.values())
    if host.startswith("stor"):  # E810 prerequisites are named, not silently passed
        assert checks["HOST-PREREQ"]["status"] == "skip" and "fw-lldp-agent" not in checks["HOST-PREREQ"]["note"]
        assert "firmware LLDP agent off" in checks["HOST-PREREQ"]["note"]
    # tamper with the family's own file: the audit finds it where the family keeps it
    (root / tamper.lstrip("/")).write_text("0\n")
    code, out = run(["audit", "host", MIXED, *common, "--output", "json"])
    assert code == 1, out
    paths = [f["path"] for c in json.loads(out)["checks"] for f in c.get("findings", [])]
    assert paths == [tamper]
    code, out = run(["host", "restore", MIXED, "--host", host, "--root", str(root)])
    assert code == 0, out
    assert read(root, target) == before


def test_bnxt_writes_hex_and_commits(tmp_path: Path) -> None:
    root = make_tree(tmp_path, "gpu2")
    intent = intent_of("gpu2")
    backend = SysfsBackend(root)
    plan = backend.plan(intent, backend.read_state(intent))
    assert plan.steps[-1].path == f"{BNXT_CC}/apply"
    result = backend.apply(plan)
    assert result.ok
    assert [
        read(root, f"{BNXT_CC}/{k}")
        for k in ("roce_dscp", "roce_prio", "cnp_dscp", "cnp_prio", "ecn_enable", "cc_mode", "apply")
    ] == ["0x1a", "0x3", "0x30", "0x6", "0x1", "0x1", "0x1"]
    # nothing changed: nothing to commit either
    assert backend.plan(intent, backend.read_state(intent)).steps == []
    # one knob changed by hand: the knob and the commit
    (root / BNXT_CC.lstrip("/") / "cc_mode").write_text("0x0\n")
    again = backend.plan(intent, backend.read_state(intent))
    assert [s.path.rsplit("/", 1)[1] for s in again.steps] == ["cc_mode", "apply"]


@pytest.mark.parametrize(
    ("host", "failing", "earlier"),
    [
        (
            "gpu2",
            f"{BNXT_CC}/cc_mode",
            [
                f"{BNXT_CC}/roce_dscp",
                f"{BNXT_CC}/cnp_dscp",
                f"{BNXT_CC}/ecn_enable",
                "/sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_tos",
            ],
        ),
        (
            "stor1",
            "/sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable",
            ["/sys/kernel/config/rdma_cm/rdmap23s0f0/ports/1/default_roce_tos"],
        ),
        (
            "gpu1",
            "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3",
            [
                "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
                "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp",
            ],
        ),
    ],
)
def test_injected_failure_restores_everything_before_it(
    host: str, failing: str, earlier: list[str], tmp_path: Path
) -> None:
    """The failing file is replaced by a directory (EISDIR on open for writing): a real kernel-side refusal that
    needs no mock. Every file written before it is back to its snapshot value; nothing is left half-done."""
    root = make_tree(tmp_path, host)
    intent = intent_of(host)
    if host == "gpu1":  # make the mlx5 plan touch the CNP and enable files first
        (root / "sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp").write_text("4\n")
        (root / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").write_text("0\n")
    before = {p: read(root, p) for p in earlier}
    target = root / failing.lstrip("/")
    target.unlink()
    target.mkdir()
    backend = SysfsBackend(root)
    plan = backend.plan(intent, backend.read_state(intent))
    order = [s.path for s in plan.steps]
    assert failing in order and all(order.index(p) < order.index(failing) for p in earlier)
    result = backend.apply(plan)
    assert not result.ok and result.failed is not None and result.failed.step.path == failing
    assert "Is a directory" in (result.failed.error or "")
    assert result.restored and result.restore_errors == []
    assert {p for p in earlier} <= {s.path for s in result.applied}
    for path, value in before.items():
        got = read(root, path)
        assert got == value, f"{path} not restored: {got!r} != {value!r}"
    if host == "gpu2":  # the restored knobs were committed again
        assert read(root, f"{BNXT_CC}/apply") == "0x1"


def test_soft_roce_gets_only_rdma_cm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Soft-RoCE (inventory/examples/softroce.yml, rdma_driver rdma_rxe): no DCB, no ECN files, only RDMA-CM's ToS
    and mode; apply then audit is compliant, and the audit says DCB does not exist here instead of passing it."""
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    soft = str(REPO / "inventory" / "examples" / "softroce.yml")
    intent = host_intent(load_inventory(soft).fabric, "rxe-a")
    nic = intent.nics[0]
    assert (nic.family, nic.dcb, nic.writes, nic.global_pause) == ("rxe", False, [], None)
    root = build_fake_host(tmp_path / "rxe", fake_nics_for(intent))
    assert not (root / "sys/class/net/eth0/ecn").exists()
    common = ["--host", "rxe-a", "--root", str(root), "--skip", "netlink"]
    code, out = run(["host", "apply", soft, *common, "--yes", "--output", "json"])
    assert code == 0, out
    assert read(root, "/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos") == "106"
    code, out = run(["audit", "host", soft, *common, "--output", "json"])
    assert code == 0, out
    checks = {c["code"]: c for c in json.loads(out)["checks"]}
    assert checks["HOST-PFC"]["status"] == "skip"
    assert {checks[c]["status"] for c in ("HOST-CNP", "HOST-ECN-ENABLE", "HOST-DCQCN")} == {"skip"}


def test_one_host_with_a_connectx_and_an_e810(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hybrid1 has a ConnectX-7 and an E810: each NIC gets its own family's steps; apply then audit is compliant;
    when the E810's irdma file refuses the write, the ConnectX's changes made before it are restored too."""
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    intent = intent_of("hybrid1")
    assert [n.family for n in intent.nics] == ["mlx5", "ice"]
    root = make_tree(tmp_path, "hybrid1")
    backend = SysfsBackend(root)
    plan = backend.plan(intent, backend.read_state(intent))
    by_nic = {
        n.netdev: [s.path for s in plan.steps if n.netdev in s.path or (n.rdma_device or "?") in s.path]
        for n in intent.nics
    }
    assert by_nic["ens2f0"] == [
        "/sys/kernel/config/rdma_cm/rdmap23s0f0/ports/1/default_roce_tos",
        "/sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable",
    ]
    assert "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in by_nic["ens1f0np0"]
    assert not any("/irdma/" in p for p in by_nic["ens1f0np0"]) and not any("/ecn/" in p for p in by_nic["ens2f0"])
    # a refusing irdma file: everything before it, the ConnectX's ToS included, is restored
    target = root / "sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable"
    target.unlink()
    target.mkdir()
    result = backend.apply(plan)
    assert not result.ok and result.restored and result.restore_errors == []
    assert read(root, "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "0"
    assert read(root, "/sys/kernel/config/rdma_cm/rdmap23s0f0/ports/1/default_roce_tos") == "0"
    target.rmdir()
    target.write_text("0\n")
    common = ["--host", "hybrid1", "--root", str(root), "--skip", "netlink"]
    code, out = run(["host", "apply", MIXED, *common, "--yes", "--output", "json"])
    assert code == 0, out
    code, out = run(["audit", "host", MIXED, *common, "--output", "json"])
    assert code == 0, out
