"""Hypothesis over the cabling and link-health readers: the switch packs' FEC/transceiver parsers never raise on
arbitrary or damaged text (they return what they read and name what they could not as a problem); the LLDP readers
(every pack's, lldpd's) and the host readers (``lldpctl -f json``, ``ethtool -m``, ``ethtool --show-fec``) read or
raise a located TextParseError, nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd.nos.arista_eos.linkhealth import parse_show_interfaces_transceiver
from fabricd.nos.arista_eos.lldp import parse_show_lldp_neighbors
from fabricd.nos.cisco_nxos.linkhealth import parse_show_interface_transceiver_details
from fabricd.nos.cisco_nxos.lldp import parse_show_lldp_neighbors_detail
from fabricd.nos.cumulus_nvue.linkhealth import parse_nv_show_interface_transceiver
from fabricd.nos.cumulus_nvue.lldp import parse_nv_show_interface_lldp_neighbor
from fabricd.nos.sonic.linkhealth import parse_fec_stats, parse_transceiver_dom
from fabricd.nos.sonic.lldp import parse_show_lldp_table
from fabricd.readers.lldp import parse_lldpctl_json, parse_lldpctl_text
from fabricd.readers.module import parse_ethtool_fec, parse_ethtool_module
from fabricd.readers.textparse import TextParseError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers"
FOLDERS = ("lldp", "host", "switch/sonic", "switch/arista_eos", "switch/cisco_nxos", "switch/cumulus_nvue")
CAPTURES = [p.read_text().partition("\n")[2] for d in FOLDERS for p in sorted((GOLDEN / d).glob("*.txt"))]

NEVER_RAISE: list[Callable[[str], object]] = [
    parse_fec_stats,
    parse_transceiver_dom,
    parse_show_interfaces_transceiver,
    parse_show_interface_transceiver_details,
    lambda t: parse_nv_show_interface_transceiver(t, "swp1"),
]
LOCATED: list[Callable[[str], object]] = [
    parse_show_lldp_table,
    parse_show_lldp_neighbors,
    parse_show_lldp_neighbors_detail,
    lambda t: parse_nv_show_interface_lldp_neighbor(t, "swp1"),
    parse_lldpctl_json,
    parse_lldpctl_text,
    lambda t: parse_ethtool_module(t, "eth0"),
    lambda t: parse_ethtool_fec(t, "eth0"),
]
noise = st.text(alphabet=st.sampled_from(list(' \t\n:-=|/{}[]",.0123456789abcxyzNA#%()')), max_size=400)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(CAPTURES) - 1), cut=st.floats(0, 1), junk=st.one_of(noise, st.text(max_size=200)))
def test_damaged_captures(index: int, cut: float, junk: str) -> None:
    text = CAPTURES[index]
    at = int(len(text) * cut)
    for variant in (junk, text[:at], text[:at] + junk + text[at:]):
        for parse in NEVER_RAISE:
            parse(variant)
        for parse in LOCATED:
            try:
                parse(variant)
            except TextParseError as exc:
                assert exc.line >= 1 and exc.expected
