"""The replay root fabricd ships (exporters/replay/gpu1-mlx5) is what scripts/gen_replay_example.py writes now from
the real captures (so it cannot drift from them), and ``fabricd init --replay-root`` hands it to a user whose
``export host --once`` reads every collector from it."""

from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path

from typer.testing import CliRunner

from fabricd.cli.main import build_app

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "exporters" / "replay" / "gpu1-mlx5"


def _same_tree(a: Path, b: Path) -> list[str]:
    diff: list[str] = []
    cmp = filecmp.dircmp(a, b)
    diff += [f"only in {a}: {n}" for n in cmp.left_only] + [f"only in {b}: {n}" for n in cmp.right_only]
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    diff += [f"differs: {a / n}" for n in mismatch + errors]
    for sub in cmp.common_dirs:
        diff += _same_tree(a / sub, b / sub)
    return diff


def test_shipped_replay_root_is_what_the_script_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_replay_example", REPO / "scripts" / "gen_replay_example.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.write(tmp_path / "fresh")
    assert _same_tree(SHIPPED, tmp_path / "fresh") == [], "run .venv/bin/python scripts/gen_replay_example.py"


def test_init_replay_root_then_export_host_reads_it(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(build_app(), ["init", "--replay-root", str(tmp_path / "try")])
    assert res.exit_code == 0, res.output
    root = tmp_path / "try" / "replay" / "gpu1-mlx5"
    assert (root / "ethtool" / "eth0.stats").is_file() or any((root / "ethtool").glob("*.stats"))
    res = runner.invoke(build_app(), ["export", "host", "--once", "--root", str(root)])
    assert res.exit_code == 0, res.output
    for collector in ("nic", "rdma", "nic_config", "link"):
        assert f'fabricd_scrape_collector_success{{collector="{collector}"}} 1' in res.output
    assert "fabricd_nic_priority_bytes_total{" in res.output and "fabricd_rdma_port_" in res.output
