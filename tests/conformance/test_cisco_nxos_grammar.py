"""Cisco NX-OS render conformance against the pinned grammar table (tests/conformance/nxos_grammar.yml).

Every line of every cisco_nxos render must match a shape of the table under its parent line's shape (0 rejected
lines). A line that matches only an unverified shape is counted as unverified; each unverified shape a render uses
is a strict xfail below, so it stays visible until a source confirms it. The property test draws fabrics from the
intent space: nothing ``fabricd validate`` accepts may render a line the table rejects.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from conformance_corpus import accepted, corpus, intent_space, record, renders_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from model_space import WholeModel

PLATFORM = "cisco_nxos"
ORACLE = "pinned grammar table"
TABLE = Path(__file__).with_name("nxos_grammar.yml")


@dataclass(frozen=True)
class Shape:
    id: str
    parent: str | None
    pattern: str
    verified: bool
    regex: re.Pattern[str]
    ranges: tuple[tuple[str, int, int], ...]  # (kind int|list, lo, hi) per numeric slot, in order


def _compile(pattern: str, slots: dict[str, Any]) -> tuple[re.Pattern[str], tuple[tuple[str, int, int], ...]]:
    out: list[str] = []
    ranges: list[tuple[str, int, int]] = []
    for token in re.split(r"(\{[^}]+\}|\([^)]+\))", " ".join(pattern.split())):
        if not token:
            continue
        if token.startswith("{"):
            slot = token[1:-1]
            if m := re.fullmatch(r"(int|list):(\d+)-(\d+)", slot):
                ranges.append((m.group(1), int(m.group(2)), int(m.group(3))))
                out.append(r"(\d+)" if m.group(1) == "int" else r"(\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)")
            else:
                out.append(f"(?:{slots[slot]['regex']})")
        elif token.startswith("("):
            out.append("(?:" + "|".join(re.escape(a) for a in token[1:-1].split("|")) + ")")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out)), tuple(ranges)


@cache
def table() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(TABLE.read_text())
    return data


@cache
def shapes() -> tuple[Shape, ...]:
    data = table()
    out = []
    for s in data["shapes"]:
        regex, ranges = _compile(s["pattern"], data["slots"])
        out.append(Shape(s["id"], s["parent"], s["pattern"], bool(s["verified"]), regex, ranges))
    return tuple(out)


def _in_range(shape: Shape, m: re.Match[str]) -> bool:
    for (kind, lo, hi), value in zip(shape.ranges, m.groups(), strict=True):
        numbers = [int(x) for part in value.split(",") for x in part.split("-")] if kind == "list" else [int(value)]
        if kind == "list" and any(
            int(a) > int(b) for part in value.split(",") if "-" in part for a, b in [part.split("-")]
        ):
            return False
        if not all(lo <= n <= hi for n in numbers):
            return False
    return True


@dataclass
class Result:
    lines: int = 0
    rejected: list[str] = field(default_factory=list)
    unverified: dict[str, int] = field(default_factory=dict)  # shape id -> lines


def check_text(text: str, label: str = "") -> Result:
    """Match each line under its parent's shape; rejected lines carry ``label:line-number: text``."""
    res = Result()
    stack: list[tuple[int, str | None]] = []  # (depth, shape id) of the open parents
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        res.lines += 1
        indent = len(raw) - len(raw.lstrip(" "))
        depth = indent // 2
        line = raw.strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack and stack[-1][0] == depth - 1 else None
        if depth > 0 and (not stack or stack[-1][0] != depth - 1):
            parent = "<orphan>"
        matched = [s for s in shapes() if s.parent == parent and (m := s.regex.fullmatch(line)) and _in_range(s, m)]
        verified = [s for s in matched if s.verified]
        if not matched:
            res.rejected.append(f"{label}:{n}: {raw}")
            stack.append((depth, None))
            continue
        best = verified[0] if verified else matched[0]
        if not verified:
            res.unverified[best.id] = res.unverified.get(best.id, 0) + 1
        stack.append((depth, best.id))
    return res


# --- the table itself --------------------------------------------------------------------------------------------


def test_every_shape_carries_its_source() -> None:
    ids = [s["id"] for s in table()["shapes"]]
    assert len(ids) == len(set(ids)), "shape ids are unique"
    for s in table()["shapes"]:
        assert s["parent"] is None or s["parent"] in ids, s["id"]
        assert str(s.get("source", "")).strip() and str(s.get("excerpt", "")).strip(), s["id"]
        assert isinstance(s["verified"], bool), s["id"]
        assert isinstance(s["read"], datetime.date), s["id"]
    assert shapes()  # every pattern compiles


def test_the_table_has_teeth() -> None:
    """Out-of-range values, unknown commands and the unsourced watchdog forms are rejected."""
    good = "policy-map type queuing Q\n  class type queuing c-out-8q-q7\n    priority level 1\n"
    assert check_text(good).rejected == []
    for bad in (
        "policy-map type queuing Q\n  class type queuing c-out-8q-q7\n    priority level 9\n",
        "policy-map type network-qos N\n  class type network-qos c-8q-nq3\n    mtu 9217\n",
        "policy-map type network-qos N\n  class type network-qos c-8q-nq3\n    pause pfc-cos 8\n",
        "class-map type qos match-any C\n  match dscp 64\n",
        "class-map type qos match-any C\n  match dscp 30-20\n",
        "priority-flow-control watch-dog shutdown-multiplier 2\n",
        "priority-flow-control auto-restore multiplier 2\n",
        "priority-flow-control watch-dog interval 50\n",
        "vlan 1\n",
        "vlan 4000\n",
        "interface Ethernet1/1\n  priority-flow-control watch-dog interface-multiplier 41\n",
        "  set qos-group 3\n",  # a child line without its parent
    ):
        assert check_text(bad).rejected, bad


