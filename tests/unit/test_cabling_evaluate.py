"""The cabling audit's evaluation (fabricd/audit/cabling.py) on inventory/lab: what each switch hears is built from a
cable map (the inventory's, then miswired by hand), the way lldpd and the NOSes advertise (a switch: its port name;
a host: its MAC as the port id and the netdev as the description)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.audit.cabling import (
    DeviceLldp,
    End,
    evaluate,
    intended_cables,
    read_host_lldp,
    unreadable,
)
from fabricd.audit.report import AuditReport, Status
from fabricd.cli.report import render_junit
from fabricd.inventory import load_inventory
from fabricd.model import Fabric
from fabricd.readers.lldp import LldpNeighbor

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return load_inventory(REPO / "inventory" / "lab").fabric


def heard(fabric: Fabric, cables: dict[End, End], skip: set[str] = frozenset()) -> list[DeviceLldp]:  # type: ignore[assignment]
    switches = {s.name for s in fabric.switches}
    out = []
    for sw in fabric.switches:
        if sw.name in skip:
            continue
        nbs = []
        for end, far in sorted(cables.items()):
            if end.device != sw.name:
                continue
            if far.device in switches:
                nbs.append(LldpNeighbor(end.port, f"{far.device}.example.net", far.port, far.port))
            else:
                nbs.append(LldpNeighbor(end.port, far.device, "02:00:00:00:00:01", far.port))
        out.append(DeviceLldp(sw.name, "test", nbs))
    return out


def swap(cables: dict[End, End], device: str, p: str, q: str) -> dict[End, End]:
    out = dict(cables)
    a, b = End(device, p), End(device, q)
    fa, fb = out[a], out[b]
    out[a], out[fb], out[b], out[fa] = fb, a, fa, b
    return out


def fails(report: AuditReport) -> dict[str, list[str]]:
    return {c.code: [f.render() for f in c.findings] for c in report.checks if c.status == Status.FAIL}


def test_intended_cables_cover_links_and_nic_peers(fabric: Fabric) -> None:
    cables = intended_cables(fabric)
    assert cables[End("leaf1-sonic", "Ethernet48")] == End("spine1", "Ethernet0")
    assert cables[End("spine1", "Ethernet0")] == End("leaf1-sonic", "Ethernet48")
    assert cables[End("leaf1-sonic", "Ethernet0")] == End("gpu1", "ens1f0np0")
    assert len(cables) == 2 * (len(fabric.links) + sum(len(h.nics) for h in fabric.hosts))


def test_clean(fabric: Fabric) -> None:
    report = evaluate(fabric, heard(fabric, intended_cables(fabric)))
    assert report.compliant, fails(report)
    assert [c.status for c in report.checks] == [Status.PASS] * 5


def test_host_cables_swapped_on_one_leaf_are_one_finding_with_the_fix(fabric: Fabric) -> None:
    report = evaluate(fabric, heard(fabric, swap(intended_cables(fabric), "leaf1-sonic", "Ethernet0", "Ethernet8")))
    assert set(fails(report)) == {"CAB-MISWIRE"}
    (finding,) = next(c for c in report.checks if c.code == "CAB-MISWIRE").findings
    assert "leaf1-sonic Ethernet0 reaches gpu2 ens1f0np0 (intended gpu1 ens1f0np0)" in finding.message
    assert "leaf1-sonic Ethernet8 reaches gpu1 ens1f0np0 (intended gpu2 ens1f0np0)" in finding.message
    assert finding.hint.startswith("swap the cables in leaf1-sonic Ethernet0 and Ethernet8")


def test_uplinks_swapped_are_one_finding_confirmed_from_both_spines(fabric: Fabric) -> None:
    report = evaluate(fabric, heard(fabric, swap(intended_cables(fabric), "leaf1-sonic", "Ethernet48", "Ethernet56")))
    (finding,) = [f for c in report.checks for f in c.findings]
    assert finding.code == "CAB-MISWIRE"
    assert "confirmed from spine1 Ethernet0 and spine2 swp1" in finding.message
    assert finding.got == {"leaf1-sonic Ethernet48": "spine2 swp1", "leaf1-sonic Ethernet56": "spine1 Ethernet0"}


def test_a_cable_moved_to_another_switch_names_where_it_goes(fabric: Fabric) -> None:
    cables = intended_cables(fabric)
    # gpu1's cable went into leaf2-eos Ethernet1 (gpu3's port); gpu3's cable is unplugged.
    cables[End("leaf2-eos", "Ethernet1")] = End("gpu1", "ens1f0np0")
    del cables[End("leaf1-sonic", "Ethernet0")]
    got = fails(evaluate(fabric, heard(fabric, cables)))
    assert set(got) == {"CAB-MISWIRE", "CAB-MISSING"}
    (miswire,) = got["CAB-MISWIRE"]
    assert "leaf2-eos Ethernet1 reaches gpu1 ens1f0np0; the inventory cables it to gpu3 ens1f0np0" in miswire
    assert "move the cable in leaf2-eos Ethernet1 (it reaches gpu1 ens1f0np0) to leaf1-sonic Ethernet0" in miswire
    (missing,) = got["CAB-MISSING"]
    assert missing.startswith("CAB-MISSING leaf1-sonic Ethernet0")


def test_one_end_silent_is_missing_at_that_end(fabric: Fabric) -> None:
    cables = intended_cables(fabric)
    observed = heard(fabric, cables)
    for d in observed:
        if d.device == "spine2":
            d.neighbors = [n for n in d.neighbors if n.local_port != "swp3"]
    (missing,) = fails(evaluate(fabric, observed))["CAB-MISSING"]
    assert "spine2 swp3 hears no LLDP neighbour" in missing
    assert "leaf3-nxos Ethernet1/50 does hear spine2 swp3" in missing


def test_unexpected_and_foreign_neighbours(fabric: Fabric) -> None:
    observed = heard(fabric, intended_cables(fabric))
    leaf4 = next(d for d in observed if d.device == "leaf4-nvue")
    leaf4.neighbors.append(LldpNeighbor("swp9", "leaf2-eos", "Ethernet7", "Ethernet7"))  # not an inventory port
    leaf4.neighbors.append(LldpNeighbor("eth0", "oob-switch", "Gi0/1"))  # management network: ignored
    leaf1 = next(d for d in observed if d.device == "leaf1-sonic")
    leaf1.neighbors = [
        n if n.local_port != "Ethernet8" else LldpNeighbor("Ethernet8", "rack9-pdu", "p3") for n in leaf1.neighbors
    ]
    got = fails(evaluate(fabric, observed))
    assert got["CAB-UNEXPECTED"] == [
        "CAB-UNEXPECTED leaf4-nvue swp9 lldp: leaf4-nvue swp9 hears leaf2-eos Ethernet7; the inventory cables nothing "
        "to leaf4-nvue swp9 (expected nothing (unset or missing), got leaf2-eos Ethernet7); unplug it, or add the "
        "cable to the inventory (`links:` or the NIC's `peer`)"
    ]
    assert "reaches rack9-pdu p3, which is not in the inventory" in got["CAB-MISWIRE"][0]


def test_unreadable_switch_is_a_read_finding_and_its_cables_are_checked_from_the_far_end(fabric: Fabric) -> None:
    observed = heard(
        fabric, swap(intended_cables(fabric), "leaf1-sonic", "Ethernet48", "Ethernet56"), skip={"leaf1-sonic"}
    )
    observed.append(DeviceLldp("leaf1-sonic", "x at [127.0.0.1]:1", error="connection refused"))
    report = evaluate(fabric, observed)
    assert [f.object for f in unreadable(report)] == ["leaf1-sonic"]
    miswire = [f.message for f in next(c for c in report.checks if c.code == "CAB-MISWIRE").findings]
    assert any("spine1 Ethernet0 reaches leaf1-sonic Ethernet56" in m for m in miswire), miswire
    assert 'failures="2"' in render_junit([report])


def test_host_lldp_files(fabric: Fabric, tmp_path: Path) -> None:
    (tmp_path / "gpu1.json").write_text(
        '{"lldp": {"interface": {"ens1f0np0": {"chassis": {"leaf1-sonic": {"id": {"type": "mac", "value": '
        '"02:00:00:00:00:09"}}}, "port": {"id": {"type": "ifname", "value": "Ethernet8"}}}}}}'
    )
    (tmp_path / "gpu2.json").write_text("Interface: eth0")
    gpu1 = read_host_lldp("gpu1", tmp_path / "gpu1.json")
    gpu2 = read_host_lldp("gpu2", tmp_path / "gpu2.json")
    assert gpu2.error is not None and "neither `lldpctl -f json` nor lldpctl's text" in gpu2.error
    report = evaluate(fabric, [*heard(fabric, intended_cables(fabric)), gpu1], hosts_read=True)
    (miswire,) = fails(report)["CAB-MISWIRE"]
    assert "gpu1 ens1f0np0 reaches leaf1-sonic Ethernet8; the inventory cables it to leaf1-sonic Ethernet0" in miswire


def test_port_spellings_and_fqdns_match(fabric: Fabric) -> None:
    """NX-OS prints `Eth1/49` where the inventory says `Ethernet1/49`, and neighbours send FQDNs: still clean."""
    observed = heard(fabric, intended_cables(fabric))
    for d in observed:
        if d.device == "leaf3-nxos":
            d.neighbors = [
                LldpNeighbor(n.local_port.replace("Ethernet", "Eth"), n.system_name, n.port_id, n.port_descr)
                for n in d.neighbors
            ]
    assert evaluate(fabric, observed).compliant


def test_a_swap_is_one_finding_whatever_the_names_sort_to(fabric: Fabric) -> None:
    """The far ends (spines) sort before the swapping leaf here: still one swap, not moves."""

    def z(text: str) -> str:
        return text.replace("leaf2-eos", "zleaf")

    renamed = fabric.model_copy(
        update={
            "switches": [s.model_copy(update={"name": z(s.name)}) for s in fabric.switches],
            "links": [lk.model_copy(update={"a": z(lk.a), "b": z(lk.b)}) for lk in fabric.links],
            "hosts": [
                h.model_copy(
                    update={"nics": [n.model_copy(update={"peer": z(n.peer) if n.peer else None}) for n in h.nics]}
                )
                for h in fabric.hosts
            ],
        }
    )
    report = evaluate(renamed, heard(renamed, swap(intended_cables(renamed), "zleaf", "Ethernet49", "Ethernet50")))
    (finding,) = [f for c in report.checks for f in c.findings]
    assert finding.object == "zleaf Ethernet49,Ethernet50" and "confirmed from spine1 Ethernet8" in finding.message


def test_parse_lldp_tells_pasted_empty_refused_and_unknown_outputs_apart(fabric: Fabric) -> None:
    """The switch side through the pack's reader (framed): a capture pasted with its prompt reads its neighbours;
    an empty table is no neighbour and no finding; a CLI refusal of the command is a read error; any other output
    that names no neighbour (the reader's located TextParseError) is listed as unparsed (CAB-PARSE)."""
    from fabricd.audit.cabling import lldp_commands, parse_lldp

    sw = next(s for s in fabric.switches if s.platform.value == "sonic")
    (command, _), *_ = lldp_commands(sw)
    table = (
        "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
        "-----------  --------------  --------------  ------------  -----------------\n"
    )
    pasted = parse_lldp(
        sw,
        {
            command: f"admin@sonic:~$ {command}\r\n"
            f"{table}Ethernet0    spine1          Ethernet4       R             Ethernet4\r\n"
            "admin@sonic:~$\r\n"
        },
    )
    assert pasted.neighbors == [LldpNeighbor("Ethernet0", "spine1", "Ethernet4", "Ethernet4")]
    assert not pasted.unparsed and pasted.error is None
    empty = parse_lldp(sw, {command: f"admin@sonic:~$ {command}\n{table}Total entries displayed:  0\n"})
    assert empty.neighbors == [] and not empty.unparsed and empty.error is None
    refused = parse_lldp(sw, {command: 'Error: No such command "lldp".\n'})
    assert refused.error is not None and "refused" in refused.error
    unknown = parse_lldp(sw, {command: "Chassis 1 fan 2 speed 8000 rpm\n"})
    assert unknown.unparsed == [command] and unknown.neighbors == [] and unknown.error is None
