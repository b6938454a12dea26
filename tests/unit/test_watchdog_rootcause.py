"""Root cause on the lab fabric: a storm started at one host port is traced back to that port."""

from __future__ import annotations

from pathlib import Path

from fabricd.inventory import load_inventory
from fabricd.watchdog.rootcause import OriginKind, Topology, analyse
from fabricd.watchdog.types import ChannelKey, Direction, Scope

RX, TX = Direction.RX, Direction.TX


def nic(host: str, d: Direction) -> ChannelKey:
    return ChannelKey(Scope.NIC, host, "ens1f0np0", 3, d)


def sw(dev: str, port: str, d: Direction) -> ChannelKey:
    return ChannelKey(Scope.SWITCH, dev, port, 3, d)


def lab_topology(lab_inventory: Path) -> Topology:
    return Topology.from_fabric(load_inventory(lab_inventory).fabric)


def test_storm_from_gpu1_spreads_and_is_traced_back(lab_inventory: Path) -> None:
    topo = lab_topology(lab_inventory)
    # gpu1's NIC stalls and sends pause; pause spreads leaf1 -> spine1 -> leaf2 -> gpu3/gpu4 and to gpu2
    active = [
        nic("gpu1", TX),
        sw("leaf1-sonic", "Ethernet0", RX),
        sw("leaf1-sonic", "Ethernet48", TX),
        sw("leaf1-sonic", "Ethernet8", TX),
        sw("spine1", "Ethernet0", RX),
        sw("spine1", "Ethernet8", TX),
        sw("leaf2-eos", "Ethernet49", RX),
        sw("leaf2-eos", "Ethernet1", TX),
        sw("leaf2-eos", "Ethernet2", TX),
        nic("gpu3", RX),
        nic("gpu4", RX),
        nic("gpu2", RX),
    ]
    rc = analyse(active, topo)
    assert [(o.device, o.interface, o.kind, o.affected) for o in rc.origins] == [
        ("gpu1", "ens1f0np0", OriginKind.STALLED_RECEIVER, len(active))
    ]
    att = rc.per_storm[nic("gpu3", RX)]
    assert att.origin == "gpu1:ens1f0np0"
    assert att.path == (
        "gpu3:ens1f0np0",
        "leaf2-eos:Ethernet1",
        "leaf2-eos:Ethernet49",
        "spine1:Ethernet8",
        "spine1:Ethernet0",
        "leaf1-sonic:Ethernet48",
        "leaf1-sonic:Ethernet0",
        "gpu1:ens1f0np0",
    )


def test_unobserved_culprit_is_inferred_from_the_paused_switch_port(lab_inventory: Path) -> None:
    topo = lab_topology(lab_inventory)
    # only switches are watched: leaf3 port 1/2 receives pause from gpu6, and spreads it to gpu5's port
    active = [sw("leaf3-nxos", "Ethernet1/2", RX), sw("leaf3-nxos", "Ethernet1/1", TX)]
    rc = analyse(active, topo)
    assert rc.origins[0].port == "gpu6:ens1f0np0"
    assert rc.origins[0].kind == OriginKind.INFERRED_PEER and rc.origins[0].scope == Scope.NIC


def test_two_independent_trees_on_two_priorities(lab_inventory: Path) -> None:
    topo = lab_topology(lab_inventory)
    a = nic("gpu1", TX)
    b = ChannelKey(Scope.NIC, "gpu7", "ens1f0np0", 4, TX)
    b_sw = ChannelKey(Scope.SWITCH, "leaf4-nvue", "swp1", 4, RX)
    rc = analyse([a, b, b_sw], topo)
    assert {(o.priority, o.port) for o in rc.origins} == {(3, "gpu1:ens1f0np0"), (4, "gpu7:ens1f0np0")}
    assert rc.per_storm[b_sw].origin == "gpu7:ens1f0np0"


def test_cyclic_buffer_dependency_is_a_deadlock() -> None:
    # three switches in a ring, each port paused by the next: no root, a cycle
    topo = Topology(
        peers={
            ("s1", "p2"): ("s2", "p1"),
            ("s2", "p1"): ("s1", "p2"),
            ("s2", "p2"): ("s3", "p1"),
            ("s3", "p1"): ("s2", "p2"),
            ("s3", "p2"): ("s1", "p1"),
            ("s1", "p1"): ("s3", "p2"),
        },
        switches=frozenset({"s1", "s2", "s3"}),
    )
    active = [
        sw("s1", "p2", RX),
        sw("s2", "p1", TX),
        sw("s2", "p2", RX),
        sw("s3", "p1", TX),
        sw("s3", "p2", RX),
        sw("s1", "p1", TX),
    ]
    rc = analyse(active, topo)
    att = rc.per_storm[sw("s1", "p2", RX)]
    assert att.kind == OriginKind.DEADLOCK and att.origin is None
    assert set(att.path) == {"s1:p2", "s2:p1", "s2:p2", "s3:p1", "s3:p2", "s1:p1"}
    assert rc.origins == ()


def test_without_inventory_a_sending_nic_is_its_own_origin() -> None:
    rc = analyse([nic("localhost", TX), nic("localhost", RX)], Topology())
    assert rc.per_storm[nic("localhost", TX)].origin == "localhost:ens1f0np0"
    assert rc.per_storm[nic("localhost", RX)].kind == OriginKind.UNKNOWN
