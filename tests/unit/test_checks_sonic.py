"""FAB110/FAB111: validate refuses what SONiC's YANG refuses (WRED profile names, VLAN 1), with file:line, expected
vs got and a fix hint, and only when the name or VLAN is rendered on a SONiC switch. The rules themselves are
checked against the YANG models in tests/conformance/test_sonic_yang.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricd.inventory import load_inventory
from fabricd.nos.sonic.rules import SONIC_NAME
from fabricd.nos.validate import run_checks

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "inventory" / "lab"


def _edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new))


@pytest.fixture
def lab_copy(tmp_path: Path) -> Path:
    """A writable copy of the lab inventory (the tests edit it)."""
    root = tmp_path / "inv"
    shutil.copytree(LAB, root)
    return root


def _codes(root: Path, code: str) -> list[str]:
    return [p.render() for p in run_checks(load_inventory(root)) if p.code == code]


@pytest.mark.parametrize("name", ["roce.v2", "a:b", "a/b", "a@b", "a+b", "r" * 33])
def test_fab110_refuses_a_wred_name_sonic_refuses(lab_copy: Path, name: str) -> None:
    _edit(lab_copy, "fabric.yml", "ecn_profile: roce}", f"ecn_profile: '{name}'}}")
    _edit(lab_copy, "fabric.yml", "{name: roce,", f"{{name: '{name}',")
    (hit,) = _codes(lab_copy, "FAB110")
    assert f"{lab_copy}/fabric.yml:" in hit and "policy.ecn_profiles" in hit
    assert "expected 1-32 of [-a-zA-Z0-9_]" in hit and f"got {name!r} ({len(name)} characters)" in hit
    assert "rename it, e.g. " in hit


def test_fab110_exact_rendering(lab_copy: Path) -> None:
    _edit(lab_copy, "fabric.yml", "ecn_profile: roce}", "ecn_profile: roce.v2}")
    _edit(lab_copy, "fabric.yml", "{name: roce,", "{name: roce.v2,")
    (hit,) = _codes(lab_copy, "FAB110")
    lines = (lab_copy / "fabric.yml").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "{name: roce.v2," in t)
    assert hit == (
        f"{lab_copy}/fabric.yml:{line}: policy.ecn_profiles[roce.v2].name: ECN profile 'roce.v2' is not a name SONiC "
        "takes "
        "(WRED_PROFILE on spine1, leaf1-sonic) (expected 1-32 of [-a-zA-Z0-9_], starting with a letter or digit "
        "(sonic-wred-profile.yang), got 'roce.v2' (7 characters)); rename it, e.g. 'roce_v2' (and the classes' "
        "ecn_profile)"
    )


def test_fab111_refuses_vlan_1_on_a_sonic_switch(lab_copy: Path) -> None:
    _edit(lab_copy, "fabric.yml", "- id: 100", "- id: 1")
    _edit(lab_copy, "groups.yml", "vlan: 100", "vlan: 1")
    (hit,) = _codes(lab_copy, "FAB111")
    assert f"{lab_copy}/fabric.yml:" in hit
    assert ".id: VLAN 1 (rdma) is carried by SONiC leaf1-sonic, whose YANG refuses it" in hit
    assert "(expected 2-4094 (sonic-vlan.yang), got 1)" in hit and hit.endswith("(and the NICs' vlan)")


def test_no_finding_without_sonic_switches(lab_copy: Path) -> None:
    """The same names on a fabric without SONiC switches are not FAB110/FAB111's business."""
    _edit(lab_copy, "fabric.yml", "ecn_profile: roce}", "ecn_profile: roce.v2}")
    _edit(lab_copy, "fabric.yml", "{name: roce,", "{name: roce.v2,")
    _edit(lab_copy, "fabric.yml", "- id: 100", "- id: 1")
    _edit(lab_copy, "groups.yml", "vlan: 100", "vlan: 1")
    inv = load_inventory(lab_copy)
    assert any(s.platform.value == "sonic" for s in inv.fabric.switches)
    switches = (lab_copy / "switches.yml").read_text()
    (lab_copy / "switches.yml").write_text(switches.replace("platform: sonic", "platform: arista_eos"))
    problems = run_checks(load_inventory(lab_copy))
    assert not [p for p in problems if p.code in ("FAB110", "FAB111")]


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("roce", True),
        ("A" + "b" * 31, True),
        ("9-x_y", True),
        ("b" * 33, False),
        ("_x", False),
        ("-x", False),
        ("a.b", False),
        ("a b", False),
    ],
)
def test_sonic_name_pattern(name: str, ok: bool) -> None:
    assert bool(SONIC_NAME.fullmatch(name)) is ok
