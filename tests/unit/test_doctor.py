"""`fabricd doctor` reads a machine tree; here a fake root stands in for one with RDMA and one without."""

from __future__ import annotations

import gzip
from pathlib import Path

from fabricd.audit.doctor import run_checks


def _by_name(root: Path) -> dict[str, bool]:
    return {c.name: c.ok for c in run_checks(root)}


def test_rdma_machine_is_recognised(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_DCB=y\nCONFIG_VLAN_8021Q=m\nCONFIG_RDMA_RXE=m\n"))
    (tmp_path / "proc/filesystems").write_text("nodev\tconfigfs\n")
    (tmp_path / "sys/class/infiniband/mlx5_0").mkdir(parents=True)
    (tmp_path / "usr/bin").mkdir(parents=True)
    (tmp_path / "usr/bin/promtool").write_text("")
    seen = _by_name(tmp_path)
    assert seen["DCB (PFC/ETS/APP netlink)"] and seen["8021q (RDMA VLAN)"] and seen["rdma_rxe (Soft-RoCE)"]
    assert seen["RDMA devices"] and seen["configfs (RDMA-CM ToS)"] and seen["promtool"]
    assert not seen["prometheus"]


def test_bare_machine_says_what_to_install(tmp_path: Path) -> None:
    checks = run_checks(tmp_path)
    missing = {c.name: c.fix for c in checks if not c.ok}
    assert "apt-get install prometheus" in missing["promtool"]
    assert "lab vm" in missing["rdma_rxe (Soft-RoCE)"]
    assert all(c.fix for c in checks if not c.ok)


def test_doctor_lists_unverified_parser_roles(tmp_path: Path) -> None:
    """Every unverified parser role is one doctor line (platform/role, command, reason); none is required."""
    from fabricd.nos.roles import unverified_roles

    lines = [c for c in run_checks(tmp_path) if c.feature == "parsers"]
    want = unverified_roles()
    assert [c.name for c in lines] == [r.id for r in want] and want
    assert all(not c.ok and not c.required and c.detail and c.fix for c in lines)


def test_doctor_cli_prints_one_line_per_unverified_role() -> None:
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd.nos.roles import unverified_roles

    res = CliRunner().invoke(build_app(), ["doctor"], env={"COLUMNS": "100"})
    lines = res.stdout.splitlines()
    for role in unverified_roles():
        (line,) = [x for x in lines if x.strip().startswith(f"unverified {role.id}:")]
        assert role.command in line and (role.unverified or "") in line
