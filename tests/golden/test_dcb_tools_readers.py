"""The host DCB tool readers (fabricd.readers.dcb_tools) on real captures in tests/golden/readers/host_text/: values
read by eye from each capture, and the located errors for outputs they cannot place."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.readers.dcb_tools import (
    parse_dcb_dcbx,
    parse_dcb_maxrate,
    parse_lldptool,
    parse_mlnx_qos,
    parse_niccli_qos,
)
from fabricd.readers.textparse import TextParseError

CAPTURES = Path(__file__).parent / "readers" / "host_text"


def text(name: str) -> str:
    raw = (CAPTURES / name).read_text()
    assert raw.startswith("# source:"), name
    return raw


def test_mlnx_qos_modern_format() -> None:
    s = parse_mlnx_qos(text("mlnx_qos-trust-dscp-pfc5-ets-gpu-prod-notes.txt"))
    assert (s.dcbx, s.trust, s.pfc_mask) == ("host", ("dscp",), 1 << 5)
    assert s.prio_tc == {p: p for p in range(8)}
    assert s.tc_tsa == {0: "ets", 1: "ets", 2: "ets", 3: "ets", 4: "strict", 5: "strict", 6: "strict", 7: "strict"}
    assert s.tc_bw == {0: 9, 1: 1, 2: 80, 3: 10, 4: 0, 5: 0, 6: 0, 7: 0}
    assert s.dscp_prio is not None and len(s.dscp_prio) == 64
    assert (s.dscp_prio[40], s.dscp_prio[47], s.dscp_prio[48], s.dscp_prio[26]) == (5, 5, 6, 3)  # prio:5 dscp:40,47,..


def test_mlnx_qos_old_format_and_pcp_trust() -> None:
    old = parse_mlnx_qos(text("mlnx_qos-os-controlled-trust-dscp-pfc3-netarbiter.txt"))
    assert (old.pfc_mask, old.prio_tc[0], old.prio_tc[1], set(old.tc_tsa.values())) == (8, 1, 0, {"vendor"})
    pcp = parse_mlnx_qos(text("mlnx_qos-trust-pcp-no-pfc-centos-notes.txt"))
    assert (pcp.trust, pcp.pfc_mask, pcp.dscp_prio) == (("pcp",), 0, None)  # no dscp2prio table under pcp trust


def test_lldptool_reads_the_configuration_not_the_recommendation() -> None:
    s = parse_lldptool(text("lldptool-ti-ieee-ets-reco-app-intel-autotest.txt"))
    assert s.pfc_enabled == frozenset({1, 2, 5, 7}) and s.willing is False
    assert s.prio_tc == {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3}
    assert s.tc_bw == {0: 25, 1: 25, 2: 25, 3: 25, 4: 0, 5: 0, 6: 0, 7: 0}
    assert s.dscp_prio == {}  # an APP TLV (iSCSI port, FCoE ethertype) without a DSCP entry


def test_lldptool_cee_peer() -> None:
    s = parse_lldptool(text("lldptool-tni-cee-peer-intel-autotest.txt"))
    assert s.pfc_enabled == frozenset({2, 3, 4, 6})
    assert s.prio_tc == {0: 0, 1: 0, 5: 0, 7: 0, 3: 1, 4: 2, 2: 3, 6: 4}  # PGID priorities


def test_niccli_firmware_dcb() -> None:
    s = parse_niccli_qos(text("niccli-qos-ets-show-bcm57608-node-scraper.txt"))
    assert s.pfc_enabled == frozenset({3})
    assert s.prio_tc == {0: 0, 1: 0, 2: 0, 3: 1, 4: 0, 5: 0, 6: 0, 7: 2}
    assert (s.tc_tsa, s.tc_bw) == ({0: "ets", 1: "ets", 2: "strict"}, {0: 50, 1: 50, 2: 0})
    assert s.dscp_prio == {48: 7, 26: 3}  # APP#2 is the RoCEv2 UDP port, not a DSCP entry
    assert s.tc_rate_limit_percent == {0: 100, 1: 100, 2: 100, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0}


def test_dcb_maxrate_and_dcbx() -> None:
    rates = parse_dcb_maxrate(text("dcb-maxrate-show-manpage.txt"))
    assert rates == {**dict.fromkeys(range(8), 25 * 10**9), 6: 100 * 10**9}
    assert parse_dcb_maxrate("tc-maxrate 0:1Gibit 1:125Mb") == {0: 2**30, 1: 10**9}
    assert parse_dcb_dcbx(text("dcb-dcbx-show-manpage.txt")) == frozenset({"host", "ieee"})


@pytest.mark.parametrize(
    ("parse", "bad", "line", "what"),
    [
        (parse_mlnx_qos, "hello\nworld\n", 1, "no mlnx_qos output read"),
        (parse_mlnx_qos, "PFC configuration:\n  enabled 0 0 0 1 0 0 0 0\n", 2, "before its 'priority' header"),
        (parse_lldptool, "IEEE 8021QAZ PFC TLV\n\t PFC enabled: 9\n", 2, "out of range"),
        (parse_niccli_qos, "IEEE 8021QAZ ETS Configuration TLV:\n  PRIO_MAP: 0:0 1\n", 2, "not index:value pairs"),
        (parse_dcb_maxrate, "tc-maxrate 0:fast\n", 1, "not a rate"),
        (parse_dcb_dcbx, "host turbo\n", 1, "unknown DCBX flag"),
    ],
)
def test_located_errors(parse: object, bad: str, line: int, what: str) -> None:
    with pytest.raises(TextParseError) as err:
        parse(bad, "f.txt")  # type: ignore[operator]
    assert err.value.line == line and what in str(err.value) and str(err.value).startswith(f"f.txt:{line}:")


def test_prompt_lines_are_not_output() -> None:
    raw = text("mlnx_qos-trust-pcp-no-pfc-centos-notes.txt")
    assert raw.splitlines()[1].startswith("root@centos12:")  # the capture starts with the shell prompt
    assert parse_mlnx_qos(raw) == parse_mlnx_qos("\n".join(raw.splitlines()[2:]))
