"""Switch intent decisions (fabricd.intent.switch, units, watchdog_timers) on the lab fabric and edited policies."""

from __future__ import annotations

import pytest

from fabricd.intent.headroom import headroom
from fabricd.intent.units import bytes_to_kbytes, ms_to_seconds, range_list, split_percent
from fabricd.model import Fabric, Speed, Watchdog, WatchdogAction
from fabricd.nos.arista_eos.intent import EosSwitchIntent
from fabricd.nos.arista_eos.watchdog import eos_watchdog
from fabricd.nos.cisco_nxos.intent import NxosSwitchIntent
from fabricd.nos.cisco_nxos.watchdog import nxos_watchdog
from fabricd.nos.cumulus_nvue.intent import NvueSwitchIntent
from fabricd.nos.cumulus_nvue.watchdog import nvue_watchdog
from fabricd.nos.registry import SwitchIntentBuilder, switch_intent, switch_intents
from fabricd.nos.sonic.intent import SonicSwitchIntent
from fabricd.nos.sonic.watchdog import sonic_watchdog


def _edit(fabric: Fabric, **policy: object) -> Fabric:
    data = fabric.model_dump(mode="json")
    for dotted, value in policy.items():
        node = data["policy"]
        *head, last = dotted.split("__")
        for key in head:
            node = node[key]
        node[last] = value
    return Fabric.model_validate(data)


class _Notes(list[tuple[str, str, str, str]]):
    def __call__(self, field: str, intended: str, rendered: str, reason: str) -> None:
        self.append((field, intended, rendered, reason))

    @property
    def fields(self) -> list[str]:
        return [n[0] for n in self]


# --- units -----------------------------------------------------------------------------------------------------


def test_units() -> None:
    assert bytes_to_kbytes(150_000) == (150, True)
    assert bytes_to_kbytes(1_048_576) == (1049, False)  # SONiC's 1 MiB is not whole kbytes
    assert bytes_to_kbytes(100_499) == (100, False)
    assert bytes_to_kbytes(100_500) == (101, False)  # half up
    assert [ms_to_seconds(ms) for ms in (200, 1000, 50, 1110, 5)] == ["0.2", "1", "0.05", "1.11", "0.005"]
    assert range_list([26, 24, 25, 27, 31, 48]) == "24-27,31,48"
    assert split_percent({0: 50, 3: 50}) == {0: 50, 3: 50}
    assert split_percent({0: 60, 3: 60}) == {0: 50, 3: 50}
    assert split_percent({0: 1, 3: 1, 4: 1}) == {0: 34, 3: 33, 4: 33}
    assert sum(split_percent({0: 7, 1: 13, 2: 29}).values()) == 100


# --- watchdog timers -------------------------------------------------------------------------------------------


def test_watchdog_standard_recipe_is_exact_where_the_platform_can_say_it() -> None:
    wd = Watchdog(detection_ms=200, restoration_ms=200, poll_ms=100)
    notes = _Notes()
    assert sonic_watchdog(wd, notes).model_dump() == {
        "action": "drop",
        "detection_ms": 200,
        "restoration_ms": 200,
        "poll_ms": 100,
    }
    e = eos_watchdog(wd, notes)
    assert (e.timeout_s, e.recovery_s, e.polling_s, e.action) == ("0.2", "0.2", "0.1", "drop")
    n = nxos_watchdog(wd, notes)
    assert (n.poll_ms, n.interval_ms, n.interface_multiplier, n.fixed_restore_multiplier) == (100, None, 2, 2)
    assert not n.disable_action
    assert notes == []
    v = nvue_watchdog(wd, notes)
    assert (v.polling_interval_ms, v.robustness) == (100, 2)
    assert notes.fields == ["watchdog.restoration_ms"]  # Cumulus restores after one clean poll


