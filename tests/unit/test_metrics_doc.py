"""exporters/METRICS.md is generated from the collectors' specs and must not be stale; the example prometheus.yml
passes ``promtool check config``; every metric spec follows the naming conventions."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fabricd.cli.export import metric_groups
from fabricd.collectors.docs import metrics_markdown

GROUPS = metric_groups()

REPO = Path(__file__).resolve().parents[2]


def test_metrics_md_is_current() -> None:
    path = REPO / "exporters" / "METRICS.md"
    assert path.read_text() == metrics_markdown(GROUPS), (
        "exporters/METRICS.md is stale: run `fabricd export metrics-doc --write` and commit it"
    )


def test_specs_follow_conventions() -> None:
    names = [s.name for _, _, specs in GROUPS for s in specs]
    assert len(names) == len(set(names)), "a metric is declared twice"
    for _, _, specs in GROUPS:
        for s in specs:
            assert re.fullmatch(r"fabricd_[a-z0-9_]+", s.name), s.name
            assert (s.type == "counter") == s.name.endswith("_total"), s.name
            assert not re.search(r"_(counter|gauge|histogram|summary|untyped)(_|$)", s.name), s.name
            assert not re.search(r"(milli|micro|kilo|mega)", s.name), f"{s.name}: use base units"
            assert s.help.strip() and s.source.strip(), s.name


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (Debian package prometheus)")
@pytest.mark.integration  # runs promtool
def test_example_prometheus_config_is_valid() -> None:
    res = subprocess.run(
        ["promtool", "check", "config", str(REPO / "exporters" / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
