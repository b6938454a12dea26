"""NIC profiles per driver family: the data, the validate errors they drive, and the per-family host plans.

The mixed-NIC example (inventory/examples/mixed-nics.yml: ConnectX-7, E810 RoCEv2, E810 iWARP, BCM57608) must
validate, render and plan with each family's own files; a knob a family lacks is a located validate error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricd.intent.host import COMMIT_CHECK, Backend, desired_plan, host_intent
from fabricd.intent.nics import (
    PROFILES,
    NicProfile,
    commit_file_for,
    configfs_group,
    families_text,
    profile_for,
    value_format,
)
from fabricd.inventory import load_inventory
from fabricd.model import Transport
from fabricd.nos.validate import run_checks
from fabricd.readers.ethtool import read_ethtool
from fabricd.readers.rdma import RdmaKey, read_rdma_device
from fabricd.render.host_script import host_script
from fabricd_lab.fake_host import FakeNic, build_fake_host, write_ethtool

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventory" / "examples" / "mixed-nics.yml"


def test_every_profile_is_sourced_and_consistent() -> None:
    for p in PROFILES:
        assert p.sources and p.title and p.limits, p.family
        assert p.transports or "counters only" in p.title, p.family  # ionic: read, not configured
        for knob in (*p.roles.values(), *p.tunables.values()):
            assert knob.source and knob.minimum <= knob.maximum, (p.family, knob.name)
            assert knob.path.startswith("/sys/"), (p.family, knob.name)
            if knob.default is not None:
                assert knob.in_range(knob.default), (p.family, knob.name)
        for alias, target in p.aliases.items():
            assert target in p.tunables, (p.family, alias)
        for d in (*p.drivers, *p.rdma_drivers):
            assert profile_for(d) is p
    assert profile_for("banana") is None
    assert "bnxt (bnxt_en, bnxt_re)" in families_text()


def test_path_helpers() -> None:
    cc = "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"
    assert value_format(f"{cc}/cnp_dscp") == "hex"
    assert value_format("/sys/kernel/config/irdma/rdmap1/roce_dcqcn_enable") == "dec"
    assert commit_file_for(f"{cc}/g") == f"{cc}/apply"
    assert commit_file_for(f"{cc}/apply") is None
    assert commit_file_for("/sys/class/net/x/ecn/roce_rp/rpg_gd") is None
    assert configfs_group("/sys/kernel/config/irdma/rdmap1/roce_dcqcn_enable") == (
        "/sys/kernel/config/irdma",
        "/sys/kernel/config/irdma/rdmap1",
    )
    assert configfs_group("/sys/class/net/x/mtu") is None


def test_mixed_example_validates_clean_of_errors() -> None:
    problems = run_checks(load_inventory(MIXED))
    assert [p.render() for p in problems if p.severity == "error"] == []
    # the one thing E810 cannot do (CNP marking) is said, not silently skipped; so is the NVUE lossless pool the
    # render cannot size without the switch's buffer figures (FAB144)
    assert {p.code for p in problems} == {"FAB085", "FAB144"}


def _paths(host: str) -> list[str]:
    fabric = load_inventory(MIXED).fabric
    return [s.path for s in desired_plan(host_intent(fabric, host)).steps]


def test_mixed_example_plans_each_family_with_its_own_files() -> None:
    fabric = load_inventory(MIXED).fabric
    cx = desired_plan(host_intent(fabric, "gpu1"))
    assert any(s.path.endswith("/ecn/roce_np/cnp_dscp") for s in cx.steps)
    assert any(s.path.endswith("/ecn/roce_rp/rpg_time_reset") and s.desired == 300 for s in cx.steps)
    for host in ("stor1", "stor2", "gpu2"):
        paths = _paths(host)
        assert not any("/ecn/" in p or p.endswith("/traffic_class") for p in paths), host
    e810 = desired_plan(host_intent(fabric, "stor1"))
    assert [s.path for s in e810.steps if s.backend == Backend.SYSFS][
        -1
    ] == "/sys/kernel/config/irdma/rdmap23s0f0/roce_dcqcn_enable"
    assert not any(s.path == "apptrust" for s in e810.steps)  # ice has no dcbnl apptrust
    ets = next(s for s in e810.steps if s.path == "ets")
    assert ets.desired["prio_tc"][3] == 1 and ets.desired["prio_tc"][6] == 2  # type: ignore[index]
    assert {p.what.split(" ")[0] for p in e810.prerequisites} == {"firmware", "RDMA"}
    iwarp = host_intent(fabric, "stor2").nics[0]
    assert iwarp.transport == Transport.IWARP and iwarp.pfc_mask == 0 and iwarp.global_pause is None
    iw = desired_plan(host_intent(fabric, "stor2"))
    assert not any("rdma_cm" in s.path for s in iw.steps)
    assert [s.path for s in iw.steps if s.backend == Backend.SYSFS] == [
        "/sys/kernel/config/irdma/iwp23s0f0/iw_ecn_enable"
    ]
    bc = desired_plan(host_intent(fabric, "gpu2"))
    cc = [s for s in bc.steps if "/bnxt_re/" in s.path]
    assert [s.path.rsplit("/", 1)[1] for s in cc] == [
        "roce_dscp",
        "roce_prio",
        "cnp_dscp",
        "cnp_prio",
        "ecn_enable",
        "cc_mode",
        "apply",
    ]
    assert cc[-1].check == COMMIT_CHECK
    app = next(s for s in bc.steps if s.path == "app")
    assert list(app.desired) == ["26", "48"]  # type: ignore[arg-type]  # mapped DSCPs only, CNP last
    ets = next(s for s in bc.steps if s.path == "ets")
    assert ets.desired["prio_tc"][3] == 1 and ets.desired["prio_tc"][6] == 2  # type: ignore[index]


def test_rendered_scripts_have_no_other_familys_paths(tmp_path: Path) -> None:
    fabric = load_inventory(MIXED).fabric
    for host in ("stor1", "stor2", "gpu2"):
        nic = host_script(host_intent(fabric, host)).nics[0]
        assert not nic.mlnx_qos_hint and nic.traffic_class_path is None
        assert all("/ecn/" not in w.path for w in nic.writes)
    bnxt = host_script(host_intent(fabric, "gpu2")).nics[0]
    assert [w.value for w in bnxt.writes][:4] == ["0x1a", "0x3", "0x30", "0x6"]


def _mixed_copy(tmp_path: Path, old: str, new: str) -> Path:
    inv = tmp_path / "mixed.yml"
    shutil.copy(MIXED, inv)
    text = inv.read_text()
    assert old in text
    inv.write_text(text.replace(old, new, 1))
    return inv


def _line(inv: Path, needle: str) -> int:
    return next(n for n, line in enumerate(inv.read_text().splitlines(), 1) if needle in line)


def test_mlx5_dcqcn_parameter_on_broadcom_is_a_located_error(tmp_path: Path) -> None:
    inv = _mixed_copy(
        tmp_path,
        "  congestion_control: dcqcn\n",
        "  congestion_control: dcqcn\n  dcqcn:\n    rp: {rpg_time_reset: 300}\n",
    )
    errors = [p for p in run_checks(load_inventory(inv)) if p.code == "FAB082"]
    by_family = {p.message.split(" of ")[1].split(" NICs")[0]: p for p in errors}
    assert sorted(by_family) == ["bnxt", "ice"]
    b = by_family["bnxt"]
    assert b.location is not None and b.location.line == _line(inv, "rpg_time_reset: 300}")
    assert b.path == "policy.dcqcn.rp.rpg_time_reset"
    assert "gpu2:ens3f0np0" in b.message and "cc_mode" in (b.expected or "")
    assert "cc:" in (b.hint or "")
    i = by_family["ice"]
    assert "dcqcn_T" in (i.hint or "") and "modprobe" in (i.hint or "")


def test_unknown_driver_lists_the_families(tmp_path: Path) -> None:
    inv = _mixed_copy(tmp_path, "driver: bnxt_en", "driver: banana")
    [p] = [p for p in run_checks(load_inventory(inv)) if p.code == "FAB080"]
    assert p.severity == "error" and p.path == "hosts[gpu2].nics[ens3f0np0].driver"
    assert p.location is not None and p.location.line == _line(inv, "driver: banana")
    assert "mlx5 (mlx5_core" in (p.expected or "") and "rxe (rdma_rxe" in (p.expected or "")


@pytest.mark.parametrize(
    ("old", "new", "code", "path"),
    [
        ("cc: {cc_mode: 1}", "cc: {cc_mode: 7}", "FAB083", "hosts[gpu2].nics[ens3f0np0].cc.cc_mode"),
        ("cc: {cc_mode: 1}", "cc: {rpg_gd: 11}", "FAB083", "hosts[gpu2].nics[ens3f0np0].cc.rpg_gd"),
        ("transport: iwarp", "transport: iwarp, cc: {dcqcn_T: 5}", "FAB083", "hosts[stor2].nics[ens2f0].cc.dcqcn_T"),
        (
            "transport: iwarp",
            "transport: iwarp, cc: {roce_timely_enable: 1}",
            "FAB083",
            "hosts[stor2].nics[ens2f0].cc.roce_timely_enable",
        ),
        ("driver: bnxt_en", "driver: bnxt_en, transport: iwarp", "FAB081", "hosts[gpu2].nics[ens3f0np0].transport"),
    ],
)
def test_family_knob_errors_are_located(tmp_path: Path, old: str, new: str, code: str, path: str) -> None:
    inv = _mixed_copy(tmp_path, old, new)
    found = [p for p in run_checks(load_inventory(inv)) if p.code == code]
    assert [p.path for p in found] == [path]
    assert found[0].severity == "error" and found[0].hint


def test_unknown_family_gets_no_sysfs_writes(tmp_path: Path) -> None:
    """With --force past validate, a NIC without a profile is not given another family's paths."""
    inv = _mixed_copy(tmp_path, "driver: bnxt_en", "driver: banana")
    intent = host_intent(load_inventory(inv).fabric, "gpu2")
    assert intent.nics[0].family is None and intent.nics[0].writes == []
    assert not any(s.path.startswith("/sys/") and "rdma_cm" not in s.path for s in desired_plan(intent).steps)