# --- the corpus ----------------------------------------------------------------------------------------------


@cache
def corpus_results() -> tuple[tuple[str, Result], ...]:
    out = []
    for label, render in corpus(PLATFORM):
        for f in render.files:
            out.append((f"{label}:{f.relpath}", check_text(f.text, f"{label}:{f.relpath}")))
    return tuple(out)


def test_corpus_renders_pass_the_grammar() -> None:
    results = corpus_results()
    rejected = [r for _, res in results for r in res.rejected]
    unverified = sum(sum(res.unverified.values()) for _, res in results)
    record(
        PLATFORM,
        ORACLE,
        files=len(results),
        lines=sum(res.lines for _, res in results),
        rejected=len(rejected),
        unverified=unverified,
    )
    assert len(results) >= 3
    assert rejected == [], "\n".join(rejected[:20])


def _used_unverified() -> list[str]:
    used: set[str] = set()
    for _, res in corpus_results():
        used |= set(res.unverified)
    return sorted(used)


@pytest.mark.parametrize(
    "shape_id",
    [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason="no source confirms this NX-OS command form"))
        for s in _used_unverified()
    ],
)
def test_unverified_shape_is_confirmed(shape_id: str) -> None:
    """Each unverified shape the renders use, as a strict xfail: it passes (and this xfail fails) only once the
    table marks it verified, with a source."""
    (entry,) = [s for s in table()["shapes"] if s["id"] == shape_id]
    assert entry["verified"] is True, f"{shape_id}: {entry['pattern']} ({entry.get('note', entry['source'])})"


def test_unverified_shapes_are_listed_in_platforms_doc() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "platforms.md").read_text()
    for s in table()["shapes"]:
        if not s["verified"]:
            words = " ".join(s["pattern"].split()).split(" {")[0]
            assert words in doc, f"docs/platforms.md does not list the unverified NX-OS shape {words!r}"


# --- the property: nothing validate accepts renders a rejected line -----------------------------------------------


@st.composite
def watchdog_space(draw: st.DrawFn) -> dict[str, Any]:
    """The intent space with a lossless fabric and an enabled watchdog whose timers every platform of the lab can
    take (the shared strategy's wide timers are mostly refused by SONiC's ranges), so the NX-OS watchdog lines
    (interval, multipliers, disable-action) are drawn often."""
    doc = draw(intent_space())
    pol = doc["policy"]
    pol["transport"] = "roce_v2_lossless"
    det, rest = draw(st.integers(100, 5000)), draw(st.integers(100, 5000))
    pol["pfc"]["watchdog"] = {
        "enabled": True,
        "detection_ms": det,
        "restoration_ms": rest,
        "poll_ms": draw(st.integers(100, min(det, rest, 1000))),
        "action": draw(st.sampled_from(["drop", "forward", "alert"])),
    }
    return doc


def _property(doc: dict[str, Any], oracle: str) -> None:
    fabric = accepted(doc)
    assume(fabric is not None)
    assert fabric is not None
    files = lines = unverified = 0
    rejected: list[str] = []
    for render in renders_of(fabric, PLATFORM):
        for f in render.files:
            res = check_text(f.text, render.device)
            files += 1
            lines += res.lines
            unverified += sum(res.unverified.values())
            rejected += res.rejected
    record(PLATFORM, oracle, files=files, lines=lines, rejected=len(rejected), unverified=unverified)
    assert rejected == [], "\n".join(rejected[:20])


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(intent_space())
def test_accepted_intents_render_only_table_lines(doc: dict[str, Any]) -> None:
    _property(doc, f"{ORACLE}, property")


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(watchdog_space())
def test_accepted_watchdogs_render_only_table_lines(doc: dict[str, Any]) -> None:
    _property(doc, f"{ORACLE}, property (watchdog)")


# --- the whole-model property test's part (test_model_space.py) ------------------------------------------------


def _judge_whole_model(name: str, intent: Any, text: str, sampled: bool) -> list[str]:
    res = check_text(text, name)
    record(
        "cisco_nxos",
        "pinned grammar table (whole model)",
        files=1,
        lines=res.lines,
        rejected=len(res.rejected),
        unverified=sum(res.unverified.values()),
    )
    return list(res.rejected)


WHOLE_MODEL = WholeModel(
    ports=lambda n: st.one_of(
        n.map(lambda i: f"Ethernet1/{i}"), st.tuples(n, st.integers(1, 4)).map(lambda t: f"Ethernet1/{t[0]}/{t[1]}")
    ),
    lag="port-channel{}",
    judge=_judge_whole_model,
)
"""NX-OS in the whole-model property test: Ethernet1/P and Ethernet1/P/B ports, port-channelN LAGs, the pinned
grammar table judging."""
