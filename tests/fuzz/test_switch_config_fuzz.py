"""Hypothesis over the running-config parsers (fabricd/readers/switch/config_*.py) and the audit's pure check
(:func:`fabricd.audit.switch.evaluate`): arbitrary text, damaged real captures and oddly shaped CONFIG_DB JSON never
raise; they give (possibly partial) read-backs and findings."""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd.audit.switch import CONFIG_PARSERS, SwitchReadback, evaluate
from fabricd.inventory import load_inventory
from fabricd.model import Platform
from fabricd.nos.registry import SPECS, AnySwitchIntent, SwitchIntentBuilder
from fabricd.platforms.base import ConfigDelta
from fabricd.readers.switch.model import SwitchCounters

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "switch_config"
REPO = Path(__file__).resolve().parents[2]
CAPTURES = {p: p.read_text().partition("\n")[2] for p in sorted(GOLDEN.glob("*/*.txt"))}
LEAF = {
    Platform.SONIC: "leaf1-sonic",
    Platform.ARISTA_EOS: "leaf2-eos",
    Platform.CISCO_NXOS: "leaf3-nxos",
    Platform.CUMULUS_NVUE: "leaf4-nvue",
}


@cache
def intent(platform: Platform) -> AnySwitchIntent:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    switch = fabric.switch(LEAF[platform])
    assert switch is not None
    return SwitchIntentBuilder(fabric).build(switch)


def check_all(platform: Platform, text: str) -> None:
    CONFIG_PARSERS[platform](text)
    report = evaluate(intent(platform), SwitchReadback("fuzz", text, ConfigDelta(), SwitchCounters()))
    assert report.checks


noise = st.text(alphabet=st.sampled_from(list(' \t\n:-=|/{}[]",.0123456789abcdnqsvtxyz#!')), max_size=400)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), noise), platform=st.sampled_from(list(SPECS)))
def test_arbitrary_text_never_raises(text: str, platform: Platform) -> None:
    check_all(platform, text)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), index=st.integers(0, len(CAPTURES) - 1), garbage=noise)
def test_damaged_captures_never_raise(seed: int, index: int, garbage: str) -> None:
    path, text = list(CAPTURES.items())[index]
    rng = random.Random(seed)
    lines = text.splitlines()
    kind = rng.randrange(4)
    if kind == 0:
        lines = lines[: rng.randrange(len(lines) + 1)]
    elif kind == 1:
        lines.insert(rng.randrange(len(lines) + 1), garbage)
    elif kind == 2:
        rng.shuffle(lines)
    else:
        i = rng.randrange(len(lines))
        words = lines[i].split()
        if words:
            words[rng.randrange(len(words))] = garbage.replace("\n", " ")
        lines[i] = " ".join(words)
    check_all(Platform(path.parent.name), "\n".join(lines))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
TABLES = [
    "PORT",
    "PORT_QOS_MAP",
    "DSCP_TO_TC_MAP",
    "DOT1P_TO_TC_MAP",
    "TC_TO_QUEUE_MAP",
    "PFC_WD",
    "QUEUE",
    "WRED_PROFILE",
]
KEYS = ["Ethernet0", "Ethernet0|3", "Ethernet0|3-4", "FABRICD", "roce", "GLOBAL", "3"]
FIELDS = [
    "mtu",
    "pfc_enable",
    "pfcwd_sw_enable",
    "dscp_to_tc_map",
    "dot1p_to_tc_map",
    "tc_to_queue_map",
    "wred_profile",
    "ecn",
    "green_min_threshold",
    "detection_time",
    "26",
    "3",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    db=st.dictionaries(
        st.sampled_from(TABLES),
        st.one_of(
            json_values,
            st.dictionaries(
                st.sampled_from(KEYS),
                st.one_of(json_values, st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4)),
                max_size=4,
            ),
        ),
        max_size=6,
    )
)
def test_oddly_shaped_config_db_never_raises(db: dict[str, object]) -> None:
    check_all(Platform.SONIC, json.dumps(db))
