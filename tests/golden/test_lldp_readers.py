"""The LLDP neighbour readers over real captures (tests/golden/readers/lldp/, each with a first line naming its
source): every switch pack's parser and lldpd's JSON. Expected values sit next to each capture as JSON (regenerate
with ``--update-goldens`` and review); the key facts are also checked by eye below."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.arista_eos.lldp import parse_show_lldp_neighbors
from fabricd.nos.cisco_nxos.lldp import parse_show_lldp_neighbors_detail
from fabricd.nos.cumulus_nvue.lldp import parse_nv_show_interface_lldp_neighbor
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

PARSERS: dict[str, Callable[[str], list[LldpNeighbor]]] = {
    "sonic-show-lldp-table": parse_show_lldp_table,
    "arista_eos-": parse_show_lldp_neighbors,
    "cisco_nxos-": parse_show_lldp_neighbors_detail,
    "sonic-show-lldp-neighbors": parse_lldpctl_text,
    "cumulus_nvue-nv-show-interface-swp51-": lambda text: parse_nv_show_interface_lldp_neighbor(text, "swp51"),
    "host-lldpctl-": parse_lldpctl_json,
}


def _parser(path: Path) -> Callable[[str], list[LldpNeighbor]]:
    return next(p for prefix, p in PARSERS.items() if path.name.startswith(prefix))


@pytest.mark.parametrize("path", sorted(LLDP.glob("*.txt")), ids=lambda p: p.stem)
def test_lldp_golden(path: Path, update_goldens: bool) -> None:
    got: list[dict[str, Any]] = [n.as_dict() for n in _parser(path)(capture(path))]
    assert got, "parsed nothing"
    check(path.with_suffix(".json"), got, update_goldens)


def _read(name: str) -> list[LldpNeighbor]:
    path = LLDP / name
    return _parser(path)(capture(path))


def test_key_facts() -> None:
    sonic = _read("sonic-show-lldp-table-gns3-readme.txt")
    assert sonic[0] == LldpNeighbor("Ethernet0", "sonic3", "fortyGigE0/4", "Ethernet4")
    assert [n.local_port for n in sonic].count("eth0") == 3
    eos = _read("arista_eos-show-lldp-neighbors-detail-json-anta.txt")
    assert [(n.local_port, n.system_name, n.port_id) for n in eos] == [
        ("Ethernet1", "DC1-SPINE1", "Ethernet1"), ("Ethernet2", "DC1-SPINE2", "Ethernet2")]
    eos_text = _read("arista_eos-show-lldp-neighbors-detail-text-ntc.txt")
    assert [(n.local_port, n.system_name, n.port_id, n.chassis_id) for n in eos_text] == [
        ("Ethernet1", "spine2.company.com", "Ethernet1", "2cc2.6081.eaf9"),
        ("Ethernet2", "spine2.company.com", "Ethernet2", "2cc2.6081.eaf9")]
    nxos = _read("cisco_nxos-show-lldp-neighbors-detail-ntc.txt")
    assert [(n.local_port, n.system_name, n.port_id) for n in nxos] == [
        ("mgmt0", "Switch.cisco.com", "Fa1/0/9"), ("Ethernet1/1", "n9k2.company.com", "Ethernet1/1"),
        ("Ethernet1/2", "n9k2.company.com", "Ethernet1/2"), ("Ethernet2/2", "N3K.cisconxapi.com", "Ethernet1/49")]
    assert nxos[1].mgmt_address == "10.30.140.21"
    (sonic_detail,) = _read("sonic-show-lldp-neighbors-cisco8102-lab-guide.txt")
    assert sonic_detail == LldpNeighbor("Ethernet0", "pod13-spine4", "etp0", "Ethernet0", "00:a0:0d:00:00:04",
                                        "192.168.122.74")
    assert parse_show_lldp_table(capture(LLDP / "sonic-show-lldp-neighbors-cisco8102-lab-guide.txt")) == [sonic_detail]
    summary = _read("cisco_nxos-show-lldp-neighbors-multiline-ntc.txt")
    assert len(summary) == 15 and summary[3] == LldpNeighbor("Ethernet1/5", "fw1-clinical-partner", "ethernet1/9")
    nvue = _read("cumulus_nvue-nv-show-interface-swp51-lldp-neighbor-docs.txt")
    assert nvue == [LldpNeighbor("swp51", "spine01", "swp1", None, None, "10.10.10.101")]
    for name in ("host-lldpctl-json-lldpd-test.txt", "host-lldpctl-json0-lldpd-test.txt"):
        (host,) = _read(name)
        assert (host.local_port, host.system_name, host.port_id, host.port_descr) == (
            "eth0", "ns-2.example.com", "00:00:00:00:00:02", "eth1"), name


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
    header_only = ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
                   "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
                   "-----------  --------------  --------------  ------------  -----------------\n"
                   "--------------------------------------------------\nTotal entries displayed:  0\n")
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
    text = ('{"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "sw02", "neighborPort": "Ethernet2", '
            '"ttl": 120}]}')
    assert parse_show_lldp_neighbors(text) == [LldpNeighbor("Ethernet1", "sw02", "Ethernet2")]
