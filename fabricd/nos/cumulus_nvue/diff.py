"""How to read NVUE's ``nv config diff`` (the spec's ``diff_signs``; :mod:`fabricd.deploy.diffstat` counts and
colours it).

NVUE's diff is YAML, a list of operations: ``- set:`` followed by the tree it sets, ``- unset:`` by the tree it
removes (lab/fabricd_lab/nvue.py prints it as NVUE does). There a leading ``-`` is a list item, not a removal: every
line under ``- set:`` adds, every line under ``- unset:`` removes, and the operation lines themselves are neither.
"""

from __future__ import annotations

import re

_OPERATION = re.compile(r"^- (set|unset):")


def diff_signs(text: str) -> list[tuple[str, str]]:
    """Each line of ``text`` with ``+`` (adds), ``-`` (removes) or ``""`` (an operation line, or another item)."""
    out: list[tuple[str, str]] = []
    sign = ""
    for line in text.splitlines():
        op = _OPERATION.match(line)
        if op is not None:
            sign = "+" if op.group(1) == "set" else "-"
            out.append(("", line))
        elif line.startswith("- ") or not line.startswith(" "):
            sign = ""  # another top-level item: not a set/unset block
            out.append(("", line))
        else:
            out.append((sign, line))
    return out
