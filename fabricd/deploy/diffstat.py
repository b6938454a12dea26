"""Which lines of a driver's diff add and which remove, per platform: for counting (``+N -M``) and colouring.

Most drivers return a unified-style diff (``+`` / ``-`` line prefixes: EOS session diff, NX-OS checkpoint diff,
SONiC's JSON-patch lines). NVUE's ``nv config diff`` is YAML, a list of operations: ``- set:`` followed by the tree
it sets, ``- unset:`` by the tree it removes (lab/fabricd_lab/nvue.py prints it as NVUE does). There a leading ``-``
is a list item, not a removal: every line under ``- set:`` adds, every line under ``- unset:`` removes, and the
operation lines themselves are neither.
"""

from __future__ import annotations

import re

_NVUE_OP = re.compile(r"^- (set|unset):")


def diff_signs(platform: str, text: str) -> list[tuple[str, str]]:
    """Each line of ``text`` with ``+`` (adds), ``-`` (removes) or ``""`` (context, or an NVUE operation line)."""
    lines = text.splitlines()
    if platform != "cumulus_nvue":
        return [(line[:1] if line[:1] in ("+", "-") else "", line) for line in lines]
    out: list[tuple[str, str]] = []
    sign = ""
    for line in lines:
        op = _NVUE_OP.match(line)
        if op is not None:
            sign = "+" if op.group(1) == "set" else "-"
            out.append(("", line))
        elif line.startswith("- ") or not line.startswith(" "):
            sign = ""  # another top-level item: not a set/unset block
            out.append(("", line))
        else:
            out.append((sign, line))
    return out


def diff_counts(platform: str, text: str) -> tuple[int, int]:
    """(lines added, lines removed) of a driver's diff."""
    signs = [s for s, _ in diff_signs(platform, text)]
    return signs.count("+"), signs.count("-")
