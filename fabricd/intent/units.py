"""Vendor unit conversion and list formatting, shared by the switch intent builders.

Every function is pure and cheap; the switch intent calls them once per policy and caches the result.

Units (SONiC, Arista EOS and Cisco NX-OS QoS documentation):

* ECN/WRED thresholds are stored in bytes. Arista EOS (``random-detect ecn ... kbytes``) and Cisco NX-OS
  (``random-detect minimum-threshold ... kbytes``) take kbytes; the vendors' own recipes write NVIDIA's
  150000 B / 1500000 B as ``150 kbytes`` / ``1500 kbytes``, so one kbyte is taken as 1000 bytes here.
* Timers are stored in milliseconds; EOS takes decimal seconds (``timeout 0.2``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal

KBYTE_BYTES = 1000
"""Bytes in one ``kbytes`` unit of the EOS/NX-OS WRED commands (decimal, as the vendors' RoCE recipes use it)."""


def bytes_to_kbytes(value_bytes: int) -> tuple[int, bool]:
    """``value_bytes`` in kbytes, rounded half up; the flag is True when the conversion is exact."""
    kbytes, rest = divmod(value_bytes, KBYTE_BYTES)
    if rest * 2 >= KBYTE_BYTES:
        kbytes += 1
    return kbytes, rest == 0


def ms_to_seconds(ms: int) -> str:
    """Milliseconds as EOS decimal seconds with no trailing zeros: 200 -> ``0.2``, 1000 -> ``1``, 50 -> ``0.05``."""
    text = format(Decimal(ms) / 1000, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def ranges(values: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated ``values`` as inclusive ``(first, last)`` runs: [1,2,3,7] -> [(1,3),(7,7)]."""
    out: list[tuple[int, int]] = []
    for v in sorted(set(values)):
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def range_list(values: Iterable[int], sep: str = ",") -> str:
    """Compact list with ranges, as NX-OS ``match dscp`` and NVUE ``traffic-class`` take it: ``0-25,27-47``."""
    return sep.join(str(a) if a == b else f"{a}-{b}" for a, b in ranges(values))


def plain_list(values: Iterable[int], sep: str = ",") -> str:
    """Every value spelled out, sorted: ``0,1,2`` (NVUE ``dscp`` lists, SONiC ``pfc_enable``)."""
    return sep.join(str(v) for v in sorted(set(values)))


def chunks(values: Sequence[int], size: int) -> list[list[int]]:
    """``values`` cut into consecutive lists of at most ``size`` items."""
    return [list(values[i : i + size]) for i in range(0, len(values), size)]


def split_percent(weights: dict[int, int]) -> dict[int, int]:
    """Scale DWRR weights to integer percentages summing to exactly 100 (largest remainder, ties to the lower id).

    The same rule the host intent uses for ``dcb ets tc-bw``, so host and switch schedule alike.
    """
    total = sum(weights.values())
    if not weights or total <= 0:
        return dict.fromkeys(weights, 0)
    exact = {k: w * 100 / total for k, w in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    short = 100 - sum(out.values())
    for k in sorted(exact, key=lambda t: (-(exact[t] - out[t]), t))[:short]:
        out[k] += 1
    return out
