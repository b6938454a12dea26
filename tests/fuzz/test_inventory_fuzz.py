"""Fuzz ``fabricd validate`` with mutated lab inventories: wrong types, out-of-range values, deleted keys,
duplicated entries, renamed keys and garbage YAML. Whatever the input: exit 0, 1 or 2, never a traceback, and on
exit 2 every stderr line is a located message (``error: file[:line]: ... [INVnnn]``)."""

from __future__ import annotations

import copy
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabricd.cli.main import build_app

LAB = Path(__file__).resolve().parents[2] / "inventory" / "lab"
FILES = sorted(f.name for f in LAB.glob("*.yml"))
DOCS = {name: yaml.safe_load((LAB / name).read_text()) for name in FILES}
LOCATED = re.compile(r"^error: (?P<file>[^:\s][^:]*)(?::(?P<line>\d+))?: .+ \[INV\d{3}\]$")
FINDING = re.compile(r"^(error|warning): \S.* \[FAB\d{3}\]$")


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(paths(v, (*prefix, i)))
    return out


PATHS = {name: paths(doc) for name, doc in DOCS.items()}

values = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 7, 8, 63, 64, 4094, 4095, 65536, 9217, 575]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=20),
    st.sampled_from(
        [
            "400G",
            "7G",
            "sonic",
            "junos",
            "leaf1-sonic:Ethernet0",
            "a:b",
            "10.100.0.11/16",
            "300.1.1.1/8",
            "dscp",
            "pcp",
            "roce",
            "strict",
            "x" * 100,
            "a b;c",
            "drop",
            "",
        ]
    ),
    st.lists(st.integers(-3, 10), max_size=4),
    st.dictionaries(st.sampled_from(["name", "id", "speed", "zzz"]), st.integers(0, 9), max_size=2),
)


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, str, tuple[Any, ...], Any]:
    name = draw(st.sampled_from(FILES))
    path = draw(st.sampled_from(PATHS[name]))
    kind = draw(st.sampled_from(["set", "set", "delete", "duplicate", "rename", "garbage"]))
    arg: Any = None
    if kind == "set":
        arg = draw(values)
    elif kind == "rename":
        arg = draw(st.sampled_from(["nmae", "speeed", "priorities", "groups", "", "1", "ports"]))
    elif kind == "garbage":
        arg = (
            draw(st.integers(0, 10_000)),
            draw(
                st.one_of(
                    st.text(alphabet=":-[]{}&*!|>'\"%@`#,? \t\n\\abc0123456789", max_size=30),
                    st.binary(max_size=8),
                    st.sampled_from(["\t", "- ", ": ", "<<: {}", "---\n", "*x", "&a ", "[", "{", "\x00", "\ufeff"]),
                )
            ),
        )
    return name, kind, path, arg


def apply(docs: dict[str, Any], texts: dict[str, bytes], m: tuple[str, str, tuple[Any, ...], Any]) -> None:
    name, kind, path, arg = m
    if kind == "garbage":
        pos, junk = arg
        text = texts.get(name) or yaml.safe_dump(docs[name], sort_keys=False).encode()
        pos %= len(text) + 1
        texts[name] = text[:pos] + (junk if isinstance(junk, bytes) else junk.encode()) + text[pos:]
        return
    try:
        parent = _parent(docs[name], path)
        key = path[-1]
        if kind == "set":
            parent[key] = arg
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate":
            if isinstance(parent, list):
                parent.insert(key, copy.deepcopy(parent[key]))
            else:
                parent[f"{key}"] = copy.deepcopy(parent[key])
        elif kind == "rename" and isinstance(parent, dict):
            parent[arg] = parent.pop(key)
    except (KeyError, IndexError, TypeError):
        pass  # an earlier mutation removed the path: nothing to do


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation(), min_size=1, max_size=3))
def test_validate_never_crashes(mutations: list[tuple[str, str, tuple[Any, ...], Any]]) -> None:
    docs = copy.deepcopy(DOCS)
    texts: dict[str, bytes] = {}
    for m in mutations:
        apply(docs, texts, m)
    with tempfile.TemporaryDirectory(prefix="fdt-fuzz-") as tmp:
        root = Path(tmp) / "inv"
        root.mkdir()
        for name in FILES:
            body = texts.get(name)
            if body is None:
                body = yaml.safe_dump(docs[name], sort_keys=False, allow_unicode=True).encode()
            (root / name).write_bytes(body)
        result = CliRunner().invoke(build_app(), ["validate", str(root)], env={"TERM": "dumb", "COLUMNS": "200"})
    out, err = result.stdout, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in out + err
    assert result.exit_code in (0, 1, 2), (result.exit_code, out, err)
    if result.exit_code == 2:
        assert out == "" and err, (out, err)
        for line in err.splitlines():
            match = LOCATED.match(line)
            assert match, line
            assert Path(match["file"]).is_relative_to(root), line
    else:
        assert err == ""
        lines = out.splitlines()
        assert lines[-1].split(": ")[-1] in ("ok", "failed")
        for line in lines:
            assert FINDING.match(line) or line.startswith(("PFC deadlock:", "--fail-links")) or line is lines[-1], line
        assert (result.exit_code == 1) == any(line.startswith("error: ") for line in lines)
