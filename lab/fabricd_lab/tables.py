"""Text tables as the real CLIs print them.

SONiC's show scripts (``pfcstat``, ``queuestat``, ``pfcwd``) print ``tabulate(rows, headers, tablefmt='simple',
stralign='right')``: every column is as wide as its widest cell or its header plus 2 (tabulate's MIN_PADDING), cells
are right-aligned, columns are separated by two spaces and the header is underlined by dashes. :func:`simple` does
the same without depending on tabulate. :func:`left` is the left-aligned variant NVUE prints.
"""

from __future__ import annotations

from collections.abc import Sequence


def _widths(headers: Sequence[str], rows: Sequence[Sequence[str]], pad: int) -> list[int]:
    widths = [len(h) + pad for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    return widths


def simple(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """tabulate ``simple`` format, right-aligned (SONiC)."""
    widths = _widths(headers, rows, 2)
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(lines)


def left(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Left-aligned columns separated by two spaces, dashes under the header (NVUE tables)."""
    widths = _widths(headers, rows, 0)
    lines = [indent + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append(indent + "  ".join("-" * w for w in widths))
    lines.extend(indent + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(lines)


def comma(value: int) -> str:
    """``15437`` -> ``15,437`` (sonic-utilities ``format_number_with_comma``)."""
    return f"{value:,}"
