"""Hypothesis over policies: every switch and host of the lab fabric renders for any valid policy, no traceback,
and every switch intent value still appears in its output or in a "cannot express" warning."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd import settings as fabricd_settings
from fabricd.inventory import load_inventory
from fabricd.model import Fabric
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.render.env import environment
from fabricd.render.render import render_devices, render_switch_intent

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden" / "render"))
from render_cases import missing_values  # shared with tests/golden/render


@cache
def _lab() -> dict[str, Any]:
    return load_inventory(fabricd_settings.default_inventory()).fabric.model_dump(mode="json")


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    lab = _lab()
    data: dict[str, Any] = {**lab, "policy": dict(lab["policy"])}
    pol = data["policy"]
    pol["transport"] = draw(st.sampled_from(["roce_v2_lossless", "roce_v2_lossy"]))
    qos = dict(pol["qos"])
    qos["trust"] = draw(st.sampled_from(["dscp", "pcp"]))
    qos["dscp_to_priority"] = draw(st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=8))
    w0, w3 = draw(st.one_of(st.none(), st.integers(1, 100))), draw(st.one_of(st.none(), st.integers(1, 100)))
    classes = [dict(c) for c in qos["traffic_classes"]]
    classes[0]["weight_percent"], classes[1]["weight_percent"] = w0, w3
    qos["traffic_classes"] = classes
    pol["qos"] = qos
    lo = draw(st.integers(1, 20_000_000))
    pol["ecn_profiles"] = [
        {
            "name": "roce",
            "min_bytes": lo,
            "max_bytes": lo + draw(st.integers(0, 20_000_000)),
            "max_mark_probability_percent": draw(st.integers(0, 100)),
            "traffic_classes": [3],
        }
    ]
    pol["pfc"] = {
        "priorities": [3],
        "watchdog": {
            "enabled": draw(st.booleans()),
            "detection_ms": draw(st.integers(1, 100_000)),
            "restoration_ms": draw(st.integers(1, 100_000)),
            "poll_ms": draw(st.integers(1, 10_000)),
            "action": draw(st.sampled_from(["drop", "forward", "alert"])),
        },
    }
    buffers = dict(pol["buffers"])
    buffers["cable_length_m"] = {
        **buffers["cable_length_m"],
        "host": draw(st.floats(0, 100_000, allow_nan=False).map(lambda v: round(v, 1))),
    }
    pol["buffers"] = buffers
    switches = [dict(s) for s in data["switches"]]
    ports = [dict(p) for p in switches[2]["ports"]]
    ports[0]["mtu"] = draw(st.integers(576, 9216))
    switches[2]["ports"] = ports
    data["switches"] = switches
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies())
def test_any_policy_renders_every_value_or_warns(data: dict[str, Any]) -> None:
    fabric = Fabric.model_validate(data)
    env = environment()
    builder = SwitchIntentBuilder(fabric)
    for switch in fabric.switches:
        sw = builder.build(switch)
        r = render_switch_intent(sw, env)
        text = "\n".join(f.text for f in r.files)
        assert missing_values(sw, text, list(r.warnings)) == [], switch.name
    assert sum(1 for _ in render_devices(fabric)) == len(fabric.switches) + len(fabric.hosts)