def test_watchdog_rounding_and_ranges_are_warned() -> None:
    wd = Watchdog(detection_ms=250, restoration_ms=70_000, poll_ms=2000, action=WatchdogAction.FORWARD)
    notes = _Notes()
    s = sonic_watchdog(wd, notes)
    assert (s.detection_ms, s.restoration_ms, s.poll_ms, s.action) == (250, 60_000, 250, "forward")
    assert notes.fields == ["watchdog.restoration_ms", "watchdog.poll_ms"]

    notes = _Notes()
    n = nxos_watchdog(wd, notes)
    # poll 2000 clamps to the 1000 ms maximum; 250 ms -> 1 x 1000 ms (the least); 70 s -> 70 x 1000 ms
    assert (n.poll_ms, n.interval_ms, n.interface_multiplier, n.fixed_restore_multiplier) == (1000, 1000, 1, 70)
    assert notes.fields == ["watchdog.action", "watchdog.poll_ms", "watchdog.interface_multiplier"]
    assert notes[2][2] == "1 x 1000 ms = 1000 ms"

    notes = _Notes()
    e = eos_watchdog(wd, notes)
    assert e.action == "drop" and e.timeout_s == "0.25" and e.recovery_s == "60"  # forward: validate refuses it
    assert e.polling_s == "0.125"  # at most half the smaller timer
    assert notes.fields == ["watchdog.action", "watchdog.recovery_s", "watchdog.polling_s"]

    notes = _Notes()
    v = nvue_watchdog(Watchdog(detection_ms=250, restoration_ms=100, poll_ms=100), notes)
    assert (v.polling_interval_ms, v.robustness) == (100, 3)
    assert notes.fields == ["watchdog.robustness"]


# --- the lab fabric ---------------------------------------------------------------------------------------------


def test_lab_intents_have_one_class_per_platform(lab_fabric: Fabric) -> None:
    kinds = {s.name: type(s) for s in switch_intents(lab_fabric)}
    assert kinds["leaf1-sonic"] is SonicSwitchIntent and kinds["leaf2-eos"] is EosSwitchIntent
    assert kinds["leaf3-nxos"] is NxosSwitchIntent and kinds["leaf4-nvue"] is NvueSwitchIntent
    with pytest.raises(KeyError):
        switch_intent(lab_fabric, "nope")


def test_lab_queues_lossless_ecn_and_cnp(lab_fabric: Fabric) -> None:
    sw = switch_intent(lab_fabric, "leaf2-eos")
    q = {x.id: x for x in sw.queues}
    assert sw.lossless_priorities == [3]
    assert q[3].lossless and q[3].dwrr and q[3].weight_percent == 50 and q[3].ecn is not None
    assert (q[3].ecn.min_threshold, q[3].ecn.max_threshold, q[3].ecn.unit) == (150, 1500, "kbytes")
    assert q[6].strict and not q[6].lossless and q[6].ecn is None and q[6].priorities == [6]
    assert q[0].dwrr and q[0].priorities == [0, 1, 2, 4, 5, 7]
    assert [x.id for x in sw.queues if x.round_robin] == [0, 1, 2, 3]  # unused 1, 2 sit below DWRR queue 3
    nvue = switch_intent(lab_fabric, "leaf4-nvue")
    nq = {x.id: x for x in nvue.queues}
    assert nq[3].ecn is not None and (nq[3].ecn.min_threshold, nq[3].ecn.unit) == (150_000, "bytes")


def test_lab_headroom_uses_the_role_cable_and_the_calculator(lab_fabric: Fabric) -> None:
    sw = switch_intent(lab_fabric, "leaf1-sonic")
    ports = {p.name: p for p in sw.ports}
    host, uplink = ports["Ethernet0"], ports["Ethernet48"]
    assert host.headroom is not None and uplink.headroom is not None
    assert host.headroom.cable_m == 5.0 and uplink.headroom.cable_m == 40.0
    expected = headroom(Speed.G400, 40.0, 9216, xon_bytes=lab_fabric.policy.buffers.xon_bytes)
    assert (uplink.headroom.xoff_bytes, uplink.headroom.size_bytes) == (expected.xoff_bytes, expected.size_bytes)
    assert host.tagged_vlans == [100] and host.access_vlan is None  # the NIC sends VLAN 100 tagged
    assert uplink.tagged_vlans == [] and uplink.watchdog and uplink.pfc


def test_cable_overrides_link_then_nic_then_role(lab_fabric: Fabric) -> None:
    data = lab_fabric.model_dump(mode="json")
    data["links"][0]["cable_m"] = 120.0  # leaf1-sonic:Ethernet48 <-> spine1:Ethernet0
    data["hosts"][0]["nics"][0]["cable_m"] = 2.0  # gpu1 -> leaf1-sonic:Ethernet0
    fabric = Fabric.model_validate(data)
    b = SwitchIntentBuilder(fabric)
    leaf = fabric.switch("leaf1-sonic")
    spine = fabric.switch("spine1")
    assert leaf is not None and spine is not None
    port = {p.name: p for p in leaf.ports}
    assert b.cable_m(leaf, port["Ethernet48"]) == 120.0
    assert b.cable_m(spine, spine.ports[0]) == 120.0  # both ends of the link
    assert b.cable_m(leaf, port["Ethernet0"]) == 2.0
    assert b.cable_m(leaf, port["Ethernet8"]) == 5.0  # role table


