"""Arista EOS value shaping that the switch intent (fabricd/intent/switch.py) uses for EOS only.

Source of every limit: Arista AVD's ``eos_cli_config_gen`` schema (pyavd 6.4), the oracle of
tests/conformance/test_arista_eos_avd.py.
"""

from __future__ import annotations

from collections.abc import Callable

from fabricd.intent.units import KBYTE_BYTES
from fabricd.model import EcnProfile

Warn = Callable[[str, str, str, str], None]
"""``warn(field, intended, rendered, reason)``."""


def eos_ecn(profile: EcnProfile, queue: int, warn: Warn) -> tuple[int, int, str, int]:
    """``(min, max, unit, max-mark-probability)`` of EOS ``random-detect ecn minimum-threshold ... maximum-threshold``.

    AVD's schema takes both thresholds >= 1 in one unit (segments, bytes, kbytes or mbytes) and a probability of
    1-100. The unit is kbytes (1000 B) when both thresholds are whole kbytes, else bytes, so the value is kept
    exactly (a threshold under 1000 B no longer renders as ``0 kbytes``); a 0 threshold or probability becomes 1,
    with a warning.
    """
    lo, hi, prob = profile.min_bytes, profile.max_bytes, profile.max_mark_probability_percent
    if lo < 1:
        warn(f"queues[{queue}].ecn.min_threshold", f"{lo} B", "1 bytes", "EOS thresholds are at least 1")
        lo = 1
    if prob < 1:
        warn(f"queues[{queue}].ecn.probability_percent", f"{prob} %", "1 %", "EOS max-mark-probability is 1-100")
        prob = 1
    if lo % KBYTE_BYTES == 0 and hi % KBYTE_BYTES == 0:
        return lo // KBYTE_BYTES, hi // KBYTE_BYTES, "kbytes", prob
    return lo, hi, "bytes", prob
