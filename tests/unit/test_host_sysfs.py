"""sysfs/configfs backend and `fabricd audit host` against a fake mlx5 tree built from real captures
(fabricd_lab.fake_host; tests/golden/host/SOURCES.md): apply, audit clean, tamper, findings, restore, and a write
that fails halfway restoring every earlier change."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd import settings
from fabricd.audit.host import audit_host
from fabricd.audit.report import Status
from fabricd.cli.main import build_app
from fabricd.errors import FabricdError, HostBackendError
from fabricd.hosts.factory import open_backends
from fabricd.hosts.sysfs import SysfsBackend
from fabricd.intent.host import HostIntent, host_intent
from fabricd.model import Fabric
from fabricd_lab.fake_host import FakeNic, build_fake_host, fake_nics_for

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "host"


@pytest.fixture()
def intent(lab_fabric: Fabric) -> HostIntent:
    """gpu1 with one DCQCN knob changed, so that apply has DCQCN work to do on the captured defaults."""
    data = lab_fabric.model_dump()
    data["policy"]["dcqcn"]["rp"]["rpg_time_reset"] = 600
    return host_intent(Fabric.model_validate(data), "gpu1")


@pytest.fixture()
def tree(tmp_path: Path, intent: HostIntent) -> Path:
    return build_fake_host(tmp_path / "host", fake_nics_for(intent))


def sysfs_findings(intent: HostIntent, root: Path) -> dict[str, list[str]]:
    report = audit_host(intent, [SysfsBackend(root)], gid_root=root)
    return {c.code: [f.path for f in c.findings] for c in report.checks if c.status == Status.FAIL}


def read(root: Path, path: str) -> str:
    return (root / path.lstrip("/")).read_text().strip()


def test_fake_tree_covers_every_file_fabricd_touches(tree: Path, intent: HostIntent) -> None:
    backend = SysfsBackend(tree)
    for step in backend.steps(intent):
        assert (tree / step.path.lstrip("/")).is_file(), step.path
    assert read(tree, "/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset") == "300"  # capture value


def test_apply_audit_tamper_restore(tree: Path, intent: HostIntent) -> None:
    backend = SysfsBackend(tree)
    before = backend.read_state(intent)
    assert set(sysfs_findings(intent, tree)) == {"HOST-ROCE-TOS", "HOST-DCQCN"}
    plan = backend.plan(intent, before)
    assert {s.path.rsplit("/", 1)[-1] for s in plan.steps} == {"default_roce_tos", "traffic_class", "rpg_time_reset"}
    result = backend.apply(plan)
    assert result.ok and len(result.applied) == 3
    assert sysfs_findings(intent, tree) == {}
    assert read(tree, "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "106"
    # tamper: the classic incidents
    (tree / "sys/class/net/ens1f0np0/ecn/roce_np/enable/3").write_text("0\n")
    (tree / "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos").write_text("0\n")
    (tree / "sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp").write_text("4\n")
    found = sysfs_findings(intent, tree)
    assert found == {
        "HOST-ECN-ENABLE": ["/sys/class/net/ens1f0np0/ecn/roce_np/enable/3"],
        "HOST-ROCE-TOS": ["/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"],
        "HOST-CNP": ["/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp"],
    }
    assert backend.apply(backend.plan(intent, backend.read_state(intent))).ok
    assert sysfs_findings(intent, tree) == {}
    # restore the snapshot taken before the first apply: back to the factory values
    assert backend.restore(before) == []
    assert read(tree, "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "0"
    assert read(tree, "/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset") == "300"
    assert read(tree, "/sys/class/infiniband/mlx5_0/tc/1/traffic_class") == "-1"  # mlx5: -1 = no global tclass
    assert backend.read("mlx5_0", "/sys/class/infiniband/mlx5_0/tc/1/traffic_class").value is None


@pytest.fixture()
def read_only(tree: Path) -> Iterator[Path]:
    """Make roce_rp/rpg_time_reset read-only even for root: a read-only bind mount of the file (EROFS), or, where
    mounting is not allowed, replace the file by a directory (EISDIR)."""
    target = tree / "sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset"
    mounted = False
    if os.geteuid() == 0:
        ok = (
            subprocess.run(["mount", "--bind", str(target), str(target)], check=False, capture_output=True).returncode
            == 0
        )
        if ok:
            mounted = (
                subprocess.run(
                    ["mount", "-o", "remount,ro,bind", str(target)], check=False, capture_output=True
                ).returncode
                == 0
            )
            if not mounted:
                subprocess.run(["umount", str(target)], check=False)
    if not mounted:
        value = target.read_text()
        target.unlink()
        target.mkdir()
        (target / "was").write_text(value)
    try:
        yield target
    finally:
        if mounted:
            subprocess.run(["umount", str(target)], check=True)


@pytest.mark.integration  # mount --bind (root)
def test_write_failing_halfway_restores_every_earlier_change(tree: Path, intent: HostIntent, read_only: Path) -> None:
    backend = SysfsBackend(tree)
    # make the plan touch several files before the read-only one
    (tree / "sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp").write_text("4\n")
    (tree / "sys/class/net/ens1f0np0/ecn/roce_rp/enable/3").write_text("0\n")
    before = {
        p: read(tree, p)
        for p in (
            "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
            "/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp",
            "/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3",
        )
    }
    tclass = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    plan = backend.plan(intent, backend.read_state(intent))
    order = [s.path for s in plan.steps]
    failing = "/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset"
    assert order.index(failing) > max(order.index(p) for p in before)
    result = backend.apply(plan)
    assert not result.ok and result.failed is not None and result.failed.step.path == failing
    assert failing in (result.failed.error or "")
    assert "Read-only file system" in (result.failed.error or "") or "Is a directory" in (result.failed.error or "")
    print("failure injected:", result.failed.error)
    assert result.restored and result.restore_errors == []
    assert {s.path for s in result.applied} >= set(before)
    for path, value in before.items():
        assert read(tree, path) == value, f"{path} not restored"
    assert backend.read("mlx5_0", tclass).value is None  # unset again


def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sys/class/net").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mtu").write_text("1500\n")
    (root / "sys/class/net/evil").symlink_to(outside)
    backend = SysfsBackend(root)
    with pytest.raises(HostBackendError, match="outside the root"):
        backend.resolve("/sys/class/net/evil/mtu")
    with pytest.raises(HostBackendError, match="refused"):
        backend.resolve("/sys/../../etc/passwd")
    assert backend.read("evil", "/sys/class/net/evil/mtu").error is not None


def test_configfs_group_is_created_like_cma_roce_tos(tmp_path: Path, intent: HostIntent) -> None:
    root = build_fake_host(tmp_path / "h", fake_nics_for(intent))
    group = root / "sys/kernel/config/rdma_cm/mlx5_0"
    import shutil

    shutil.rmtree(group)
    backend = SysfsBackend(root)
    result = backend.apply(backend.plan(intent, backend.read_state(intent)))
    # the group is created (mkdir), but a fake tree has no kernel to populate ports/1: located error, restored
    assert group.is_dir() and backend.created_groups == ["mlx5_0"]
    assert not result.ok and result.failed is not None
    assert "has no such port" in (result.failed.error or "")
    assert read(root, "/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_time_reset") == "300"


def test_missing_nic_and_files_are_findings(tmp_path: Path, intent: HostIntent) -> None:
    root = build_fake_host(tmp_path / "h", [FakeNic(netdev="other0", ip="10.1.1.1")])
    report = audit_host(intent, open_backends(root), gid_root=root)
    failed = {c.code for c in report.checks if c.status == Status.FAIL}
    assert {"HOST-NIC", "HOST-CNP", "HOST-ECN-ENABLE", "HOST-GID"} <= failed
    assert not report.compliant


runner = CliRunner()


def test_cli_audit_host_junit_and_json(tree: Path, tmp_path: Path) -> None:
    app = build_app()
    junit = tmp_path / "out.xml"
    res = runner.invoke(
        app, ["audit", "host", "--host", "gpu1", "--root", str(tree), "--junit", str(junit), "--output", "json"]
    )
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert data["compliant"] is False and data["target"] == "gpu1"
    codes = {c["code"]: c["status"] for c in data["checks"]}
    assert codes["HOST-ROCE-TOS"] == "fail" and codes["HOST-GID"] == "pass" and codes["HOST-PFC"] == "skip"
    suites = ET.parse(junit).getroot()
    assert suites.tag == "testsuites"
    suite = suites.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests", "0")) == len(data["checks"])
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert int(suite.get("failures", "0")) == len(failed) and any("HOST-ROCE-TOS" in str(n) for n in failed)
    assert int(suite.get("skipped", "0")) == sum(1 for c in cases if c.find("skipped") is not None)


def test_cli_host_apply_then_audit_clean_then_restore(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FABRICD_STATE_DIR", str(tmp_path / "state"))
    app = build_app()
    dry = runner.invoke(
        app,
        [
            "host",
            "apply",
            str(settings.default_inventory()),
            "--host",
            "gpu1",
            "--root",
            str(tree),
            "--skip",
            "netlink",
            "--dry-run",
            "--output",
            "json",
        ],
    )
    assert dry.exit_code == 0, dry.output
    assert {s["backend"] for s in json.loads(dry.stdout)["steps"]} == {"sysfs"}
    res = runner.invoke(
        app,
        [
            "host",
            "apply",
            str(settings.default_inventory()),
            "--host",
            "gpu1",
            "--root",
            str(tree),
            "--skip",
            "netlink",
            "--yes",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "state/hosts/gpu1/last.json").is_file()
    res = runner.invoke(app, ["audit", "host", "--host", "gpu1", "--root", str(tree), "--skip", "netlink"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["host", "restore", "--host", "gpu1", "--root", str(tree)])
    assert res.exit_code == 0, res.output
    assert read(tree, "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "0"


def exit_code(args: list[str]) -> int:
    """Exit code as `fabricd` (cli.main.main) gives it: FabricdError -> its exit_code."""
    res = runner.invoke(build_app(), args)
    if isinstance(res.exception, FabricdError):
        return res.exception.exit_code
    return res.exit_code


def test_cli_bad_input_exits_2(tree: Path) -> None:
    assert exit_code(["audit", "host", "--host", "nope", "--root", str(tree)]) == 2
    assert exit_code(["audit", "host", "--host", "gpu1", "--skip", "bogus"]) == 2
    assert exit_code(["audit", "host", "--host", "gpu1", "--root", "/nonexistent/x"]) == 2


def test_gids_matches_show_gids_capture(tmp_path: Path) -> None:
    root = build_fake_host(tmp_path / "g", [FakeNic(netdev="rdma0", ip="192.168.211.242")])
    expected = "".join(
        line + "\n"
        for line in (GOLDEN / "show_gids-mlx5_0-rdma0.txt").read_text().splitlines()
        if not line.startswith("#")
    )
    res = runner.invoke(build_app(), ["gids", "--root", str(root), "--show-gids"])
    assert res.exit_code == 0 and res.stdout == expected
    rows = json.loads(runner.invoke(build_app(), ["gids", "--root", str(root), "--output", "json"]).stdout)
    v2 = [r for r in rows if r["version"] == "v2" and r["ipv4"]]
    assert v2 == [
        {
            "device": "mlx5_0",
            "port": 1,
            "index": 3,
            "gid": "0000:0000:0000:0000:0000:ffff:c0a8:d3f2",
            "ipv4": "192.168.211.242",
            "version": "v2",
            "type": "RoCE v2",
            "netdev": "rdma0",
        }
    ]


def test_gids_unknown_device_is_bad_input(tmp_path: Path) -> None:
    root = build_fake_host(tmp_path / "g", [FakeNic(netdev="rdma0", ip="192.168.211.242")])
    args = ["gids", "mlx5_9", "--root", str(root)]
    assert exit_code(args) == 2
    error = runner.invoke(build_app(), args).exception
    assert isinstance(error, FabricdError)
    assert "no RDMA device mlx5_9" in error.render() and "expected one of: mlx5_0" in error.render()


def test_install_unit_writes_unit_and_udev_rule(tmp_path: Path) -> None:
    res = runner.invoke(
        build_app(),
        ["host", "install-unit", str(settings.default_inventory()), "--host", "gpu2", "--out", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    unit = (tmp_path / "fabricd-host.service").read_text()
    assert "host apply" in unit and "--host gpu2 --yes" in unit and "WantedBy=multi-user.target" in unit
    rules = (tmp_path / "90-fabricd-host.rules").read_text()
    assert 'KERNEL=="ens1f0np0"' in rules and 'SUBSYSTEM=="infiniband", KERNEL=="mlx5_0"' in rules


def test_gid_helpers_round_trip_and_versions() -> None:
    from fabricd.readers.gids import gid_of_ipv4, ipv4_of_gid, roce_version

    gid = gid_of_ipv4("192.168.211.242")
    assert gid == "0000:0000:0000:0000:0000:ffff:c0a8:d3f2"
    assert ipv4_of_gid(gid) == "192.168.211.242"
    assert ipv4_of_gid("fe80:0000:0000:0000:0202:c9ff:fe00:0001") is None
    assert ipv4_of_gid("not a gid") is None
    assert [roce_version(t) for t in ("RoCE v2", "IB/RoCE v1", None, "IB")] == ["v2", "v1", "", "IB"]