def test_lossy_transport_has_no_pfc_watchdog_or_headroom_but_keeps_ecn(lab_fabric: Fabric) -> None:
    fabric = _edit(lab_fabric, transport="roce_v2_lossy")
    for sw in switch_intents(fabric):
        assert not sw.lossless and sw.lossless_priorities == []
        assert sw.watchdog is None
        assert all(p.headroom is None and not p.pfc and not p.watchdog for p in sw.ports)
        assert next(q for q in sw.queues if q.id == 3).ecn is not None
    sonic = switch_intent(fabric, "leaf1-sonic")
    assert isinstance(sonic, SonicSwitchIntent)
    db = sonic.config_db
    assert db.PFC_WD is None and db.BUFFER_PG is None and db.WRED_PROFILE is not None
    assert all("pfc_enable" not in row for row in db.PORT_QOS_MAP.values())


def test_ecn_profile_by_class_list_and_unmapped_dscp(lab_fabric: Fabric) -> None:
    classes = [c.model_dump(mode="json") for c in lab_fabric.policy.qos.traffic_classes]
    classes[1]["ecn_profile"] = None  # TC3 now takes ECN because the profile lists it
    fabric = _edit(lab_fabric, qos__traffic_classes=classes, qos__dscp_to_priority={26: 3, 48: 6, 46: 5})
    sw = switch_intent(fabric, "leaf1-sonic")
    assert isinstance(sw, SonicSwitchIntent)
    assert next(q for q in sw.queues if q.id == 3).ecn is not None
    dscp = (sw.config_db.DSCP_TO_TC_MAP or {})["FABRICD"]
    assert dscp["46"] == "5" and dscp["10"] == "0" and len(dscp) == 64


def test_nvue_pools_need_buffer_figures(lab_fabric: Fabric) -> None:
    sw = switch_intent(lab_fabric, "leaf4-nvue")
    assert isinstance(sw, NvueSwitchIntent)
    assert (sw.lossless_pool_percent, sw.lossy_pool_percent) == (20, 80)  # 32 MiB of 160 MiB
    data = lab_fabric.model_dump(mode="json")
    for s in data["switches"]:
        s["buffer"] = {}
    bare = switch_intent(Fabric.model_validate(data), "leaf4-nvue")
    assert isinstance(bare, NvueSwitchIntent)
    assert bare.lossless_pool_percent is None
    assert "lossless_pool_percent" in [w.field for w in bare.warnings]


def test_a_port_in_a_tagged_and_an_untagged_vlan_is_tagged_with_a_warning(lab_fabric: Fabric) -> None:
    vlans = [v.model_dump(mode="json") for v in lab_fabric.policy.vlans]
    vlans.append({"id": 200, "name": "storage", "subnet": "10.200.0.0/16", "members": ["leaf2-eos:Ethernet1"]})
    data = lab_fabric.model_dump(mode="json")
    data["policy"]["vlans"] = vlans
    data["hosts"][2]["nics"][0]["vlan"] = None  # gpu3 on leaf2-eos:Ethernet1 sends untagged
    sw = switch_intent(Fabric.model_validate(data), "leaf2-eos")
    port = next(p for p in sw.ports if p.name == "Ethernet1")
    assert port.access_vlan is None and port.tagged_vlans == [100, 200] and port.trunk_vlans == "100,200"
    assert "ports[Ethernet1].access_vlan" in [w.field for w in sw.warnings]


def test_nxos_watchdog_renders_the_inventory_poll_and_the_alert_mode() -> None:
    """NX-OS configures its watchdog interval (NDFC pfc_watch_int 101-1000 ms, default 100) and has a syslog-only
    mode (DME ipqosPriorFlowCtrlWd.disableAction): the poll is rendered, alert keeps its meaning."""
    notes = _Notes()
    n = nxos_watchdog(Watchdog(detection_ms=600, restoration_ms=3000, poll_ms=300, action=WatchdogAction.ALERT), notes)
    assert (n.poll_ms, n.interval_ms, n.interface_multiplier, n.fixed_restore_multiplier) == (300, 300, 2, 10)
    assert n.disable_action and notes == []
    notes = _Notes()
    n = nxos_watchdog(Watchdog(detection_ms=200, restoration_ms=200, poll_ms=50), notes)
    assert n.poll_ms == 100 and n.interval_ms is None  # the switch's default is not rendered
    assert notes.fields == ["watchdog.poll_ms"]
    notes = _Notes()
    n = nxos_watchdog(Watchdog(detection_ms=9000, restoration_ms=200, poll_ms=100), notes)
    assert n.interface_multiplier == 40 and notes.fields == ["watchdog.interface_multiplier"]  # DME max 40
