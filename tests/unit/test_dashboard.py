"""The shipped Grafana dashboard, checked structurally: valid layout, one data source variable, every query valid
PromQL (Debian's promtool parses each one) and made only of metric names that fabricd's collectors or the shipped
recording rules produce."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricd.collectors.core import META_METRICS
from fabricd.collectors.host import host_collectors
from fabricd.collectors.switch import SwitchCollector
from fabricd.collectors.watchdog import METRICS as WATCHDOG_METRICS
from fabricd.service.agent import AGENT_METRICS
from fabricd.service.drift import DriftCollector

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = sorted((REPO / "exporters" / "dashboards").glob("*.json"))
RULE_FILES = sorted((REPO / "exporters" / "rules").glob("*.rules.yml"))
PROMQL_WORDS = {
    "sum",
    "min",
    "max",
    "avg",
    "count",
    "rate",
    "increase",
    "irate",
    "label_replace",
    "vector",
    "clamp_max",
    "clamp_min",
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "topk",
    "bottomk",
    "abs",
    "histogram_quantile",
    "offset",
    "bool",
    "label_values",
    "max_over_time",
}
BUILTIN_SERIES = {"up", "ALERTS"}


def known_names(tmp: Path) -> set[str]:
    specs = [*META_METRICS, *SwitchCollector.metrics, *WATCHDOG_METRICS, *DriftCollector.metrics, *AGENT_METRICS]
    for c in host_collectors(tmp, replay=True):
        specs.extend(c.metrics)
    recorded = {
        r["record"]
        for f in RULE_FILES
        for g in yaml.safe_load(f.read_text())["groups"]
        for r in g["rules"]
        if "record" in r
    }
    return {s.name for s in specs} | recorded | BUILTIN_SERIES


def metric_names(expr: str) -> set[str]:
    """Metric names referenced by a PromQL expression (label matchers, strings, grouping lists removed)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    tokens = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", e))
    return {t for t in tokens if t not in PROMQL_WORDS}


def panels(dash: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in dash["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return out


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.name for p in DASHBOARDS])
def test_dashboard_layout(path: Path) -> None:
    dash = json.loads(path.read_text())
    assert dash["title"] and dash["uid"] and dash["schemaVersion"] >= 30
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    ids = [p["id"] for p in panels(dash)]
    assert len(ids) == len(set(ids))
    titles = {p["title"] for p in panels(dash) if p["type"] == "row"}
    assert {"Fabric overview", "Per-port PFC", "ECN / CNP", "Drops and RDMA errors", "Storms (watchdog)"} <= titles
    for p in panels(dash):
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        if p["type"] == "row":
            continue
        assert p["datasource"]["uid"] == "${datasource}", p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert p["targets"] and len(refs) == len(set(refs)), p["title"]


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.name for p in DASHBOARDS])
def test_every_query_uses_only_metrics_fabricd_produces(path: Path, tmp_path: Path) -> None:
    known = known_names(tmp_path)
    dash = json.loads(path.read_text())
    exprs = [t["expr"] for p in panels(dash) for t in p.get("targets", [])]
    exprs += [a["expr"] for a in dash["annotations"]["list"]]
    assert len(exprs) > 20
    for expr in exprs:
        unknown = metric_names(expr) - known
        assert not unknown, f"{expr!r} uses {sorted(unknown)}"
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            m = re.match(r"label_values\((\w+),", v["definition"])
            assert m and m.group(1) in known, v["definition"]


def test_metric_name_extraction() -> None:
    expr = (
        'sum by (switch) (rate(fabricd_switch_up{switch=~"$switch"}[5m])) and on (queue) '
        'label_replace(fabricd:lossless_priority, "queue", "$1", "priority", "(.*)")'
    )
    assert metric_names(expr) == {"fabricd_switch_up", "fabricd:lossless_priority"}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (Debian package prometheus)")
@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.name for p in DASHBOARDS])
@pytest.mark.integration  # runs promtool
def test_every_query_parses(path: Path, tmp_path: Path) -> None:
    """Each panel query as a recording rule, so that promtool's PromQL parser checks it."""
    dash = json.loads(path.read_text())
    exprs = [t["expr"] for p in panels(dash) for t in p.get("targets", [])]
    rules = {
        "groups": [
            {"name": "dashboard", "rules": [{"record": f"dashboard:query_{i}", "expr": e} for i, e in enumerate(exprs)]}
        ]
    }
    f = tmp_path / "queries.yml"
    f.write_text(yaml.safe_dump(rules))
    out = subprocess.run(
        ["promtool", "check", "rules", str(f)], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
