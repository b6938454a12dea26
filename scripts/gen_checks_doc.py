#!/usr/bin/env python3
"""Regenerate docs/checks.md from the check registry (run from the repo root)."""

from __future__ import annotations

from pathlib import Path

from fabricd.audit.catalogue import commands_markdown
from fabricd.intent.checks.catalogue import catalogue_markdown
from fabricd.nos.validate import ALL_CHECKS, watchdog_table

if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "checks.md"
    target.write_text(catalogue_markdown(ALL_CHECKS, watchdog_table(), commands_markdown()))
    print(f"wrote {target}")
