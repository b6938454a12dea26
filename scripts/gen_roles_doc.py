#!/usr/bin/env python3
"""Regenerate the parser-role table in docs/platforms.md from fabricd/nos/roles.py (run from the repo root).

The table sits between the ``<!-- parser-roles:begin -->`` and ``<!-- parser-roles:end -->`` markers;
tests/golden/test_parser_roles.py fails when it is stale."""

from __future__ import annotations

from pathlib import Path

from fabricd.nos.roles import markdown_table

BEGIN, END = "<!-- parser-roles:begin -->\n", "<!-- parser-roles:end -->\n"

if __name__ == "__main__":
    repo = Path(__file__).resolve().parent.parent
    target = repo / "docs" / "platforms.md"
    text = target.read_text()
    head, sep, rest = text.partition(BEGIN)
    if not sep:
        raise SystemExit(f"{target}: no {BEGIN.strip()} marker")
    _, sep, tail = rest.partition(END)
    if not sep:
        raise SystemExit(f"{target}: no {END.strip()} marker")
    target.write_text(head + BEGIN + markdown_table(repo / "tests" / "golden") + END + tail)
    print(f"wrote {target}")
