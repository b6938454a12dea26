"""HostIntent decisions from the lab fabric and from edited policies (fabricd.intent.host)."""

from __future__ import annotations

import json

import pytest

from fabricd.intent.host import (
    Backend,
    HostPlan,
    Tsa,
    desired_plan,
    host_intent,
    host_intents,
    vlan_netdev_name,
)
from fabricd.model import Fabric


def test_lab_host_standard_recipe(lab_fabric: Fabric) -> None:
    nic = host_intent(lab_fabric, "gpu1").nics[0]
    assert nic.trust.value == "dscp"
    assert nic.pfc_priorities == [3] and nic.pfc_mask == 0b1000
    assert nic.roce_tos == 106 and nic.roce_mode == "RoCE v2"
    assert (nic.cnp_dscp, nic.cnp_802p_prio) == (48, 6)
    assert nic.np_priorities == [3] and nic.rp_priorities == [3]
    assert nic.prio_tc == [0, 0, 0, 3, 0, 0, 6, 0]
    assert nic.tc_tsa[6] == Tsa.STRICT and nic.tc_tsa[3] == Tsa.ETS
    assert sum(nic.tc_bw_percent) == 100 and nic.tc_bw_percent[0] == nic.tc_bw_percent[3] == 50
    table = {e.dscp: e.priority for e in nic.dscp_to_priority}
    assert len(table) == 64 and table[26] == 3 and table[48] == 6 and table[10] == 0
    assert nic.vlan_netdev == "ens1f0np0.100" and nic.ip_netdev == "ens1f0np0.100"
    assert nic.address == "10.100.0.11/16" and nic.address_ip == "10.100.0.11"
    assert nic.global_pause is False
    assert nic.peer_port_mtu_bytes == 9216
    # only the DCQCN knobs the inventory sets; the rest are left alone
    assert nic.dcqcn_rp == {
        "rpg_time_reset": 300,
        "rpg_ai_rate": 5,
        "rpg_hai_rate": 50,
        "rpg_gd": 11,
        "rpg_min_dec_fac": 50,
    }
    assert "rpg_byte_reset" not in nic.dcqcn_rp
    assert nic.dcqcn_np == {"min_time_between_cnps": 4}


def test_every_host_and_unknown_host(lab_fabric: Fabric) -> None:
    assert [h.host for h in host_intents(lab_fabric)] == [h.name for h in lab_fabric.hosts]
    with pytest.raises(KeyError):
        host_intent(lab_fabric, "nope")


def test_lossy_transport_leaves_pfc_and_pause_alone(lab_fabric: Fabric) -> None:
    data = lab_fabric.model_dump()
    data["policy"]["transport"] = "roce_v2_lossy"
    data["policy"]["congestion_control"] = "none"
    nic = host_intent(Fabric.model_validate(data), "gpu2").nics[0]
    assert nic.pfc_priorities == [] and nic.pfc_mask == 0
    assert nic.global_pause is None
    assert nic.cnp_dscp is None and nic.np_priorities == [] and nic.dcqcn_rp == {}


def test_weights_are_normalised_to_100(lab_fabric: Fabric) -> None:
    data = lab_fabric.model_dump()
    data["policy"]["qos"]["traffic_classes"] = [
        {"id": 0, "name": "a", "priorities": [0, 1, 2, 4, 5, 7], "weight_percent": 1},
        {"id": 3, "name": "b", "priorities": [3], "weight_percent": 1},
        {"id": 5, "name": "c", "priorities": [6], "weight_percent": 1},
    ]
    nic = host_intent(Fabric.model_validate(data), "gpu1").nics[0]
    assert sum(nic.tc_bw_percent) == 100
    assert sorted(nic.tc_bw_percent[t] for t in (0, 3, 5)) == [33, 33, 34]
    assert nic.prio_tc[6] == 5


def test_vlan_name_fits_ifnamsiz() -> None:
    assert vlan_netdev_name("enp175s0f1np1", 4094) == "enp175s0f1.4094"
    assert len(vlan_netdev_name("a" * 15, 100)) == 15


def test_desired_plan_json_round_trips(lab_fabric: Fabric) -> None:
    plan = desired_plan(host_intent(lab_fabric, "gpu3"))
    text = plan.to_json()
    assert HostPlan.model_validate_json(text) == plan
    steps = json.loads(text)["steps"]
    assert all(s["current"] is None for s in steps)
    assert {s["backend"] for s in steps} == {"netlink", "dcb", "sysfs"}
    paths = {s.path for s in plan.for_backend(Backend.SYSFS)}
    assert "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos" in paths
    assert "/sys/class/infiniband/mlx5_0/tc/1/traffic_class" in paths
    assert "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3" in paths
    skipped = desired_plan(host_intent(lab_fabric, "gpu3"), frozenset({"vlan"}))
    assert not any(s.path == "vlan" for s in skipped.steps)
    # without the VLAN netdev the address goes on the untagged netdev
    assert [(s.object, s.desired) for s in skipped.steps if s.path == "address"] == [("ens1f0np0", "10.100.0.13/16")]
