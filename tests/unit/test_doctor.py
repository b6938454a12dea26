"""`fabricd doctor` reads a machine tree; here a fake root stands in for one with RDMA and one without."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from fabricd.audit.doctor import doctor_report, parser_role_checks, run_checks


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


def test_unverified_parser_roles_are_not_capabilities(tmp_path: Path) -> None:
    """The parser roles no capture proves are listed apart (docs/platforms.md has each with its reason)."""
    from fabricd.nos.roles import unverified_roles

    assert [c.name for c in parser_role_checks()] == [r.id for r in unverified_roles()]
    assert not any(c.feature == "parsers" for c in run_checks(tmp_path))


def _doctor(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app

    res = CliRunner().invoke(build_app(), ["doctor", *args], env={"COLUMNS": "300"})
    return res.exit_code, res.stdout


def test_doctor_is_one_table_and_exits_1_only_for_a_selected_feature(tmp_path: Path) -> None:
    """A bare machine: core is ready (exit 0) although RDMA and prometheus are missing; --for rdma or --for
    exporters makes it exit 1 and says which capability; no research notes, one pointer to the parser roles."""
    from fabricd.nos.roles import unverified_roles

    code, out = _doctor("--root", str(tmp_path))
    assert code == 0, out
    assert "ready for core" in out and "not ready for hosts, rdma, exporters" in out
    assert "`fabricd doctor --for hosts` exits 1" in out
    row = next(line for line in out.splitlines() if line.startswith("│ RDMA devices"))
    assert "│ rdma " in row and "MISSING" not in row and "no: none in /sys/class/infiniband" in row
    assert f"{len(unverified_roles())} parser roles have no real capture yet" in out
    report = doctor_report(run_checks(tmp_path), parser_role_checks(), target=str(tmp_path))
    lines = out.splitlines()
    assert all(any(line.startswith(f"│ {c.title} ") for line in lines) for c in report.checks)  # a row per check
    row = next(line for line in lines if line.startswith("│ parser roles proven by a real capture"))
    assert f"warn: {len(unverified_roles())} not proven" in row and "│ parsers (optional) " in row
    assert "searched" not in out and len(out.splitlines()) < 45
    code, out = _doctor("--root", str(tmp_path), "--for", "rdma")
    assert code == 1 and "missing for rdma" in out
    row = next(line for line in out.splitlines() if line.startswith("│ RDMA devices"))
    assert "MISSING" in row
    code, out = _doctor("--root", str(tmp_path), "--for", "exporters", "--output", "json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["selected"] == ["core", "exporters"]
    assert data["missing_for"]["exporters"] == ["prometheus", "promtool"]
    assert {c["name"] for c in data["capabilities"] if c["required"]} == {"python >= 3.11", "prometheus", "promtool"}


def test_optional_capabilities_never_fail_a_feature(tmp_path: Path) -> None:
    (tmp_path / "sys/class/infiniband/mlx5_0").mkdir(parents=True)  # a NIC, no rdma_rxe
    code, out = _doctor("--root", str(tmp_path), "--for", "rdma", "--output", "json")
    assert code == 0 and "rdma" not in json.loads(out)["missing_for"]
