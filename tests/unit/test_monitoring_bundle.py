"""``fabricd monitoring bundle --out DIR`` (issue 25, part 6): the shipped rules, tests, dashboard, scrape snippet
and examples written to a folder byte for byte, never over a user's files without --force; the example
prometheus.yml scrapes exactly the snippet's jobs; no guide points into the source tree's exporters/ rules or
/usr/share; ``fabricd docs exporters`` finds a page. promtool runs on a written bundle in
tests/integration/test_monitoring_bundle_promtool.py."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.cli.monitoring import BUNDLE
from fabricd.errors import FabricdError

REPO = Path(__file__).resolve().parents[2]
EXPORTERS = REPO / "exporters"


def _run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(build_app(), list(args))
    if isinstance(res.exception, FabricdError):
        return res.exception.exit_code, res.stdout, res.exception.render()
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout, res.stderr


def test_bundle_is_the_shipped_files(tmp_path: Path) -> None:
    out = tmp_path / "mon"
    code, stdout, _ = _run("monitoring", "bundle", "--out", str(out), "--output", "json")
    assert code == 0
    written = {Path(p).relative_to(out.resolve()).as_posix() for p in json.loads(stdout)["files"]}
    expected = {"README.md"}
    for rel, _ in BUNDLE:
        src = settings.data_dir("exporters") / rel
        files = [p for p in src.rglob("*") if p.is_file()] if rel.endswith("/") else [src]
        for f in files:
            name = (Path(rel) / f.relative_to(src)).as_posix() if rel.endswith("/") else rel
            expected.add(name)
            assert (out / name).read_bytes() == f.read_bytes(), name
    assert written == expected
    assert {
        "rules/fabricd.rules.yml",
        "rules/tests/health.yml",
        "dashboards/fabricd-fabric.json",
        "scrape-fabricd.yml",
        "prometheus.yml",
        "agent/daemonset.yaml",
    } <= written
    # the example's relative paths resolve inside the bundle
    prom = yaml.safe_load((out / "prometheus.yml").read_text())
    assert all((out / f).is_file() for f in prom["rule_files"])


def test_bundle_never_replaces_files_without_force(tmp_path: Path) -> None:
    out = tmp_path / "mon"
    out.mkdir()
    (out / "prometheus.yml").write_text("mine\n")
    code, _, err = _run("monitoring", "bundle", "--out", str(out))
    assert code == 2 and "would replace prometheus.yml" in err and "--force" in err
    assert (out / "prometheus.yml").read_text() == "mine\n"
    assert _run("monitoring", "bundle", "--out", str(out), "--force")[0] == 0
    assert (out / "prometheus.yml").read_bytes() == (EXPORTERS / "prometheus.yml").read_bytes()


def test_example_prometheus_scrapes_the_snippet_jobs_with_their_label() -> None:
    snippet = yaml.safe_load((EXPORTERS / "scrape-fabricd.yml").read_text())["scrape_configs"]
    example = yaml.safe_load((EXPORTERS / "prometheus.yml").read_text())["scrape_configs"]
    assert example == snippet
    components = {sc["labels"]["fabricd_component"] for job in snippet for sc in job["static_configs"]}
    assert components == {"host", "switches", "serve", "agent"}
    # `role` on a target would rename fabricd_policy_priority's own `role` label to exported_role
    assert not any("role" in sc.get("labels", {}) for job in snippet for sc in job["static_configs"])


def test_exporter_down_does_not_depend_on_the_job_name() -> None:
    rules = yaml.safe_load((EXPORTERS / "rules" / "fabricd.rules.yml").read_text())
    by_name = {r.get("alert") or r.get("record"): r for g in rules["groups"] for r in g["rules"]}
    assert by_name["FabricExporterDown"]["expr"].strip() == "fabricd:exporter_up == 0"
    assert "job=~" not in by_name["fabricd:exporter_up"]["expr"]
    dashboard = (EXPORTERS / "dashboards" / "fabricd-fabric.json").read_text()
    assert "fabricd.*" not in dashboard and "fabricd:exporter_up" in dashboard


def test_guides_point_at_the_command_not_at_paths() -> None:
    for page in ("alerts", "metrics", "fleet"):
        text = (REPO / "docs" / f"{page}.md").read_text()
        assert "/usr/share/fabricd" not in text and "](../exporters/" not in text, page
        assert "fabricd monitoring bundle" in text, page


def test_docs_exporters_finds_a_page() -> None:
    res = CliRunner().invoke(build_app(), ["docs", "exporters"])
    assert res.exit_code == 0 and res.stdout.startswith("# Metrics")
    assert "showing metrics" in res.stderr
    res = CliRunner().invoke(build_app(), ["docs", "no-such-thing"])
    assert res.exit_code == 2 and "the pages: alerts," in " ".join(res.stderr.split())
