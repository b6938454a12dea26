#!/usr/bin/env python3
"""Regenerate the device-rule and field-coverage tables in docs/platforms.md from the packs' rules
(fabricd/nos/<id>/rules.py) and fabricd/nos/coverage.py (run from the repo root).

Each table sits between its ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` markers; tests/unit/test_coverage.py
fails when one is stale."""

from __future__ import annotations

from pathlib import Path

from fabricd.nos.coverage import markdown_table
from fabricd.nos.registry import SPECS
from fabricd.nos.rules import rules_markdown


def tables() -> dict[str, str]:
    """marker name -> generated markdown."""
    return {
        "unverified-rules": rules_markdown({p.value: (s.title, s.rules) for p, s in SPECS.items()}),
        "field-coverage": markdown_table(),
    }


def replace(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->\n"
    head, sep, rest = text.partition(begin)
    if not sep:
        raise SystemExit(f"docs/platforms.md: no {begin.strip()} marker")
    _, sep, tail = rest.partition(end)
    if not sep:
        raise SystemExit(f"docs/platforms.md: no {end.strip()} marker")
    return head + begin + body + end + tail


if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "platforms.md"
    text = target.read_text()
    for name, body in tables().items():
        text = replace(text, name, body)
    target.write_text(text)
    print(f"wrote {target}")
