"""Host text readers on real captures (tests/golden/readers/host_text; SOURCES.md and each file's header):
``rdma statistic show`` (plain, wrapped, ``-p``, ``qp show``; ``-j`` unverified), ``dcb pfc|ets|buffer|app show``,
``show_gids``; and bad or truncated input gives a located TextParseError, never a traceback (hypothesis)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricd.readers.dcb_text import parse_dcb_app, parse_dcb_buffer, parse_dcb_ets, parse_dcb_pfc
from fabricd.readers.gids import parse_show_gids
from fabricd.readers.rdma_stat import parse_rdma_statistic, parse_rdma_statistic_json
from fabricd.readers.textparse import TextParseError, split_commands

HERE = Path(__file__).resolve().parent / "readers" / "host_text"


def text(name: str) -> str:
    t = (HERE / name).read_text()
    assert name.endswith(".json") or t.startswith("# source: "), name
    return t


def test_rdma_statistic_every_layout() -> None:
    wrapped = parse_rdma_statistic(text("rdma-stat-show-link-mlx5-wrapped.txt"))
    assert [(r.device, r.port) for r in wrapped] == [("mlx5_2", 1)]
    assert wrapped[0].counters["rx_write_requests"] == 8 and wrapped[0].counters["rx_icrc_encapsulated"] == 0
    assert len(wrapped[0].counters) == 23
    pretty = parse_rdma_statistic(text("rdma-stat-show-link-pretty.txt"))
    assert pretty[0].device == "rocep1s0f5" and len(pretty[0].counters) == 21
    assert pretty[0].normalised()[("cnp_sent", "tx")] == 0
    four = parse_rdma_statistic(text("rdma-statistic-show-mlnx-4links.txt"))
    assert [r.device for r in four] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert four[0].counters["out_of_buffer"] == 135 and four[0].normalised()[("out_of_buffer", "rx")] == 135


def test_rdma_statistic_qp_show() -> None:
    ceems = parse_rdma_statistic(text("rdma-statistic-qp-show-ceems.txt"))
    assert [(r.cntn, r.qp_type, r.pid, r.comm) for r in ceems] == [
        (4, "RC", 46231, "ib_write_bw"),
        (5, "RC", 46235, "ib_write_bw"),
    ]
    assert ceems[1].counters["rx_write_requests"] == 41988882 and len(ceems[1].lqpn) == 16
    both = parse_rdma_statistic(text("rdma-stat-qp-show-and-show-link.txt"))
    assert [(r.device, r.cntn, r.comm, r.lqpn) for r in both] == [
        ("mlx5_2", 5, "client.1", (178,)),
        ("rocep1s0f5", None, None, ()),
    ]


def test_rdma_statistic_json_matches_text() -> None:
    """The JSON shape is unverified (SOURCES.md); its values are the wrapped text capture's."""
    [j] = parse_rdma_statistic_json(text("rdma-statistic-show-json-unverified.json"))
    [t] = parse_rdma_statistic(text("rdma-stat-show-link-mlx5-wrapped.txt"))
    assert (j.device, j.port, j.counters) == (t.device, t.port, t.counters)


def test_dcb_captures() -> None:
    pfc = parse_dcb_pfc(text("dcb-pfc-show-manpage.txt"))
    assert (pfc.pfc_cap, pfc.macsec_bypass, pfc.delay, pfc.mask) == (8, False, 4096, 0b11000000)
    mlxsw = parse_dcb_pfc(text("dcb-pfc-show-stats-mlxsw-netdev-patch.txt"))
    assert mlxsw.mask == 0b10000010 and mlxsw.requests[1] == 217 and mlxsw.indications[7] == 18
    ets = parse_dcb_ets(text("dcb-ets-show-manpage.txt"))
    assert ets.tc_bw[2] == 34 and ets.tc_tsa[3] == "strict" and ets.prio_tc[7] == 7
    buf = parse_dcb_buffer(text("dcb-buffer-show-manpage.txt"))
    assert buf.buffer_size_bytes[6] == 1024 * 1024 and buf.total_size_bytes == 1222 * 1024
    app = parse_dcb_app(text("dcb-app-show-dscp-prio-manpage.txt"))
    assert app.dscp_prio[:4] == [(0, 0), (24, 2), (24, 3), (48, 6)] and app.dscp_prio[4:] == app.dscp_prio[:4]


def test_dcb_bundle_from_a_connectx3_host() -> None:
    parts = dict(split_commands(text("dcb-pfc-app-show-mlx4-cx3-readme.txt")))
    assert parse_dcb_pfc(parts["dcb pfc show dev ens6"]).mask == 1 << 3
    assert parse_dcb_app(parts["dcb app show dev ens6"]).dscp_prio == [(26, 3)]  # AF31


def test_show_gids_captures() -> None:
    rows = parse_show_gids(text("show_gids-mlx5_0-rdma0.txt"))
    assert [(r.index, r.version, r.ipv4) for r in rows] == [
        (0, "v1", None),
        (1, "v2", None),
        (2, "v1", "192.168.211.242"),
        (3, "v2", "192.168.211.242"),
    ]
    mixed = parse_show_gids(text("show_gids-mlx5-bond-and-hiroce-notes.txt"))
    assert [r.device for r in mixed] == ["hrn3_bond_0"] * 2 + ["mlx5_bond_0"] * 2
    assert mixed[1].ipv4 == "27.105.180.3" and mixed[1].type == "RoCE v2"
    ib = parse_show_gids(text("show_gids-ib-port-no-netdev-readme.txt"))
    assert ib[2].device == "mlx5_1" and ib[2].netdev is None


