"""The lossless path (issue 24 part 3): one decision per priority (fabricd/intent/lossless_path.py), every dependent
table derived from it, proved on the output by parsing each render back with its pack's running-config parser
(fabricd/nos/lossless_path.py).

The layout that used to break: lossless priorities sitting in queues with other numbers (priority 3 in queue 4,
priority 4 in queue 3, so that pausing or watching "the priority's number" stops the *other* lossless class). SONiC
changed TC_TO_QUEUE_MAP but wrote no pfc_to_queue_map, and pfcwd_sw_enable (which names queues) named the
priorities: the switch paused and watched the wrong queues. On base commit 82123a3 the SONiC cases below fail
(paused on queue 3 / 4 swapped, watched the wrong queue) and the other three platforms pass.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricd.intent.lossless_path import path_plan
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform
from fabricd.nos.lossless_path import PathViolation, check_render
from fabricd.nos.registry import SPECS, SwitchIntentBuilder
from fabricd.nos.validate import validate
from fabricd.render.env import environment
from fabricd.render.render import render_switch_intent

REPO = Path(__file__).resolve().parents[2]


@cache
def _lab_doc() -> dict[str, Any]:
    doc = load_inventory(REPO / "inventory" / "lab").fabric.model_dump(mode="json", exclude_none=True)
    for device in doc["switches"] + doc["hosts"]:
        device.pop("groups", None)
    return doc


def swapped(*, watchdog: bool = True) -> dict[str, Any]:
    """The lab fabric with two lossless priorities in swapped queues: 3 -> queue 4, 4 -> queue 3."""
    doc = copy.deepcopy(_lab_doc())
    pol = doc["policy"]
    pol["qos"]["dscp_to_priority"] = {26: 3, 48: 6, 24: 4}
    pol["qos"]["traffic_classes"] = [
        {"id": 0, "name": "default", "priorities": [0, 1, 2, 5, 7], "weight_percent": 40},
        {"id": 4, "name": "roce", "priorities": [3], "weight_percent": 40, "ecn_profile": "roce"},
        {"id": 3, "name": "storage", "priorities": [4], "weight_percent": 20, "ecn_profile": "roce"},
        {"id": 6, "name": "cnp", "priorities": [6], "scheduler": "strict"},
    ]
    pol["ecn_profiles"] = [{"name": "roce", "traffic_classes": [3, 4]}]
    pol["pfc"] = {"priorities": [3, 4], "watchdog": {"enabled": watchdog}}
    pol["dcqcn"] = {"rp_priorities": [3, 4], "np_priorities": [3, 4]}
    return doc


def violations(doc: dict[str, Any], platform: Platform) -> list[PathViolation]:
    fabric = Fabric.model_validate(doc)
    plan = path_plan(fabric)
    builder = SwitchIntentBuilder(fabric)
    env = environment()
    out: list[PathViolation] = []
    for sw in fabric.switches:
        if sw.platform == platform:
            intent = builder.build(sw)
            out += check_render(intent, plan, render_switch_intent(intent, env).primary.text)
    return out


def test_the_plan_is_one_decision() -> None:
    plan = path_plan(Fabric.model_validate(swapped()))
    assert [(p.priority, p.queue, p.priority_group, p.moved) for p in plan.lossless] == [
        (3, 4, 3, True),
        (4, 3, 4, True),
    ]
    assert plan.priority_queue == {0: 0, 1: 0, 2: 0, 3: 4, 4: 3, 5: 0, 6: 6, 7: 0}
    assert (plan.cnp.priority, plan.cnp.queue, plan.cnp.strict) == (6, 6, True)


@pytest.mark.parametrize("platform", [Platform.ARISTA_EOS, Platform.CISCO_NXOS, Platform.CUMULUS_NVUE])
def test_swapped_queues_keep_the_path_with_the_watchdog(platform: Platform) -> None:
    assert [v.render() for v in violations(swapped(), platform)] == []


@pytest.mark.parametrize("platform", list(SPECS))
def test_the_lab_layout_keeps_the_path(platform: Platform) -> None:
    assert [v.render() for v in violations(copy.deepcopy(_lab_doc()), platform)] == []


def test_sonic_pauses_the_queue_the_priority_is_in() -> None:
    """Without the watchdog, SONiC can carry the swapped layout: pfc_to_queue_map stops queue 4 for a pause of
    priority 3 and queue 3 for priority 4, and the lossless PGs are the priorities'."""
    assert [v.render() for v in violations(swapped(watchdog=False), Platform.SONIC)] == []
    fabric = Fabric.model_validate(swapped(watchdog=False))
    sonic = next(s for s in fabric.switches if s.platform == Platform.SONIC)
    db = json.loads(render_switch_intent(SwitchIntentBuilder(fabric).build(sonic), environment()).primary.text)
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"]["FABRICD"]["3"] == "4"
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"]["FABRICD"]["4"] == "3"
    assert all(row["pfc_to_queue_map"] == "FABRICD" for row in db["PORT_QOS_MAP"].values())


