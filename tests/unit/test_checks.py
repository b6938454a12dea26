"""Every semantic check (FABnnn) fires on a minimal mutation of the lab inventory, at the right place.

Each case copies inventory/lab to a temp dir, applies one mutation to the YAML documents, loads the result with
the real loader and runs the real checks. The lab itself must be clean (no errors, no warnings).
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricd.intent.checks import CheckOptions
from fabricd.inventory import load_inventory
from fabricd.nos.validate import ALL_CHECKS, CHECKS_BY_CODE, run_checks

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventory" / "lab"

Docs = dict[str, Any]


def lab_docs() -> Docs:
    return {f.name: yaml.safe_load(f.read_text()) for f in sorted(LAB.glob("*.yml"))}


def write(root: Path, docs: Docs) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in docs.items():
        (root / name).write_text(yaml.safe_dump(data, sort_keys=False))
    return root


# Short handles into the lab documents.
def P(d: Docs) -> Any:  # noqa: N802 - policy
    return d["fabric.yml"]["policy"]


def TC(d: Docs) -> Any:  # noqa: N802 - traffic classes
    return P(d)["qos"]["traffic_classes"]


def S(d: Docs) -> Any:  # noqa: N802 - switches
    return d["switches.yml"]["switches"]


def H(d: Docs) -> Any:  # noqa: N802 - hosts
    return d["hosts.yml"]["hosts"]


def NIC(d: Docs, i: int = 0) -> Any:  # noqa: N802
    return H(d)[i]["nics"][0]


def L(d: Docs) -> Any:  # noqa: N802 - links
    return d["links.yml"]["links"]


def D(d: Docs) -> Any:  # noqa: N802 - defaults
    return d["groups.yml"]["defaults"]


def _set(getter: Callable[[Docs], Any], key: Any, value: Any) -> Callable[[Docs], None]:
    def mutate(d: Docs) -> None:
        getter(d)[key] = value

    return mutate


def _ring(d: Docs) -> None:
    """Leaves cabled in a ring leaf1-leaf2-leaf3-leaf4-leaf1, spines left out."""
    d["links.yml"]["links"] = [
        {"a": "leaf1-sonic:Ethernet48", "b": "leaf2-eos:Ethernet49"},
        {"a": "leaf2-eos:Ethernet50", "b": "leaf3-nxos:Ethernet1/49"},
        {"a": "leaf3-nxos:Ethernet1/50", "b": "leaf4-nvue:swp51"},
        {"a": "leaf4-nvue:swp52", "b": "leaf1-sonic:Ethernet56"},
    ]


def _add_dup_nic(d: Docs) -> None:
    nics = H(d)[0]["nics"]
    nics.append({**nics[0], "ip": "10.100.0.111/16", "peer": None})
    nics[-1].pop("peer")


def _pcp_untagged(d: Docs) -> None:
    P(d)["qos"]["trust"] = "pcp"
    del D(d)["nic"]["vlan"]


def _mixed_class(d: Docs) -> None:
    TC(d)[0]["priorities"].remove(4)
    TC(d)[1]["priorities"] = [3, 4]


def _unused_lossless(d: Docs) -> None:
    P(d)["pfc"]["priorities"] = [3, 4]


def _unmarked_roce(d: Docs) -> None:
    del TC(d)[1]["ecn_profile"]
    P(d)["ecn_profiles"][0]["traffic_classes"] = []


def _dscp_dup(d: Docs) -> None:
    P(d)["qos"]["dscp_to_priority"]["26"] = 3


def _nvue_switch(d: Docs) -> Any:
    return next(sw for sw in S(d) if sw["platform"] == "cumulus_nvue" and sw["name"].startswith("leaf"))


def _nvue_reserved_vlan(d: Docs) -> None:
    """The lab's RDMA VLAN (its members and NICs include leaf4-nvue ports) renumbered into Cumulus' reserved range."""
    old = P(d)["vlans"][0]["id"]
    P(d)["vlans"][0]["id"] = 3725
    for host in H(d):
        for nic in host.get("nics", []):
            if nic.get("vlan") == old:
                nic["vlan"] = 3725


def _dwrr_above_cnp(d: Docs) -> None:
    """A round-robin class 7 above the strict CNP class 6 (EOS would schedule the CNP queue round robin)."""
    TC(d)[0].update(priorities=[0, 1, 2, 4, 5], weight_percent=40)
    TC(d).append({"id": 7, "name": "control", "priorities": [7], "scheduler": "dwrr", "weight_percent": 10})


CASES: list[tuple[str, Callable[[Docs], None], CheckOptions | None]] = [
    ("FAB001", lambda d: S(d).append(copy.deepcopy(S(d)[0])), None),
    ("FAB002", lambda d: H(d).append({"name": "gpu1", "nics": []}), None),
    ("FAB003", _set(lambda d: H(d)[0], "name", "spine1"), None),
    ("FAB004", lambda d: S(d)[0]["ports"].append({"name": "Ethernet0", "role": "leaf_spine"}), None),
    ("FAB005", _add_dup_nic, None),
    ("FAB006", _set(lambda d: L(d)[0], "b", "spine9:Ethernet0"), None),
    ("FAB007", lambda d: L(d)[0].update(b=L(d)[0]["a"]), None),
    ("FAB008", _set(lambda d: S(d)[0]["ports"][0], "speed", "100G"), None),
    ("FAB009", _set(NIC, "peer", "leaf1-sonic:Ethernet99"), None),
    ("FAB010", lambda d: NIC(d).pop("peer"), None),
    ("FAB011", lambda d: NIC(d, 1).update(peer=NIC(d)["peer"]), None),
    ("FAB012", _set(NIC, "speed", "100G"), None),
    ("FAB013", _set(NIC, "mtu", 9200), None),
    ("FAB014", _set(lambda d: S(d)[0]["ports"][0], "mtu", 9000), None),
    ("FAB015", _set(lambda d: S(d)[2]["ports"][0], "role", "leaf_spine"), None),
    ("FAB020", _set(lambda d: P(d)["pfc"], "priorities", [2, 3, 4]), None),
    ("FAB021", _set(lambda d: P(d)["pfc"], "priorities", [3, 3]), None),
    ("FAB022", _set(lambda d: P(d)["pfc"], "priorities", [3, 6]), None),
    ("FAB023", _set(lambda d: P(d)["qos"]["cnp"], "priority", 3), None),
    ("FAB024", _set(lambda d: P(d)["qos"], "dscp_to_priority", {26: 2, 48: 6}), None),
    ("FAB025", _set(lambda d: P(d)["qos"]["roce"], "priority", 4), None),
    ("FAB026", _set(lambda d: P(d)["qos"]["cnp"], "dscp", 46), None),
    ("FAB027", _set(lambda d: P(d)["qos"]["cnp"], "dscp", 26), None),
    ("FAB028", _dscp_dup, None),
    ("FAB029", lambda d: TC(d)[0]["priorities"].append(3), None),
    ("FAB030", lambda d: TC(d)[0]["priorities"].remove(7), None),
    ("FAB031", _set(lambda d: TC(d)[2], "id", 3), None),
    ("FAB032", _set(lambda d: TC(d)[0], "weight_percent", 40), None),
    ("FAB033", _set(lambda d: TC(d)[2], "weight_percent", 10), None),
    ("FAB034", _set(lambda d: P(d)["qos"]["roce"], "tos", 104), None),
    ("FAB035", lambda d: TC(d)[2].update(scheduler="dwrr", weight_percent=10), None),
    ("FAB036", _mixed_class, None),
    ("FAB037", _set(lambda d: P(d)["qos"], "default_priority", 3), None),
    ("FAB038", _unused_lossless, None),
    ("FAB039", _pcp_untagged, None),
    ("FAB040", _set(lambda d: P(d)["pfc"]["watchdog"], "poll_ms", 300), None),
    ("FAB041", _set(lambda d: P(d)["pfc"]["watchdog"], "detection_ms", 6000), None),
    ("FAB042", _set(lambda d: P(d)["pfc"]["watchdog"], "detection_ms", 250), None),
    ("FAB043", _set(lambda d: P(d)["pfc"]["watchdog"], "enabled", False), None),
    ("FAB044", _set(lambda d: P(d)["pfc"], "priorities", []), None),
    ("FAB045", _set(P, "transport", "roce_v2_lossy"), None),
    ("FAB046", _set(P, "transport", "infiniband"), None),
    ("FAB047", _set(lambda d: P(d)["dcqcn"], "rp_priorities", [4]), None),
    ("FAB048", _set(P, "congestion_control", "none"), None),
    ("FAB050", _set(lambda d: P(d)["ecn_profiles"][0], "min_bytes", 2_000_000), None),
    ("FAB051", _set(lambda d: P(d)["ecn_profiles"][0], "max_bytes", 20_000_000), None),
    ("FAB052", _set(lambda d: TC(d)[1], "ecn_profile", "rocee"), None),
    ("FAB053", _set(lambda d: P(d)["ecn_profiles"][0], "traffic_classes", [3, 5]), None),
    ("FAB054", _set(lambda d: P(d)["ecn_profiles"][0], "traffic_classes", [3, 0]), None),
    ("FAB055", _unmarked_roce, None),
    ("FAB056", lambda d: P(d)["ecn_profiles"].append(copy.deepcopy(P(d)["ecn_profiles"][0])), None),
    ("FAB057", _set(lambda d: P(d)["ecn_profiles"][0], "max_mark_probability_percent", 0), None),
    ("FAB058", lambda d: P(d)["ecn_profiles"].append({"name": "spare", "traffic_classes": []}), None),
    ("FAB059", _set(lambda d: P(d)["ecn_profiles"][0], "min_bytes", 150), None),
    ("FAB060", _set(lambda d: D(d)["switch"]["buffer"], "headroom_pool_bytes", 100_000), None),
    ("FAB061", _set(lambda d: P(d)["buffers"], "lossless_mtu_bytes", 9500), None),
    ("FAB062", _set(lambda d: P(d)["buffers"], "cable_length_m", {"host": 5}), None),
    ("FAB063", _set(lambda d: D(d)["switch"]["buffer"], "total_bytes", 1_000_000), None),
    ("FAB070", lambda d: P(d)["vlans"].append({"id": 100, "name": "other", "subnet": "10.200.0.0/16"}), None),
    ("FAB071", lambda d: P(d)["vlans"].append({"id": 101, "name": "b", "subnet": "10.100.128.0/17"}), None),
    ("FAB072", lambda d: P(d)["vlans"][0]["members"].append("leaf1-sonic:Ethernet99"), None),
    ("FAB073", _set(NIC, "vlan", 200), None),
    ("FAB074", _set(NIC, "ip", "10.200.0.11/16"), None),
    ("FAB075", lambda d: NIC(d, 1).update(ip=NIC(d)["ip"]), None),
    ("FAB076", lambda d: P(d)["vlans"][0]["members"].remove("leaf1-sonic:Ethernet0"), None),
    ("FAB080", _set(NIC, "driver", "banana"), None),
    ("FAB081", _set(NIC, "transport", "iwarp"), None),
    ("FAB082", _set(NIC, "driver", "bnxt_en"), None),
    ("FAB083", _set(NIC, "cc", {"rpg_time_resett": 300, "rpg_gd": 99}), None),
    ("FAB084", lambda d: (NIC(d).update(driver="ice"), P(d)["pfc"].update(priorities=[3, 4])), None),
    ("FAB085", _set(NIC, "driver", "ice"), None),
    ("FAB090", _ring, None),
    ("FAB091", lambda d: None, CheckOptions(fail_links=2)),
    ("FAB092", lambda d: d["links.yml"].update(links=L(d)[:6]), None),
    ("FAB130", _nvue_reserved_vlan, None),
    ("FAB140", lambda d: _nvue_switch(d)["ports"].append({"name": "Ethernet1", "role": "host"}), None),
    ("FAB145", lambda d: _nvue_switch(d).update(telemetry={"transport": "gnmi"}), None),
    ("FAB141", lambda d: P(d)["vlans"][0].update(name="rdma-" + "x" * 30), None),
    ("FAB142", _set(lambda d: D(d)["port"], "mtu", 9214), None),
    ("FAB144", _set(lambda d: L(d)[0], "cable_m", 12.5), None),
    ("FAB143", _set(lambda d: P(d)["ecn_profiles"][0], "min_bytes", 150_500), None),
    ("FAB120", _set(lambda d: P(d)["pfc"]["watchdog"], "action", "forward"), None),
    ("FAB121", _dwrr_above_cnp, None),
    ("FAB097", lambda d: P(d)["vlans"].append({"id": 4000, "name": "internal", "subnet": "10.201.0.0/16"}), None),
    (
        "FAB110",
        lambda d: (P(d)["ecn_profiles"][0].update(name="roce.v2"), TC(d)[1].update(ecn_profile="roce.v2")),
        None,
    ),
    ("FAB111", lambda d: (P(d)["vlans"][0].update(id=1), D(d)["nic"].update(vlan=1)), None),
    # the RoCE class moved to queue 4 while the watchdog is on: SONiC's watchdog watches queue i for priority i
    (
        "FAB112",
        lambda d: (
            next(tc for tc in TC(d) if tc["name"] == "roce").update(id=4),
            P(d)["ecn_profiles"][0].update(traffic_classes=[4]),
        ),
        None,
    ),
    ("FAB016", lambda d: d.pop("switches.yml"), None),
    ("FAB017", lambda d: d.pop("hosts.yml"), None),
]
WHOLE_SECTION = ("FAB016", "FAB017")
"""A section missing from every file: located at the inventory itself (no line holds what is not there)."""


def test_every_check_has_a_case() -> None:
    assert {c for c, _, _ in CASES} == set(CHECKS_BY_CODE)
    assert len(ALL_CHECKS) == len(CHECKS_BY_CODE) >= 20, "codes must be unique"


def test_registry_fields_are_complete() -> None:
    for c in ALL_CHECKS:
        assert c.code.startswith("FAB") and len(c.code) == 6, c.code
        assert c.title and c.why and c.fix and c.name and c.area, c.code
        assert c.severity.value in ("error", "warning")


def test_lab_is_clean(lab_inventory: Path) -> None:
    assert run_checks(load_inventory(lab_inventory)) == []


def _unmapped_nvue() -> AbstractContextManager[object]:
    """Every pack maps its gNMI table now: NVUE's table without its mapping stands for a pack that records its paths
    before it maps them (FAB145's only case), served by the registry for that test only."""
    import dataclasses

    from fabricd.model import Platform
    from fabricd.nos.registry import SPECS

    spec = SPECS[Platform.CUMULUS_NVUE]
    assert spec.gnmi is not None
    return SPECS.overridden(dataclasses.replace(spec, gnmi=dataclasses.replace(spec.gnmi, to_counters=None)))


PATCHED: dict[str, Callable[[], AbstractContextManager[object]]] = {"FAB145": _unmapped_nvue}
"""Checks whose case needs more than an inventory change (the registry they read, patched for that case only)."""


@pytest.mark.parametrize(("code", "mutate", "options"), CASES, ids=[c[0] for c in CASES])
def test_check_fires(tmp_path: Path, code: str, mutate: Callable[[Docs], None], options: CheckOptions | None) -> None:
    docs = lab_docs()
    mutate(docs)
    root = write(tmp_path / "inv", docs)
    with PATCHED.get(code, nullcontext)():
        problems = run_checks(load_inventory(root), options)
    mine = [p for p in problems if p.code == code]
    assert mine, f"{code} did not fire; got {[p.code for p in problems]}"
    check = CHECKS_BY_CODE[code]
    for p in mine:
        assert p.severity == check.severity.value
        assert p.location is not None and Path(p.location.file).is_relative_to(root), p.render()
        assert p.location.line > 0 or (code in WHOLE_SECTION and Path(p.location.file) == root), p.render()
        assert p.message and p.hint and p.path, p.render()
        assert p.expected is not None and p.got is not None, p.render()


def test_messages_name_expected_and_got(tmp_path: Path) -> None:
    """Exact renderings on the lab files edited in place, to pin the format and the line numbers
    (file:line: path: what (expected X, got Y); hint)."""
    root = tmp_path / "inv"
    shutil.copytree(LAB, root)
    fabric = root / "fabric.yml"
    fabric.write_text(fabric.read_text().replace("min_bytes: 150000", "min_bytes: 2000000"))
    hosts = root / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("ip: 10.100.0.11/16", "ip: 10.100.0.11/16, mtu: 9200"))
    by_code = {p.code: p for p in run_checks(load_inventory(root))}
    assert by_code["FAB050"].render() == (
        f"{root}/fabric.yml:23: policy.ecn_profiles[roce].min_bytes: ECN profile 'roce': min threshold is not "
        "below max (expected min_bytes < max_bytes (1500000), got 2000000); lower min_bytes or raise max_bytes "
        "(NVIDIA: 150000 / 1500000)"
    )
    assert by_code["FAB013"].render() == (
        f"{root}/hosts.yml:5: hosts[gpu1].nics[ens1f0np0].mtu: MTU 9200 gives 9218-byte frames, larger than the "
        "MTU of peer port leaf1-sonic:Ethernet0 (expected NIC MTU <= 9198 (port MTU 9216), got 9200); lower the "
        "NIC MTU or raise the port MTU"
    )
    assert sorted(by_code) == ["FAB013", "FAB050"]