BAD: list[tuple[Callable[[str], object], str, str]] = [
    (parse_rdma_statistic, "link mlx5_0/1 rx_write_requests 1 out_of_buffer\n", "has no value"),
    (parse_rdma_statistic, "link mlx5_0/1 rx_write_requests N/A\n", "not a number"),
    (parse_rdma_statistic, "rx_write_requests 1\n", "before the first record"),
    (parse_rdma_statistic, "error: no such device\n", "before the first record"),
    (parse_rdma_statistic, "\n", "no 'link"),
    (parse_rdma_statistic_json, '[{"ifname": "mlx5_0", "port": 1, "x": "a"}]', "counter x"),
    (parse_rdma_statistic_json, '[{"ifname": "mlx5_0", "port": 1', "not JSON"),
    (parse_dcb_pfc, "pfc-cap 8 macsec-bypass off delay 0\n", "no prio-pfc"),
    (parse_dcb_pfc, "prio-pfc 0:off 1:maybe\n", "on or off"),
    (parse_dcb_pfc, "prio-pfc 0:off 9:on\n", "out of range"),
    (parse_dcb_ets, "tc-bw 0:33 1:200\n", "bandwidth"),
    (parse_dcb_ets, "tc-tsa 0:fair\n", "unknown TSA"),
    (parse_dcb_buffer, "buffer-size 0:10Kbit\n", "size"),
    (parse_dcb_app, "dscp-prio XX1:3\n", "DSCP"),
    (parse_dcb_pfc, 'Error: Object "pfc" is unknown\n', "unknown key"),
    (
        parse_show_gids,
        "DEV PORT INDEX GID IPv4 VER DEV\nmlx5_0 1 0 fe80:0000:0000:0000:0ac0:ebff:fe21:03da v1 rdma0\n"
        "n_gids_found=4\n",
        "truncated",
    ),
    (parse_show_gids, "mlx5_0 1 0 fe80:0000:0000:0000:0ac0:ebff:fe21:03da v1 rdma0\n", "before the header"),
]


@pytest.mark.parametrize(("parse", "bad", "what"), BAD, ids=[f"{p.__name__}-{i}" for i, (p, _, _) in enumerate(BAD)])
def test_bad_input_is_a_located_error(parse: Callable[[str], object], bad: str, what: str) -> None:
    with pytest.raises(TextParseError) as info:
        parse(bad)
    err = info.value
    assert what in err.render() and err.line >= 1 and err.expected
    assert f":{err.line}: " in err.render()


def test_truncated_captures_fail_located() -> None:
    """Cut every capture in the middle of a line: either still a valid parse of what is there, or located."""
    for path in sorted(HERE.glob("*.txt")):
        t = path.read_text()
        parser = _parser_for(path.name)
        if parser is None:
            continue
        for cut in range(len(t) // 3, len(t), max(1, len(t) // 7)):
            try:
                parser(t[:cut])
            except TextParseError as exc:
                assert exc.line >= 1


def _parser_for(name: str) -> Callable[[str], object] | None:
    if name.startswith("rdma-stat"):
        return parse_rdma_statistic
    if name.startswith("show_gids"):
        return parse_show_gids
    if name.startswith("dcb-pfc-show"):
        return parse_dcb_pfc
    if name.startswith("dcb-ets"):
        return parse_dcb_ets
    if name.startswith("dcb-buffer"):
        return parse_dcb_buffer
    if name.startswith("dcb-app"):
        return parse_dcb_app
    return None


CAPTURES = sorted(HERE.glob("*.txt"))
PARSERS: list[Callable[[str], object]] = [
    parse_rdma_statistic,
    parse_rdma_statistic_json,
    parse_dcb_pfc,
    parse_dcb_ets,
    parse_dcb_buffer,
    parse_dcb_app,
    parse_show_gids,
]


@st.composite
def damaged(draw: st.DrawFn) -> str:
    t = draw(st.sampled_from(CAPTURES)).read_text()
    lines = t.splitlines()
    op = draw(st.sampled_from(["cut", "insert", "drop", "swap", "raw"]))
    if op == "cut":
        return t[: draw(st.integers(0, len(t)))]
    if op == "insert" and lines:
        i = draw(st.integers(0, len(lines)))
        lines.insert(i, draw(st.text(max_size=40)))
    elif op == "drop" and lines:
        del lines[draw(st.integers(0, len(lines) - 1))]
    elif op == "swap" and len(lines) > 1:
        i = draw(st.integers(0, len(lines) - 2))
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif op == "raw":
        return draw(st.text(max_size=200))
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged(), st.sampled_from(PARSERS))
def test_fuzz_never_a_traceback(t: str, parse: Callable[[str], object]) -> None:
    try:
        parse(t)
    except TextParseError as exc:
        assert exc.line >= 1 and exc.render()