def test_nic_matrix_doc_is_current() -> None:
    from fabricd.intent.nics.doc import matrix_markdown

    doc = (REPO / "docs" / "nics.md").read_text()
    assert doc == matrix_markdown(), "docs/nics.md is stale: run .venv/bin/python scripts/gen_nics_doc.py"
    for p in PROFILES:
        assert f"## {p.family}: " in doc
        for knob in (*p.roles.values(), *p.tunables.values()):
            assert knob.path in doc


def test_deadlock_endpoints_follow_each_nics_transport() -> None:
    """A NIC running iWARP or lossy RoCE in a lossless fabric sends no lossless traffic: its leaf is no endpoint of
    the PFC deadlock analysis unless a lossless NIC sits there too."""
    from fabricd.intent.deadlock import Topology

    fabric = load_inventory(MIXED).fabric
    leaf2 = [s.name for s in fabric.switches].index("leaf2")
    assert leaf2 in Topology.from_fabric(fabric).endpoints  # gpu2 (BCM57608, lossless) is on leaf2
    data = fabric.model_dump()
    for h in data["hosts"]:
        for n in h["nics"]:
            if n["peer"].startswith("leaf2:"):
                n["transport"] = "iwarp" if n["driver"] == "ice" else "roce_v2_lossy"
    lossy_leaf2 = type(fabric).model_validate(data)
    assert leaf2 not in Topology.from_fabric(lossy_leaf2).endpoints