def test_inherited_value_is_located_where_written(tmp_path: Path) -> None:
    """A problem in a value inherited from defaults points at groups.yml, not at the device."""
    docs = lab_docs()
    D(docs)["switch"]["buffer"]["headroom_pool_bytes"] = 100_000
    root = write(tmp_path / "inv", docs)
    hits = [p for p in run_checks(load_inventory(root)) if p.code == "FAB060"]
    assert len(hits) == 6  # every switch inherits the too-small pool
    assert {Path(p.location.file).name for p in hits if p.location} == {"groups.yml"}


def test_examples_validate_clean() -> None:
    examples = sorted((REPO / "inventory" / "examples").iterdir())
    assert len(examples) >= 3
    for path in examples:
        problems = run_checks(load_inventory(path), CheckOptions(fail_links=1))
        assert [p.render() for p in problems if p.severity == "error"] == [], path


def test_nxos_poll_is_configured_and_range_checked(tmp_path: Path) -> None:
    """NX-OS configures its watchdog interval (Cisco NDFC pfc_watch_int: 101-1000 ms, the switch's default 100):
    a 200 ms poll is rendered as is, a 50 ms one is refused with the range, and timers that are not whole polls
    warn (NX-OS counts detection and restoration in polls)."""
    docs = lab_docs()
    P(docs)["pfc"]["watchdog"].update(poll_ms=200, detection_ms=400, restoration_ms=400)
    problems = run_checks(load_inventory(write(tmp_path / "ok", docs)))
    assert not any(p.code in ("FAB041", "FAB042") and "cisco_nxos" in p.message for p in problems)
    docs = lab_docs()
    P(docs)["pfc"]["watchdog"].update(poll_ms=50, detection_ms=400, restoration_ms=400)
    problems = run_checks(load_inventory(write(tmp_path / "low", docs)))
    low = [p for p in problems if p.code == "FAB041" and p.path.endswith("poll_ms") and "cisco_nxos" in p.message]
    assert low and low[0].severity == "error" and "100-1000 ms" in low[0].expected
    docs = lab_docs()
    P(docs)["pfc"]["watchdog"].update(poll_ms=200, detection_ms=400, restoration_ms=500)
    problems = run_checks(load_inventory(write(tmp_path / "polls", docs)))
    odd = [p for p in problems if p.code == "FAB042" and "cisco_nxos" in p.message]
    assert [p.path.rsplit(".", 1)[-1] for p in odd] == ["restoration_ms"]
    assert odd[0].severity == "warning" and odd[0].got == "500 ms (renders as 600 ms)"


@pytest.mark.parametrize("vlan", [1, 3968, 4000, 4094])
def test_nxos_refuses_default_and_reserved_vlans(tmp_path: Path, vlan: int) -> None:
    """NX-OS cannot modify VLAN 1 and reserves 3968-4094 (Cisco N9K Layer 2 guide, VLAN ranges): validate refuses
    them, at the VLAN's id, when an NX-OS switch is in the fabric; 3967 is fine."""
    for vid, refused in ((vlan, True), (3967, False)):
        docs = lab_docs()
        P(docs)["vlans"][0]["id"] = vid
        for host in H(docs):
            for nic in host.get("nics", []):
                if nic.get("vlan") == 100:
                    nic["vlan"] = vid
        problems = [p for p in run_checks(load_inventory(write(tmp_path / str(vid), docs))) if p.code == "FAB097"]
        assert bool(problems) == refused, (vid, problems)
        if refused:
            assert problems[0].severity == "error" and problems[0].path == "policy.vlans[rdma].id"
            assert problems[0].expected == "2-3967" and "leaf3-nxos" in problems[0].message
