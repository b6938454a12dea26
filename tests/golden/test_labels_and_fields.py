"""Issue 26 part 3, one test per class of failure, over every reader where the class applies.

- **Label punctuation**: a counter label spelled with a slash, a hyphen, an underscore, parentheses or a plural
  (NX-OS ``0 CRC/FCS`` where another release prints ``0 CRC``) finds the same counter: every NOS text parser's label
  map is keyed by :func:`fabricd.readers.switch.tables.label_key`.
- **Field overwrite**: a later line with a similar name never replaces an earlier field. Every capture of every
  text role parses to rows with distinct identities, and a host reader given a key twice refuses it (naming both
  lines) rather than keeping the last; the full ``dcb ets show`` keeps ``pg-bw`` apart from ``tc-bw``.
- **iproute2 variants**: ``ets_cap`` and ``ets-cap``, ``pg-pfc`` and ``prio-pfc``, ``dcb buffer`` sizes as plain
  byte counts and with units, a trailing ``$`` prompt after ``rdma statistic``.

Real captures: tests/golden/readers/switch/cisco_nxos/show-int-crc-fcs-and-crc-nxosv-genieparser.txt (both NX-OS
spellings), tests/golden/readers/host_text/dcb-ets-show-full-pg-bw-netdev-patch.txt and
dcb-buffer-show-bytes-netdev-patch.txt (iproute2's own commit examples, from the netdev list).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.cisco_nxos import show as nxos
from fabricd.nos.sonic import show as sonic
from fabricd.readers.dcb_text import parse_dcb_buffer, parse_dcb_ets, parse_dcb_pfc
from fabricd.readers.rdma_stat import parse_rdma_statistic
from fabricd.readers.switch.model import SwitchCounters
from fabricd.readers.switch.tables import label_key
from fabricd.readers.textparse import TextParseError

GOLDEN = Path(__file__).parent
HOST = GOLDEN / "readers" / "host_text"


def capture(path: Path) -> str:
    return path.read_text().partition("\n")[2]


# -- label punctuation ---------------------------------------------------------------------------------------------

LABEL_MAPS: dict[str, dict[str, Any]] = {
    "cisco_nxos show interface": nxos._IF_FIELDS,
    "cisco_nxos show interface counters errors": nxos._ERR_COLUMNS,
    "cisco_nxos show queuing": nxos._EQ_FIELDS,
    "cisco_nxos show queuing (ingress)": nxos._INGRESS_REASON,
    "cisco_nxos show queuing pfc-queue": nxos._WD_STATS,
    "sonic show interfaces counters": sonic._PORTSTAT,
    "sonic show interfaces counters detailed": sonic._DETAILED_MAP,
}


def spellings(key: str) -> list[str]:
    """Ways releases print one label: title case, hyphens, slashes, underscores, a plural, parentheses."""
    words = key.split()
    return [
        " ".join(w.capitalize() for w in words),
        "-".join(words),
        "/".join(w.upper() for w in words),
        "_".join(words),
        " ".join(words) + ("s" if len(words[-1]) > 3 and not words[-1].endswith("s") else ""),
        " ".join([*words[:-1], f"({words[-1]})"]) if len(words) > 1 else f"({words[0]})",
    ]


@pytest.mark.parametrize("name", sorted(LABEL_MAPS))
def test_every_label_map_reads_every_spelling(name: str) -> None:
    labels = LABEL_MAPS[name]
    assert labels
    for key, meaning in labels.items():
        assert label_key(key) == key, f"{name}: {key!r} is not keyed by label_key"
        for spelled in spellings(key):
            assert labels.get(label_key(spelled)) == meaning, f"{name}: {spelled!r} does not find {key!r}"


def test_nxos_crc_fcs_gives_the_fcs_counter_in_both_spellings() -> None:
    """The real capture holds one port printing ``0 CRC/FCS`` and one printing ``0 CRC``; both give the FCS error
    counter (before the fix only ``CRC`` did), and ``output errors`` reads like ``output error``."""
    path = GOLDEN / "readers/switch/cisco_nxos/show-int-crc-fcs-and-crc-nxosv-genieparser.txt"
    got = nxos.parse_show_interface(capture(path))
    fcs = {i.interface: i.value for i in got.interfaces if (i.counter, i.reason) == ("errors", "fcs")}
    assert fcs == {"Ethernet2/2": 0, "Ethernet1/1": 0}
    text = capture(path).replace("20 CRC", "x").replace("0 runts  0 giants  0 CRC/FCS", "0 runts  0 giants  7 CRC/FCS")
    text = text.replace("0 output error ", "0 output errors ", 1)
    got = nxos.parse_show_interface(text)
    assert {i.interface: i.value for i in got.interfaces if i.reason == "fcs"}["Ethernet2/2"] == 7
    assert any(
        i.interface == "Ethernet2/2" and (i.direction, i.counter, i.reason) == ("tx", "errors", None)
        for i in got.interfaces
    )


def test_nxos_labels_with_hyphens_and_plurals() -> None:
    path = GOLDEN / "readers/switch/cisco_nxos/show-int-rx-tx-pause-n5k-mierdin-blog.txt"
    text = capture(path)
    want = nxos.parse_show_interface(text, "e1/47")
    for old, new in (
        ("Rx pause", "Rx-pause"),
        ("Tx pause", "Tx-pause"),
        ("input discard", "input discards"),
        ("0 CRC", "0 CRC/FCS"),
        ("no buffer", "no-buffer"),
    ):
        assert old in text
        text = text.replace(old, new)
    assert nxos.parse_show_interface(text, "e1/47") == want


# -- field overwrite -----------------------------------------------------------------------------------------------


def identities(counters: SwitchCounters) -> list[tuple[Any, ...]]:
    """The identity of every row: what labels a series; two rows of one identity overwrite each other."""
    out: list[tuple[Any, ...]] = []
    out += [("pfc", p.interface, p.direction, p.priority) for p in counters.pfc]
    out += [("queue", q.interface, q.index, q.kind) for q in counters.queues]
    out += [("pfcwd", w.interface, w.queue) for w in counters.pfcwd]
    out += [("pfcwd_config", c.interface) for c in counters.pfcwd_config]
    out += [("if", i.interface, i.direction, i.counter, i.reason) for i in counters.interfaces]
    out += [("drop", d.location, d.name, d.kind) for d in counters.drops]
    return out


def _text_cases() -> list[tuple[str, Path, Any]]:
    from test_framing import CASES, _segments, body

    out = []
    for role_id, path, _, fn in CASES:
        out.append((role_id, path, lambda p=path, f=fn: [f(s) for s in _segments(body(p)) if _ok(f, s)]))
    return out


def _ok(fn: Any, text: str) -> bool:
    try:
        fn(text)
    except TextParseError:
        return False
    return True


TEXT_CASES = _text_cases()


@pytest.mark.parametrize(("role_id", "path", "parse"), TEXT_CASES, ids=[f"{c[0]}:{c[1].name}" for c in TEXT_CASES])
def test_no_row_is_read_twice(role_id: str, path: Path, parse: Any) -> None:
    """Every capture of every switch role: no two rows share an identity (a similar later line would overwrite)."""
    for result in parse():
        if isinstance(result, SwitchCounters):
            dup = [k for k, n in Counter(identities(result)).items() if n > 1]
            assert not dup, f"{role_id} {path.name}: rows read twice {dup[:5]}"


DCB_CAPTURES = sorted(HOST.glob("dcb-*.txt"))


@pytest.mark.parametrize("path", DCB_CAPTURES, ids=lambda p: p.name)
def test_a_dcb_key_printed_twice_is_refused_with_both_lines(path: Path) -> None:
    """Every dcb capture: repeat its first key line at the end; the reader names the repeat and the first line
    (``dcb app`` lines add entries, nothing to overwrite: it is not among the parsers here)."""
    from test_framing import _segments

    parsers = (parse_dcb_pfc, parse_dcb_ets, parse_dcb_buffer)
    for segment in _segments(capture(path)):
        lines = segment.splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(("#", "$")))
        for parser in parsers:
            if not _ok(parser, segment):
                continue
            with pytest.raises(TextParseError, match=r"printed twice \(first on line"):
                parser("\n".join([*lines, lines[first]]))


def test_full_dcb_ets_keeps_pg_bw_apart_from_tc_bw() -> None:
    ets = parse_dcb_ets(capture(HOST / "dcb-ets-show-full-pg-bw-netdev-patch.txt"))
    assert ets.tc_bw == {0: 0, 1: 0, 2: 0, 3: 0, 4: 100, 5: 0, 6: 0, 7: 0}  # was replaced by pg-bw's zeros
    assert ets.pg_bw == dict.fromkeys(range(8), 0)
    assert ets.ets_cap == 8 and ets.willing is True and ets.cbs is False  # `ets_cap` spelled with an underscore
    assert ets.tc_tsa[4] == "ets" and ets.prio_tc == {0: 1, 1: 3, 2: 5, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0}
    assert ets.reco_tc_tsa[4] == "strict"


# -- iproute2 variants ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), [("ets_cap", "ets-cap"), ("pg-pfc", "prio-pfc")])
def test_key_spellings_of_iproute2_releases(a: str, b: str) -> None:
    for path in (HOST / "dcb-ets-show-full-pg-bw-netdev-patch.txt", HOST / "dcb-pfc-show-stats-mlxsw-netdev-patch.txt"):
        text = capture(path)
        if a not in text:
            continue
        parser = parse_dcb_ets if "ets" in path.name else parse_dcb_pfc
        assert parser(text) == parser(text.replace(a, b))
        assert parser(text) == parser(text.replace(a, a.replace("-", "_")))


def test_dcb_buffer_sizes_as_bytes_and_with_units() -> None:
    plain = parse_dcb_buffer(capture(HOST / "dcb-buffer-show-bytes-netdev-patch.txt"))
    assert plain.buffer_size_bytes == {0: 10000, 1: 0, 2: 0, 3: 70000, 4: 0, 5: 0, 6: 10000, 7: 0}
    assert plain.total_size_bytes == 221072 and plain.prio_buffer[3] == 3
    units = parse_dcb_buffer(capture(HOST / "dcb-buffer-show-manpage.txt"))
    assert units.buffer_size_bytes[0] == 10 * 1024 and units.buffer_size_bytes[6] == 1024**2
    with pytest.raises(TextParseError, match="buffer-size: size"):
        parse_dcb_buffer("buffer-size 0:ten")


@pytest.mark.parametrize("trailer", ["$", "$ ", "# ", "[user@host ~]$"])
def test_a_trailing_prompt_after_rdma_statistic(trailer: str) -> None:
    text = capture(HOST / "rdma-statistic-show-mlnx-4links.txt")
    assert parse_rdma_statistic(text + "\n" + trailer + "\n") == parse_rdma_statistic(text)


def test_errors_name_the_line_they_could_not_place() -> None:
    """Line numbers are those of the text given, prompt lines included."""
    text = "[user@host ~]$ rdma stat show\nlink mlx5_0/1 rx_write_requests 0\nnot a counter line\n"
    with pytest.raises(TextParseError) as err:
        parse_rdma_statistic(text)
    assert err.value.line == 3 and "rdma statistic show:3:" in str(err.value)
    with pytest.raises(TextParseError, match=re.escape("dcb ets show:3: unknown key")):
        parse_dcb_ets("# dcb ets show dev eth0\ntc-bw 0:100\nbogus-key 1\n")
