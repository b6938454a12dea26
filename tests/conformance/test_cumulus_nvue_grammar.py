"""NVUE render conformance: every ``nv set`` line fabricd renders against the pinned Cumulus Linux grammar
(:mod:`fabricd.nos.cumulus_nvue.grammar`, CL 5.11: NVIDIA's ``nv list-commands`` listing with typed
arguments, plus NVIDIA's documented rules stricter than the listing).

(a) every render of every shipped inventory is accepted (0 rejected lines); (b) over the intent space, nothing
``fabricd validate`` accepts renders a line the oracle refuses; (c) the oracle refuses the lines it must (so the
first two can fail).
"""

from __future__ import annotations

from typing import Any

import pytest
from conformance_corpus import accepted, corpus, intent_space, record, renders_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from model_space import WholeModel

from fabricd.nos.cumulus_nvue import grammar
from fabricd.nos.cumulus_nvue.grammar import check_lines, check_text, set_lines

PLATFORM = "cumulus_nvue"
ORACLE = f"Cumulus Linux {grammar.CL_RELEASE} nv list-commands grammar + NVIDIA rules"
CORPUS = corpus(PLATFORM)


def _unverified(lines: list[tuple[int, str]]) -> int:
    """Lines accepted through an entry part of which no source confirms (``Command.unverified``)."""
    cmds = [grammar.match(text.split()[2:]) for _, text in lines if text.startswith("nv set ")]
    return sum(1 for c in cmds if not isinstance(c, str) and c.unverified)


@pytest.mark.parametrize(("label", "render"), CORPUS, ids=[label for label, _ in CORPUS])
def test_corpus_render_is_accepted(label: str, render: object) -> None:
    text = render.primary.text  # type: ignore[attr-defined]
    lines = set_lines(text)
    rejected = check_lines(lines)
    record(PLATFORM, ORACLE, files=1, lines=len(lines), rejected=len(rejected), unverified=_unverified(lines))
    assert lines, f"{label}: the render has no nv set lines"
    assert rejected == [], f"{label}:\n" + "\n".join(map(str, rejected))


def test_corpus_covers_the_features() -> None:
    """The corpus reaches every part of the grammar the renders use (so (a) checks something of each)."""
    seen = {
        c.path
        for _, r in CORPUS
        for _, line in set_lines(r.primary.text)
        if not isinstance(c := grammar.match(line.split()[2:]), str)
    }
    for needed in (
        "qos pfc-watchdog robustness 1-1000",
        "interface <interface-id> qos pfc-watchdog state (enable|disable)",
        "qos egress-scheduler <profile-id> traffic-class <qos-tc-id> bw-percent 0-100",
        "qos congestion-control <profile-id> traffic-class <qos-tc-id> probability 0-100",
        "interface <interface-id> bridge domain <domain-id> access (1-4094|auto)",
        "qos mapping <profile-id> pcp <qos-pcp-id> switch-priority 0-7",
    ):
        assert needed in seen, needed


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(intent_space())
def test_nothing_validate_accepts_is_refused(doc: dict[str, object]) -> None:
    fabric = accepted(doc)
    assume(fabric is not None)
    assert fabric is not None
    for render in renders_of(fabric, PLATFORM):
        lines = set_lines(render.primary.text)
        rejected = check_lines(lines)
        record(
            PLATFORM,
            ORACLE + " (property)",
            files=1,
            lines=len(lines),
            rejected=len(rejected),
            unverified=_unverified(lines),
        )
        assert rejected == [], "\n".join(map(str, rejected))


# --- the oracle bites --------------------------------------------------------------------------------------------

GOOD = """\
nv set qos egress-scheduler default-global traffic-class 0 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0 bw-percent 50
nv set qos egress-scheduler default-global traffic-class 3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50
nv set qos egress-scheduler default-global traffic-class 1,2,4,5,6,7 mode strict
nv set qos congestion-control default-global traffic-class 3 min-threshold 150000
nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000
nv set qos congestion-control default-global traffic-class 3 probability 100
nv set qos traffic-pool default-lossless memory-percent 20
nv set qos traffic-pool default-lossy memory-percent 80
nv set qos pfc fabricd-400g-5m switch-priority 3
nv set qos pfc-watchdog polling-interval 100
nv set qos pfc-watchdog robustness 3
nv set interface swp1 qos pfc profile fabricd-400g-5m
nv set interface swp1 qos pfc-watchdog state enable
nv set interface swp1s0 bridge domain br_default access 100
nv set bridge domain br_default vlan 100,200-202
"""


