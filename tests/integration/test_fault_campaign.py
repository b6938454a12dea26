"""A short fault campaign (bench/fault_campaign.py runs 50 seeds): a random fault on each of the six lab switches;
every switch must end exactly as before or exactly as intended."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.integration

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fault_campaign.py"


def _campaign() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fault_campaign", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fault_campaign"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_switch_ends_as_before_or_as_intended() -> None:
    campaign = _campaign()
    result = campaign.run(3, anchor=False, verbose=False)["fabricd"]
    assert result["n"] == 18
    assert result["violations"] == [], result["violations"]
    assert result["ok"] == 18


def test_faults_are_drawn_from_every_kind_and_reproducible() -> None:
    campaign = _campaign()
    fabric = campaign.load_inventory(campaign.REPO / "inventory" / "lab").fabric
    candidates = campaign.render_candidates(fabric, fabric.switches)
    lines = {s.name: 100 for s in fabric.switches}
    drawn = [f for seed in range(10) for f in campaign.draw_faults(seed, fabric, candidates, lines)]
    assert {f.kind for f in drawn} == set(campaign.KINDS)
    assert campaign.draw_faults(7, fabric, candidates, lines) == campaign.draw_faults(7, fabric, candidates, lines)
