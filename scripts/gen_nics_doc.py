#!/usr/bin/env python3
"""Regenerate docs/nics.md (the NIC support matrix) from the NIC profiles (run from the repo root)."""

from __future__ import annotations

from pathlib import Path

from fabricd.intent.nics.doc import matrix_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "nics.md"
    target.write_text(matrix_markdown())
    print(f"wrote {target}")