def test_a_good_render_is_accepted() -> None:
    assert check_text(GOOD) == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("nv set qos egress-scheduler default-global traffic-class 1 bw-percent 0", "bw-percent must be 1-100"),
        ("nv set qos egress-scheduler default-global traffic-class 1 bw-percent 101", "'101' is not 0-100"),
        ("nv set qos congestion-control default-global traffic-class 3 probability 0", "probability is 1-100"),
        ("nv set qos pfc-watchdog polling-interval 99", "'99' is not 100-5000"),
        ("nv set qos pfc-watchdog robustness 0", "'0' is not 1-1000"),
        ("nv set interface swp1 qos pfc-watchdog", "without an explicit `state enable`"),
        ("nv set interface swp1 qos pfc-watchdog state enabled", "is not (enable|disable)"),
        ("nv set interface swp1 qos pfc-watchdog state on", "is not (enable|disable)"),
        ("nv set qos pfc fabricd-400g-5m tx enabled", "is not (enable|disable)"),
        ("nv set interface eth0 qos pfc-watchdog state enable", "only on physical swp ports"),
        ("nv set interface swp9 qos pfc-watchdog state enable", "needs PFC"),
        ("nv set bridge domain br_default vlan 3725", "reserved range 3725-3999"),
        ("nv set interface swp1 bridge domain br_default access 3999", "reserved range"),
        ("nv set bridge domain br_default vlan 4095", "is not <vid>"),
        ("nv set interface swp1 bridge domain br_default access 0", "is not (1-4094|auto)"),
        ("nv set qos mapping default-global dscp 64 switch-priority 3", "is not <qos-dscp-id>"),
        ("nv set qos mapping default-global dscp 0,1,26 switch-priority 8", "'8' is not 0-7"),
        ("nv set qos pfc roce.lossless switch-priority 3", "is not <profile-id>"),
        ("nv set qos pfc fabricd@400g switch-priority 3", "is not <profile-id>"),
        ("nv set qos pfc fabricd-400g-5m xoff-threshold 79.5KB", "is not <value> (a whole number of bytes)"),
        ("nv set qos congestion-control default-global traffic-class 3 min-threshold -1", "whole number of bytes"),
        ("nv set qos egress-queue-mapping roce switch-priority 3 traffic-class 3", "only supports the default-global"),
        ("nv set interface swp1 link mtu 9217", "'9217' is not 552-9216"),
        ("nv set qos roce-magic on", "is not"),
        ("nv set qos pfc-watchdog state enable", "is not"),
        ("nv unset qos pfc", "not an `nv set` command"),
    ],
)
def test_the_oracle_refuses(line: str, why: str) -> None:
    rejected = check_text(GOOD + line + "\n")
    assert rejected, line
    assert any(why in r.reason for r in rejected), [str(r) for r in rejected]
    assert all(r.source in grammar.SOURCES for r in rejected)


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (
            "nv set qos egress-scheduler default-global traffic-class 4 mode dwrr\n"
            "nv set qos egress-scheduler default-global traffic-class 4 bw-percent 10\n",
            "sum to 110 %",
        ),
        ("nv set qos egress-scheduler default-global traffic-class 4 mode dwrr\n", "dwrr without a bw-percent"),
        ("nv set qos traffic-pool roce memory-percent 5\n", "memory-percent sums to 105 %"),
        (
            "nv set qos congestion-control default-global traffic-class 3 min-threshold 1500000\n",
            "min-threshold must be below max-threshold",
        ),
    ],
)
def test_the_cross_line_rules_refuse(extra: str, why: str) -> None:
    rejected = check_text(GOOD + extra)
    assert any(why in r.reason for r in rejected), [str(r) for r in rejected]


def test_every_entry_names_its_source() -> None:
    for cmd in grammar.COMMANDS:
        src = grammar.SOURCES[cmd.source]
        assert src.repo and src.path and len(src.commit) == 40 and src.excerpt, cmd
        assert cmd.value == "" or cmd.value in grammar.VALUE_TYPES, cmd
        if "<value>" in cmd.path:
            assert cmd.value, f"{cmd.path}: <value> needs a type"
    assert grammar.CL_RELEASE == "5.11"


# --- the whole-model property test's part (test_model_space.py) ------------------------------------------------


def _judge_whole_model(name: str, intent: Any, text: str, sampled: bool) -> list[str]:
    lines = set_lines(text)
    rejected = check_lines(lines)
    record(
        "cumulus_nvue",
        "Cumulus Linux 5.11 nv list-commands grammar + NVIDIA rules (whole model)",
        files=1,
        lines=len(lines),
        rejected=len(rejected),
        unverified=_unverified(lines),
    )
    return [f"{name}: {r}" for r in rejected]


WHOLE_MODEL = WholeModel(
    ports=lambda n: st.one_of(
        n.map(lambda i: f"swp{i}"), st.tuples(n, st.integers(0, 3)).map(lambda t: f"swp{t[0]}s{t[1]}")
    ),
    lag="bond{}",
    judge=_judge_whole_model,
)
"""NVUE in the whole-model property test: swpN and swpNsM ports, bondN LAGs, the NVUE grammar judging."""