def test_sonic_cannot_watch_a_moved_priority_and_validate_says_so(tmp_path: Path) -> None:
    """SONiC's watchdog watches queue i for pauses of priority i: the render watches the queues the traffic is in
    (pfcwd_sw_enable names queues) and warns, the checker still finds each priority unwatched, and validate refuses
    the inventory (FAB112) at the traffic class that moves it."""
    found = violations(swapped(), Platform.SONIC)
    assert {(v.priority, v.kind) for v in found} == {(3, "watched"), (4, "watched")}
    assert "queue 4 counting priority 3" in found[0].render() or "queue 3 counting priority 4" in found[0].render()
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(swapped(), sort_keys=False))
    problems = [p for p in validate(load_inventory(path)).errors if p.code == "FAB112"]
    assert sorted(p.path for p in problems) == [
        "policy.qos.traffic_classes[roce].id",
        "policy.qos.traffic_classes[storage].id",
    ]
    assert problems[0].location is not None and problems[0].location.line > 0
    no_wd = tmp_path / "nowd.yml"
    no_wd.write_text(yaml.safe_dump(swapped(watchdog=False), sort_keys=False))
    assert not [p for p in validate(load_inventory(no_wd)).errors if p.code == "FAB112"]


def test_the_checker_finds_a_table_left_behind() -> None:
    """The check bites: the SONiC render with its pfc_to_queue_map dropped (the old render) pauses the wrong
    queues; with a lossless PG dropped, a priority is unbuffered; with CNP's queue made DWRR, CNP is not strict."""
    fabric = Fabric.model_validate(swapped(watchdog=False))
    sonic = next(s for s in fabric.switches if s.platform == Platform.SONIC)
    intent = SwitchIntentBuilder(fabric).build(sonic)
    plan = path_plan(fabric)
    good = json.loads(render_switch_intent(intent, environment()).primary.text)
    port = next(iter(good["PORT_QOS_MAP"]))

    old = copy.deepcopy(good)
    for row in old["PORT_QOS_MAP"].values():
        del row["pfc_to_queue_map"]
    del old["MAP_PFC_PRIORITY_TO_QUEUE"]
    assert {(v.priority, v.kind) for v in check_render(intent, plan, json.dumps(old))} == {(3, "paused"), (4, "paused")}
    unbuffered = copy.deepcopy(good)
    del unbuffered["BUFFER_PG"][f"{port}|4"]
    assert [(v.port, v.priority, v.kind) for v in check_render(intent, plan, json.dumps(unbuffered))] == [
        (port, 4, "buffered")
    ]
    lossy_cnp = copy.deepcopy(good)
    lossy_cnp["SCHEDULER"]["scheduler.6"] = {"type": "DWRR", "weight": "1"}
    assert {v.kind for v in check_render(intent, plan, json.dumps(lossy_cnp))} == {"cnp"}


def test_the_checker_reads_eos_nxos_and_nvue_back() -> None:
    """The same bites on the CLI renders: a queue map edited in the text moves the traffic away from the decided
    queue (EOS, NVUE), a no-drop class moved to another queue pauses the wrong one (NX-OS)."""
    fabric = Fabric.model_validate(swapped())
    plan = path_plan(fabric)
    builder = SwitchIntentBuilder(fabric)
    env = environment()
    texts = {
        s.platform: (builder.build(s), render_switch_intent(builder.build(s), env).primary.text)
        for s in fabric.switches
    }
    intent, text = texts[Platform.ARISTA_EOS]
    edited = text.replace("qos map traffic-class 3 to tx-queue 4", "qos map traffic-class 3 to tx-queue 3")
    assert edited != text
    assert {(v.priority, v.kind) for v in check_render(intent, plan, edited)} >= {(3, "queue")}
    intent, text = texts[Platform.CUMULUS_NVUE]
    edited = text.replace("switch-priority 3 traffic-class 4", "switch-priority 3 traffic-class 3")
    assert edited != text
    assert {(v.priority, v.kind) for v in check_render(intent, plan, edited)} >= {(3, "queue")}
    intent, text = texts[Platform.CISCO_NXOS]
    assert "    pause pfc-cos 3\n" in text and "    pause pfc-cos 4\n" in text
    edited = text.replace("    pause pfc-cos 3\n", "    pause pfc-cos 9\n").replace(
        "pause pfc-cos 4\n", "pause pfc-cos 3,4\n"
    )
    kinds = {(v.priority, v.kind) for v in check_render(intent, plan, edited)}
    assert (3, "paused") in kinds and (3, "watched") in kinds


@pytest.mark.parametrize("platform", [Platform.ARISTA_EOS, Platform.CISCO_NXOS, Platform.CUMULUS_NVUE])
def test_two_lossless_priorities_in_one_moved_queue(platform: Platform) -> None:
    """Both lossless priorities in queue 5: each is paused and watched there (a watched queue counts both)."""
    doc = swapped()
    doc["policy"]["qos"]["traffic_classes"] = [
        {"id": 0, "name": "default", "priorities": [0, 1, 2, 5, 7], "weight_percent": 50},
        {"id": 5, "name": "roce", "priorities": [3, 4], "weight_percent": 50, "ecn_profile": "roce"},
        {"id": 6, "name": "cnp", "priorities": [6], "scheduler": "strict"},
    ]
    doc["policy"]["ecn_profiles"] = [{"name": "roce", "traffic_classes": [5]}]
    assert path_plan(Fabric.model_validate(doc)).priority_queue[3] == 5
    assert [v.render() for v in violations(doc, platform)] == []
