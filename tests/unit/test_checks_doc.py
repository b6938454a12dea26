"""docs/checks.md is the generated catalogue of every check code (regenerate: python scripts/gen_checks_doc.py)."""

from __future__ import annotations

import re
from pathlib import Path

from fabricd.audit.catalogue import commands_markdown
from fabricd.intent.checks.catalogue import LOAD_CODES, catalogue_markdown
from fabricd.nos.validate import ALL_CHECKS, watchdog_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_doc_is_current() -> None:
    want = catalogue_markdown(ALL_CHECKS, watchdog_table(), commands_markdown())
    assert DOC.read_text() == want, "run: python scripts/gen_checks_doc.py"


def test_every_code_is_documented() -> None:
    text = DOC.read_text()
    for c in ALL_CHECKS:
        assert f"### {c.code}\n" in text and c.fix in text, c.code
    for code, _ in LOAD_CODES:
        assert f"| {code} |" in text


def test_every_load_code_the_loader_emits_is_documented() -> None:
    src = Path(__file__).resolve().parents[2] / "fabricd" / "inventory"
    emitted = set(re.findall(r'code="(INV\d{3})"', "".join(p.read_text() for p in src.glob("*.py"))))
    assert emitted <= {code for code, _ in LOAD_CODES}
