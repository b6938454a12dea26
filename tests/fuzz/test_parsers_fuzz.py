"""Hypothesis over every text parser of the exporters: arbitrary text, and real captures with random damage
(truncation, inserted garbage, shuffled lines) never raise a traceback; they return (possibly partial) snapshots,
or, for the host text readers (``ethtool -S``/``-i``, perfquery) given content they read nothing from, a located
:class:`~fabricd.readers.textparse.TextParseError` naming the line (issue 26 part 5)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd.nos.arista_eos import show as arista_eos
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd.nos.cumulus_nvue import show as cumulus_nvue
from fabricd.nos.sonic import show as sonic
from fabricd.readers import dcb_tools
from fabricd.readers.ethtool import normalise_text, parse_ethtool_info, parse_ethtool_stats
from fabricd.readers.perfquery import parse_perfquery
from fabricd.readers.textparse import TextParseError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers"
CAPTURES = sorted(p for p in GOLDEN.rglob("*.txt"))
CAPTURE_TEXT = [p.read_text() for p in CAPTURES]

PARSERS: list[Callable[[str], object]] = [
    parse_ethtool_stats,
    parse_ethtool_info,
    lambda t: normalise_text("eth0", t, "mlx5_core", full=False),
    lambda t: normalise_text("eth0", t, None, full=True),
    parse_perfquery,
    sonic.parse_show_pfc_counters,
    sonic.parse_show_queue_counters,
    sonic.parse_show_queue_wredcounters,
    sonic.parse_show_pfcwd_stats,
    sonic.parse_show_pfcwd_config,
    sonic.parse_show_pfc_counters_history,
    sonic.parse_show_interfaces_counters,
    lambda t: sonic.parse_show_interfaces_counters_detailed(t, "Ethernet0"),
    arista_eos.parse_show_priority_flow_control_counters,
    arista_eos.parse_show_interfaces_counters_queue_detail,
    arista_eos.parse_show_qos_ecn_counters,
    arista_eos.parse_show_pfc_counters_watchdog,
    arista_eos.parse_show_hardware_counter_drop,
    arista_eos.parse_show_interfaces_counters_discards,
    sonic.parse_pg_watermark_shared,
    sonic.parse_pg_watermark_headroom,
    sonic.parse_queue_watermark_unicast,
    sonic.parse_queue_watermark_multicast,
    sonic.parse_pg_persistent_watermark,
    cisco_nxos.parse_show_interface_priority_flow_control,
    cisco_nxos.parse_show_queuing,
    cisco_nxos.parse_show_queuing_interface,
    cisco_nxos.parse_show_queuing_pfc_queue,
    cisco_nxos.parse_show_interface_counters_errors,
    lambda t: cisco_nxos.parse_show_interface(t, "Eth1/1"),
    cumulus_nvue.parse_counters_qos,
    cumulus_nvue.parse_qos_roce_counters,
    cumulus_nvue.parse_pfc_watchdog,
    cumulus_nvue.parse_interface_counters_table,
    cumulus_nvue.parse_counters_errors,
]

noise = st.text(alphabet=st.sampled_from(list(' \t\n:-=|/{}[]",.0123456789abcxyzNA#%')), max_size=400)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), noise))
def test_arbitrary_text_never_raises(text: str) -> None:
    for parse in PARSERS:
        _parse(parse, text)


def _parse(parse: Callable[[str], object], text: str) -> None:
    """Run one parser: a located TextParseError (``source:line:``) is the documented failure; anything else fails."""
    try:
        parse(text)
    except TextParseError as exc:
        assert exc.line >= 1 and f":{exc.line}:" in str(exc), exc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(CAPTURE_TEXT) - 1), cut=st.floats(0, 1), junk=noise, seed=st.randoms())
def test_damaged_captures_never_raise(index: int, cut: float, junk: str, seed: object) -> None:
    text = CAPTURE_TEXT[index]
    lines = text.splitlines()
    seed.shuffle(lines)  # type: ignore[attr-defined]
    variants = [
        text[: int(len(text) * cut)],
        text[: int(len(text) * cut)] + junk + text[int(len(text) * cut) :],
        "\n".join(lines),
    ]
    for variant in variants:
        for parse in PARSERS:
            _parse(parse, variant)


DCB_TOOLS: list[Callable[[str], object]] = [
    dcb_tools.parse_mlnx_qos,
    dcb_tools.parse_lldptool,
    dcb_tools.parse_niccli_qos,
    dcb_tools.parse_dcb_maxrate,
    dcb_tools.parse_dcb_dcbx,
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(CAPTURE_TEXT) - 1), cut=st.floats(0, 1), junk=noise)
def test_host_dcb_tool_readers_fail_only_with_located_errors(index: int, cut: float, junk: str) -> None:
    """The host DCB tool readers either read or raise TextParseError (source:line, expected, got), never another
    exception, on any capture (of any format) cut and salted with garbage."""
    text = CAPTURE_TEXT[index]
    at = int(len(text) * cut)
    for variant in (junk, text[:at], text[:at] + junk + text[at:]):
        for parse in DCB_TOOLS:
            try:
                parse(variant)
            except TextParseError as exc:
                assert exc.line >= 1 and exc.expected