@pytest.mark.integration  # runs the rendered script in bash
def test_rendered_script_stops_on_a_missing_file(tmp_path: Path) -> None:
    """The script's own helpers (cut from the rendered gpu2.sh, run by bash): a file the NIC lacks stops the
    script with exit 1 before anything reports "configured"; an optional MLNX_OFED file is skipped and says so; a
    present file is written once."""
    import subprocess

    from fabricd.render.render import render_devices

    fabric = load_inventory(MIXED).fabric
    render = next(r for r in render_devices(fabric) if r.device == "gpu2")
    script = render.primary.text
    helpers = script[script.index("warn() {") : script.index("# --- what each")]
    present = tmp_path / "knob"
    present.write_text("0x0\n")
    run = subprocess.run(
        [
            "bash",
            "-c",
            helpers + f'write_sysfs "{present}" 0x1a\nwrite_optional "{tmp_path}/tc" 106\n'
            f'write_sysfs "{tmp_path}/missing" 0x1\necho configured\n',
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1 and "configured" not in run.stdout
    assert "missing is missing" in run.stderr and "optional" in run.stderr
    assert present.read_text() == "0x1a\n"


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.family)
def test_the_lab_fake_host_of_every_family_reads_back(profile: NicProfile, tmp_path: Path) -> None:
    """The fake host builds any registered family from its profile alone (``NicProfile.lab``): the readers find the
    family's hw_counters names with their meanings, its configfs knobs at their defaults, and its ethtool capture
    normalised by its own driver's map. A new family gets this test without editing it."""
    transport = min(profile.transports, key=lambda t: t.value, default=Transport.ROCE_V2_LOSSLESS)
    nic = FakeNic(netdev="eth0", rdma_device=f"{profile.family}_0", family=profile.family, transport=transport)
    root = build_fake_host(tmp_path, [nic])
    write_ethtool(root, [nic])
    (port,) = read_rdma_device(root, nic.rdma_device).ports
    captured = set(port.hw_counters) & set(profile.hw_counters)
    if profile.lab.device_capture:  # the real capture's names (mlx5_0 of procfs: not every name the driver has)
        assert captured
    else:  # the family's own names, every one
        assert captured == set(profile.hw_counters) and set(port.hw_counters) == set(profile.hw_counters)
    assert {RdmaKey(*profile.hw_counters[n]) for n in captured} <= set(port.normalised())
    for knob in (*profile.roles.values(), *profile.tunables.values()):
        path = root / knob.render_path(nic.netdev, nic.rdma_device, nic.rdma_port, 3).lstrip("/")
        if knob.runtime and knob.exists_for(transport) and knob.path.startswith("/sys/kernel/config/"):
            assert path.read_text().strip() == (
                f"{knob.default or 0:#x}" if knob.fmt == "hex" else str(knob.default or 0)
            ), knob.name
    has_ecn = (root / "sys/class/net/eth0/ecn").is_dir()
    assert has_ecn == any(k.path.startswith("/sys/class/net/{netdev}/ecn/") for k in profile.roles.values())
    if profile.lab.ethtool_capture is None:
        assert not (root / "ethtool").exists()
        return
    stats = read_ethtool(root, "eth0")
    assert stats.driver == profile.lab.ethtool_info_driver and not stats.problems
    if profile.ethtool is not None and profile.ethtool.rules:
        assert {c.source for c in stats.counters} and all(c.source in stats.raw for c in stats.counters)
