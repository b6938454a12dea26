"""Group NIC/port defaults and clearing inherited knobs (issue 24, part 4: nothing accepted is silently dropped).

On the base commit a group's ``nic:`` was refused with "did you mean 'nics'?", and following the hint (a ``nics:``
list in the group) was accepted and ignored, because the host's own ``nics:`` list replaces it: E810 hosts became
mlx5_core. ``cc: {}`` could not clear knobs inherited from ``defaults.nic``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.errors import InventoryError
from fabricd.inventory import load_inventory
from fabricd.render.render import render_devices
from tests.unit.test_checks import D, H, lab_docs, write


def _e810_group(docs: dict, body: dict) -> None:
    docs["groups.yml"]["groups"]["e810"] = body
    for host in H(docs)[:2]:
        host["groups"] = [*host.get("groups", []), "e810"]


def test_group_nic_defaults_render_e810_host_scripts(tmp_path: Path) -> None:
    docs = lab_docs()
    _e810_group(docs, {"nic": {"driver": "ice"}})
    inv = load_inventory(write(tmp_path / "inv", docs))
    drivers = {h.name: {n.driver for n in h.nics} for h in inv.fabric.hosts}
    assert drivers["gpu1"] == drivers["gpu2"] == {"ice"} and drivers["gpu3"] == {"mlx5_core"}
    # the NIC's own line still wins over the group, the group over defaults.nic (mtu 9000 stays)
    assert all(n.mtu == 9000 for n in inv.fabric.hosts[0].nics)
    scripts = {
        r.device: "\n".join(f.text for f in r.files) for r in render_devices(inv.fabric) if r.device in ("gpu1", "gpu3")
    }
    assert "devlink/ice.rst" in scripts["gpu1"] and "devlink/ice.rst" not in scripts["gpu3"]
    # a located value: the driver of gpu1's NIC is found at the group's nic: line
    loc = inv.locate(("hosts", 0, "nics", 0, "driver"))
    assert loc is not None and str(loc.file).endswith("groups.yml")


def test_a_group_nics_list_the_host_replaces_is_refused(tmp_path: Path) -> None:
    """The old hint's destination: accepted and ignored before, an error naming groups.<g>.nic now."""
    docs = lab_docs()
    _e810_group(docs, {"nics": [{"netdev": "x", "driver": "ice"}]})
    with pytest.raises(InventoryError) as err:
        load_inventory(write(tmp_path / "inv", docs))
    problems = [p for p in err.value.problems if p.code == "INV021"]
    assert problems and problems[0].path == "groups.e810.nics"
    assert "groups.e810.nic" in (problems[0].hint or "")
    assert problems[0].location is not None and str(problems[0].location.file).endswith("groups.yml")


def test_cc_null_clears_inherited_knobs(tmp_path: Path) -> None:
    docs = lab_docs()
    D(docs)["nic"]["cc"] = {"rpg_time_reset": 300}
    H(docs)[0]["nics"][0]["cc"] = None
    H(docs)[1]["nics"][0]["cc"] = {}
    fabric = load_inventory(write(tmp_path / "inv", docs)).fabric
    assert fabric.hosts[0].nics[0].cc == {}
    assert fabric.hosts[1].nics[0].cc == {"rpg_time_reset": 300}  # a mapping merges
    assert fabric.hosts[2].nics[0].cc == {"rpg_time_reset": 300}


def test_a_host_nic_key_hints_at_defaults_not_at_nics(tmp_path: Path) -> None:
    docs = lab_docs()
    H(docs)[0]["nic"] = {"driver": "ice"}
    with pytest.raises(InventoryError) as err:
        load_inventory(write(tmp_path / "inv", docs))
    hint = next(p.hint for p in err.value.problems if "'nic'" in p.message)
    assert hint is not None and "group's nic:" in hint and "did you mean" not in hint
