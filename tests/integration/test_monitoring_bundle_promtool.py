"""A written monitoring bundle works where it lands: Debian's real promtool checks its prometheus.yml (rule files
resolved relative to it) and runs its rule tests from rules/tests, as the bundle's README says."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app

PROMTOOL = shutil.which("promtool") or ("/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None)


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
def test_promtool_on_a_written_bundle(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    out = tmp_path / "mon"
    res = CliRunner().invoke(build_app(), ["monitoring", "bundle", "--out", str(out)])
    assert res.exit_code == 0, res.output
    check = subprocess.run(
        [PROMTOOL, "check", "config", "prometheus.yml"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0 and "SUCCESS" in check.stdout, check.stdout + check.stderr
    tests = sorted(p.name for p in (out / "rules" / "tests").glob("*.yml"))
    run = subprocess.run(
        [PROMTOOL, "test", "rules", *tests],
        cwd=out / "rules" / "tests",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0 and run.stdout.count("SUCCESS") == len(tests), run.stdout + run.stderr
