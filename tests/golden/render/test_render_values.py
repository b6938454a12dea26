"""Every value of every switch intent appears in that switch's rendered output, or in a "cannot express" warning.

The walk covers each scalar leaf of the per-platform switch intent (thresholds in the platform's unit, watchdog
timers, weights, MTUs, headroom, VLANs, DSCP maps, CONFIG_DB rows...). Skipped by design, and only these:
booleans and enums (they select which commands are printed; test_render_parsers.py checks those structurally),
None, and fields marked ``walk=False`` in fabricd/intent/switch.py (labels such as profile names and pre-formatted
text such as the cfggen JSON). A number must occur in the output as a number, or inside a range such as 24-31; a
string must occur verbatim. A warning covers a field when its dotted path (indices dropped) is a prefix.
"""

from __future__ import annotations

import pytest
from render_cases import SWITCH_PLATFORMS, case_ids, intents, missing_values, renders

CASES = [(p, c) for p, c in case_ids() if p in SWITCH_PLATFORMS]


@pytest.mark.parametrize(("platform", "case"), CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_every_intent_value_is_rendered_or_warned(platform: str, case: str) -> None:
    by_device = {r.device: r for r in renders(platform, case)}
    for sw in intents(platform, case):
        r = by_device[sw.name]
        text = "\n".join(f.text for f in r.files)
        missing = missing_values(sw, text, list(r.warnings))
        assert missing == [], f"{sw.name}: values neither rendered nor warned about: {missing}"


def test_the_walk_notices_a_dropped_value() -> None:
    """Removing the ECN line from a rendered EOS config makes its thresholds 'missing': the check has teeth."""
    (sw, *_) = intents("arista_eos", "standard")
    r = next(r for r in renders("arista_eos", "standard") if r.device == sw.name)
    text = r.primary.text
    assert missing_values(sw, text, list(r.warnings)) == []
    cut = "\n".join(line for line in text.splitlines() if "random-detect" not in line)
    missing = missing_values(sw, cut, list(r.warnings))
    assert "queues.ecn.min_threshold = 150" in missing and "queues.ecn.max_threshold = 1500" in missing
    # and without the headroom warning, the per-port xoff values are reported
    assert any(m.startswith("ports.headroom.xoff_bytes") for m in missing_values(sw, text, []))
