"""fabricd's Arista EOS renders against Arista AVD (pyavd 6.4): AVD's schema and AVD's own CLI rendering.

See eos_avd_oracle.py for how the structured config is built, what is formatting only (order, ``!``, ``end``,
``hostname``) and the two EOS rules outside AVD's schema. Verdict: ``conformance arista_eos (pyavd 6.4 ...)``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from conformance_corpus import REPO, accepted, corpus, intent_space, inventories, record
from eos_avd_oracle import judge, semantic_lines, structured_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_space import WholeModel

from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform
from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.render.env import environment
from fabricd.render.render import render_switch_intent

pytestmark = pytest.mark.slow  # pyavd loads for seconds and its checks take seconds more: not in make unit

pyavd = pytest.importorskip("pyavd", reason="pyavd is a dev dependency (pip install -e .[dev])")

ORACLE = f"pyavd {pyavd.__version__} schema + CLI diff"


def eos_renders(fabric: Fabric) -> Iterator[tuple[EosSwitchIntent, str]]:
    """``(intent, fabricd's rendered config)`` for every EOS switch of ``fabric``."""
    builder = SwitchIntentBuilder(fabric)
    env = environment()
    for switch in fabric.switches:
        if switch.platform == Platform.ARISTA_EOS:
            intent = builder.build(switch)
            assert isinstance(intent, EosSwitchIntent)
            yield intent, render_switch_intent(intent, env).primary.text


def _corpus() -> list[tuple[str, EosSwitchIntent, str]]:
    out = []
    for path in inventories():
        for intent, text in eos_renders(load_inventory(path).fabric):
            out.append((f"{path.relative_to(REPO)}:{intent.name}", intent, text))
    return out


CORPUS = _corpus()
judge(*CORPUS[0][1:])  # warm-up: pyavd imports its templates lazily, which upsets hypothesis's scan of sys.modules


def test_corpus_is_the_shared_one() -> None:
    """The renders judged here are the shared corpus's EOS renders, text for text."""
    shared = {label: r.primary.text for label, r in corpus("arista_eos")}
    assert shared == {label: text for label, _, text in CORPUS}
    assert len(CORPUS) >= 10


@pytest.mark.parametrize(("label", "intent", "text"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_render_passes_avd(label: str, intent: EosSwitchIntent, text: str) -> None:
    j = judge(intent, text)
    record("arista_eos", ORACLE, files=1, lines=j.lines, rejected=j.rejected, unverified=j.unverified)
    assert j.rejected == 0, f"{label}:\n{j.explain()}"
    assert j.avd_cli, "AVD rendered nothing"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(doc=intent_space())
def test_nothing_validate_accepts_is_rejected_by_avd(doc: dict[str, object]) -> None:
    fabric = accepted(doc)
    if fabric is None:
        return  # validate refuses it: nothing is rendered for the device
    for intent, text in eos_renders(fabric):
        j = judge(intent, text)
        record(
            "arista_eos", ORACLE + " (property)", files=1, lines=j.lines, rejected=j.rejected, unverified=j.unverified
        )
        assert j.rejected == 0, j.explain()


@st.composite
def eos_policies(draw: st.DrawFn) -> dict[str, object]:
    """The shared intent space narrowed to what EOS renders differently (timers, actions, ECN bytes, VLANs), inside
    validate's ranges so that most draws are accepted (the shared space is mostly refused)."""
    doc = copy.deepcopy(draw(intent_space()))
    pol = doc["policy"]
    assert isinstance(pol, dict)
    pol["transport"] = "roce_v2_lossless"
    pol["qos"]["traffic_classes"] = sorted(pol["qos"]["traffic_classes"], key=lambda tc: tc["id"])
    for tc in pol["qos"]["traffic_classes"]:
        if tc["id"] == 6:
            tc.update(scheduler="strict")
            tc.pop("weight_percent", None)
        else:
            tc.update(scheduler="dwrr")
    dwrr = [tc for tc in pol["qos"]["traffic_classes"] if tc["scheduler"] == "dwrr"]
    for tc in dwrr:
        tc["weight_percent"] = 100 // len(dwrr)
    dwrr[0]["weight_percent"] += 100 - sum(tc["weight_percent"] for tc in dwrr)
    det = draw(st.integers(100, 1_000))  # NX-OS: detection 100-1000 ms (FAB041)
    rest = draw(st.integers(100, 5_000))
    pol["pfc"]["watchdog"].update(
        enabled=True,
        detection_ms=det,
        restoration_ms=rest,
        poll_ms=draw(st.integers(100, min(det, rest, 1_000))),
        action=draw(st.sampled_from(["drop", "alert"])),
    )
    lo = draw(st.one_of(st.integers(1, 2_000), st.integers(1, 4_000_000)))
    pol["ecn_profiles"][0].update(
        min_bytes=lo,
        max_bytes=lo + draw(st.integers(1, 4_000_000)),
        max_mark_probability_percent=draw(st.integers(1, 100)),
    )
    # what the other platforms of the lab fabric refuse is not EOS's business here: a SONiC-legal ECN profile name
    # (FAB110) and a VLAN id every platform takes (FAB097 NX-OS, FAB111 SONiC, FAB130 NVUE)
    name = pol["ecn_profiles"][0]["name"]
    if not re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_]{0,31}", name):
        pol["ecn_profiles"][0]["name"] = "roce"
        for tc in pol["qos"]["traffic_classes"]:
            if tc.get("ecn_profile") == name:
                tc["ecn_profile"] = "roce"
    renumbered = {}
    for vlan in pol.get("vlans", []):
        renumbered[vlan["id"]] = vlan["id"] = draw(st.integers(2, 3724).filter(lambda v: v not in renumbered.values()))
    for host in doc["hosts"]:
        for nic in host.get("nics", []):
            if nic.get("vlan") in renumbered:
                nic["vlan"] = renumbered[nic["vlan"]]
    return doc


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(doc=eos_policies())
def _eos_values(accepted_draws: list[bool], doc: dict[str, object]) -> None:
    fabric = accepted(doc)
    accepted_draws.append(fabric is not None)
    if fabric is None:
        return
    for intent, text in eos_renders(fabric):
        j = judge(intent, text)
        record(
            "arista_eos", ORACLE + " (property)", files=1, lines=j.lines, rejected=j.rejected, unverified=j.unverified
        )
        assert j.rejected == 0, j.explain()


def test_eos_values_validate_accepts_are_not_rejected_by_avd() -> None:
    """The property, then that it checked something, in one test with its own count (they were two tests sharing a
    module-level list, so the second passed only when run after the first)."""
    accepted_draws: list[bool] = []
    _eos_values(accepted_draws)
    assert accepted_draws
    # the other platforms' rules (SONiC names, NX-OS VLAN ranges, ...) refuse some draws too: a fifth is plenty
    assert sum(accepted_draws) >= max(3, len(accepted_draws) // 5), (
        f"only {sum(accepted_draws)} of {len(accepted_draws)} draws were accepted"
    )


@given(timer_ms=st.integers(10, 60_000), poll_ms=st.integers(5, 30_000))
@settings(max_examples=30, deadline=None)
def test_watchdog_timers_render_in_avd_pattern(timer_ms: int, poll_ms: int) -> None:
    """Any timer validate's range accepts renders with at most 2 decimals (timeout, recovery) or 3 (polling)."""
    from fabricd.model import Watchdog
    from fabricd.nos.arista_eos.watchdog import eos_watchdog

    notes: list[tuple[str, str, str, str]] = []
    wd = eos_watchdog(
        Watchdog(detection_ms=timer_ms, restoration_ms=timer_ms, poll_ms=min(poll_ms, timer_ms)),
        lambda *n: notes.append(n),
    )
    cfg = {
        "hostname": "x",
        "qos_profiles": [
            {
                "name": "P",
                "priority_flow_control": {
                    "watchdog": {
                        "enabled": True,
                        "action": wd.action,
                        "timer": {
                            "timeout": wd.timeout_s,
                            "polling_interval": wd.polling_s,
                            "recovery_time": wd.recovery_s,
                        },
                    }
                },
            }
        ],
    }
    assert list(pyavd.validate_structured_config(cfg).validation_result.violations) == []
    assert (timer_ms % 10 == 0) == ("watchdog.timeout_s" not in [n[0] for n in notes])


# --- the oracle bites --------------------------------------------------------------------------------------------


def _lab_eos() -> tuple[EosSwitchIntent, str]:
    return next(eos_renders(load_inventory(REPO / "inventory" / "lab").fabric))


def _violations(cfg: dict[str, object]) -> list[str]:
    result = pyavd.validate_structured_config(cfg)
    return [f"{'.'.join(v.path)}: {v.message}" for v in result.validation_result.violations]


def test_avd_refuses_the_old_defects() -> None:
    """What fabricd used to render, in structured config: AVD's schema refuses each one."""
    intent, _ = _lab_eos()
    cfg = structured_config(intent)
    assert _violations(cfg) == []
    profile = cfg["qos_profiles"][0]
    for key, value, where in (
        ("action", "no-drop", "watchdog.action"),  # alert/forward used to render `port action no-drop`
        ("timeout", "0.125", "watchdog.timer.timeout"),  # 125 ms used to render 3 decimals
        ("recovery_time", "0.205", "watchdog.timer.recovery_time"),
    ):
        bad = copy.deepcopy(cfg)
        wd = bad["qos_profiles"][0]["priority_flow_control"]["watchdog"]
        (wd["timer"] if key != "action" else wd)[key] = value
        assert any(where in v for v in _violations(bad)), (key, _violations(bad))
    bad = copy.deepcopy(cfg)
    ecn_queue = next(q for q in bad["qos_profiles"][0]["tx_queues"] if "random_detect" in q)
    ecn_queue["random_detect"]["ecn"]["threshold"].update(min=0, units="kbytes")  # 500 B used to render `0 kbytes`
    assert any("threshold.min" in v for v in _violations(bad))
    assert profile["tx_queues"]


def test_diff_catches_a_changed_template_line() -> None:
    """A fabricd line that differs from AVD's (here a 3-decimal timer edited into the text) is rejected, and so
    is the AVD line it no longer matches."""
    intent, text = _lab_eos()
    assert judge(intent, text).rejected == 0
    wd = intent.watchdog
    assert wd is not None
    edited = text.replace(f"timeout {wd.timeout_s} ", "timeout 0.125 ")
    assert edited != text
    j = judge(intent, edited)
    assert len(j.extra) == 1 and "timeout 0.125" in j.extra[0]
    assert len(j.missing) == 1 and f"timeout {wd.timeout_s}" in j.missing[0]


def test_diff_catches_a_line_in_the_wrong_block() -> None:
    intent, text = _lab_eos()
    moved = text.replace("   priority-flow-control on\n", "").replace("\nend\n", "\npriority-flow-control on\nend\n")
    j = judge(intent, moved)
    assert j.extra == ["priority-flow-control on"]
    assert j.missing == [f"qos profile {intent.profile_name} > priority-flow-control on"]


def test_strict_queue_below_round_robin_is_a_rule_break() -> None:
    """The EOS rule outside AVD's schema: the old two-lossless-classes layout (strict CNP 6 below DWRR 7)."""
    intent, text = _lab_eos()
    queues = [
        q.model_copy(update={"used": True, "dwrr": True, "round_robin": True, "weight_percent": 10}) if q.id == 7 else q
        for q in intent.queues
    ]
    j = judge(intent.model_copy(update={"queues": queues}), text)
    assert any("strict tx-queue 6 below round-robin tx-queue 7" in r for r in j.rule_breaks)


def test_semantic_lines_ignore_formatting_only() -> None:
    a = "! c\nqos profile P\n   qos trust dscp\n   !\n   tx-queue 3\n      no priority\n!\nend\n"
    b = "hostname h\n!\nqos profile P\n   tx-queue 3\n      no  priority\n   qos trust dscp\n"
    assert semantic_lines(a) == semantic_lines(b)
    assert semantic_lines(a)[(("qos profile P", "tx-queue 3"), "no priority")] == 1


# --- the whole-model property test's part (test_model_space.py) ------------------------------------------------


def _judge_whole_model(name: str, intent: Any, text: str, sampled: bool) -> list[str]:
    if not sampled:
        return []  # AVD takes about 2 s a file: it judges the sampled draws only
    j = judge(intent, text)
    record(
        "arista_eos",
        "pyavd schema + CLI diff (whole model, a sixth of the draws)",
        files=1,
        lines=j.lines,
        rejected=j.rejected,
        unverified=j.unverified,
    )
    return [f"{name}: AVD:\n{j.explain()}"] if j.rejected else []


WHOLE_MODEL = WholeModel(
    ports=lambda n: st.one_of(
        n.map(lambda i: f"Ethernet{i}"), st.tuples(n, st.integers(1, 8)).map(lambda t: f"Ethernet{t[0]}/{t[1]}")
    ),
    lag="Port-Channel{}",
    judge=_judge_whole_model,
)
"""EOS in the whole-model property test: EthernetN and EthernetN/M ports, Port-ChannelN LAGs, AVD on a sample."""
