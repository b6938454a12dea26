"""The LLDP neighbour readers over real captures (tests/golden/readers/lldp/, each with a first line naming its
source): every switch pack's parser and lldpd's JSON. Expected values sit next to each capture as JSON (regenerate
with ``--update-goldens`` and review); the key facts read by eye sit beside it in ``<capture>.facts.json``
(tests/golden/capture_links.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture_links import NO_PARSER, bound, check_rows, facts, facts_path, parsers_of, unlinked

from fabricd.nos.arista_eos.lldp import parse_show_lldp_neighbors
from fabricd.nos.sonic.lldp import parse_show_lldp_table
from fabricd.readers.lldp import (
    LldpNeighbor,
    canonical_port,
    is_mac,
    looks_empty,
    names_port,
    parse_lldpctl_json,
    parse_lldpctl_text,
    same_system,
)
from fabricd.readers.textparse import TextParseError

LLDP = Path(__file__).parent / "readers" / "lldp"


def capture(path: Path) -> str:
    """The capture without its first ``# source:`` line."""
    first, _, rest = path.read_text().partition("\n")
    assert first.startswith("# source:"), f"{path} must start with a '# source:' line"
    return rest


def check(expected_path: Path, data: Any, update: bool) -> None:
    got = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if update:
        expected_path.write_text(got)
        return
    assert expected_path.exists(), f"missing golden {expected_path}; run pytest --update-goldens and review it"
    assert json.loads(got) == json.loads(expected_path.read_text()), f"{expected_path} differs"


CAPTURES = sorted(LLDP.glob("*.txt"))
"""Every LLDP capture, each read by the parsers the parser-role registry links it to (tests/golden/capture_links.py:
each pack's ``lldp(...)`` role names its captures, fabricd/nos/roles.py the hosts'), with the ``interface`` its facts
file names; nothing here lists a platform."""


def test_every_lldp_capture_has_a_parser() -> None:
    assert len(CAPTURES) >= 9, "the walk finds the LLDP captures"
    missing = unlinked(CAPTURES)
    assert not missing, NO_PARSER.format(missing)


def _read(path: Path) -> list[LldpNeighbor]:
    """The neighbours every linked parser reads from the capture: they agree (SONiC's `show lldp neighbors` is
    lldpd's text, read by the SONiC pack's parser and the hosts' lldpctl one alike)."""
    text = capture(path)
    results = [bound(path, fn)(text) for fn in parsers_of(path)]
    assert results, NO_PARSER.format([path.name])
    for other in results[1:]:
        assert other == results[0], f"{path.name}: the linked parsers disagree: {results}"
    got: list[LldpNeighbor] = results[0]
    return got


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_lldp_golden(path: Path, update_goldens: bool) -> None:
    got: list[dict[str, Any]] = [n.as_dict() for n in _read(path)]
    assert got, "parsed nothing"
    check(path.with_suffix(".json"), got, update_goldens)


CHECKED = [p for p in CAPTURES if facts(p).get("checks")]


def test_key_facts_are_found() -> None:
    """The values read by eye are found (the walk is not vacuous): every LLDP capture carries some."""
    assert CHECKED == CAPTURES


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.stem)
def test_key_facts(path: Path) -> None:
    """Spot checks against the neighbours read by eye from each capture (the ``checks`` of its facts file)."""
    neighbours = [n.as_dict() for n in _read(path)]
    for n, spot in enumerate(facts(path)["checks"]):
        check_rows(neighbours, spot, f"{facts_path(path).name} check {n}")


def test_matching_rules() -> None:
    assert canonical_port("Eth1/49") == canonical_port("Ethernet1/49") == "ethernet1/49"
    assert canonical_port("Et1") == "ethernet1" and canonical_port("swp1") == "swp1"
    assert canonical_port('"Ethernet1"') == "ethernet1"
    assert is_mac("00:00:00:00:00:02") and is_mac("5087.89a1.d8d6") and not is_mac("Ethernet1")
    assert same_system("n9k2.company.com", "n9k2") and same_system("DC1-SPINE1", "dc1-spine1")
    assert not same_system("n9k21", "n9k2") and not same_system(None, "x")
    sonic = LldpNeighbor("Ethernet0", "sonic3", "fortyGigE0/4", "Ethernet4")
    assert names_port(sonic, "Ethernet4") and names_port(sonic, "fortyGigE0/4") and not names_port(sonic, "Ethernet0")


def test_empty_and_unknown_outputs() -> None:
    """No neighbour is a valid answer; an unknown shape is a located error (the first line with content, numbered
    in the text given), never mistaken for "no neighbours"."""
    header_only = (
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
        "-----------  --------------  --------------  ------------  -----------------\n"
        "--------------------------------------------------\nTotal entries displayed:  0\n"
    )
    assert parse_show_lldp_table(header_only) == []
    assert looks_empty(header_only) and looks_empty("")
    assert not looks_empty("% Invalid input detected")
    with pytest.raises(TextParseError, match=r"show lldp table:2: no LLDP neighbour read"):
        parse_show_lldp_table("admin@sonic:~$ show lldp table\n% Invalid input detected\n")
    assert parse_lldpctl_json('{"lldp": {}}') == []
    assert parse_lldpctl_text("-" * 40 + "\nLLDP neighbors:\n" + "-" * 40 + "\n") == []  # lldpd, nothing heard
    assert parse_show_lldp_neighbors('{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": []}}}') == []
    with pytest.raises(TextParseError, match=r":1: no LLDP neighbour read .*got 'not json'"):
        parse_show_lldp_neighbors("not json")
    with pytest.raises(TextParseError, match=r"lldpctl -f json:1: no LLDP neighbour read"):
        parse_lldpctl_json('{"interfaces": {}}')  # another tool's JSON
    with pytest.raises(TextParseError, match="lldpctl -f json:1: not JSON"):
        parse_lldpctl_json("Interface: eth0")


def test_eos_summary_form() -> None:
    """`show lldp neighbors | json` (the summary: a list) reads as the detail form does. Shape from Arista's eAPI
    docs as quoted in public collectors; no device capture of this form is in the repository."""
    text = (
        '{"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "sw02", "neighborPort": "Ethernet2", "ttl": 120}]}'
    )
    assert parse_show_lldp_neighbors(text) == [LldpNeighbor("Ethernet1", "sw02", "Ethernet2")]
