"""Which lines of a driver's diff add and which remove, per platform: for counting (``+N -M``) and colouring.

Each pack's spec says how its driver's diff reads (``diff_signs``): most are unified-style (``+`` / ``-`` line
prefixes, :func:`fabricd.nos.spec.unified_diff_signs`); NVUE's ``nv config diff`` is YAML operations
(fabricd/nos/cumulus_nvue/diff.py).
"""

from __future__ import annotations

from fabricd.nos.registry import spec_of


def diff_signs(platform: str, text: str) -> list[tuple[str, str]]:
    """Each line of ``text`` with ``+`` (adds), ``-`` (removes) or ``""`` (context, or a line of the diff's own
    syntax, such as an NVUE operation line)."""
    return spec_of(platform).diff_signs(text)


def diff_counts(platform: str, text: str) -> tuple[int, int]:
    """(lines added, lines removed) of a driver's diff."""
    signs = [s for s, _ in diff_signs(platform, text)]
    return signs.count("+"), signs.count("-")
