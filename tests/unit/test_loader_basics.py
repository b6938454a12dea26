"""The inventory loader: inheritance and located problems on real YAML files."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.errors import InventoryError
from fabricd.inventory import load_inventory


def test_lab_loads_with_inheritance(lab_inventory: Path) -> None:
    inv = load_inventory(lab_inventory)
    fabric = inv.fabric
    assert [s.name for s in fabric.switches][:2] == ["spine1", "spine2"]
    assert len(fabric.switches) == 6 and len(fabric.hosts) == 8
    # defaults.nic -> every NIC; groups.spines -> role
    assert all(n.vlan == 100 and n.mtu == 9000 for h in fabric.hosts for n in h.nics)
    assert fabric.switch("spine2") is not None and fabric.switch("spine2").role.value == "spine"  # type: ignore[union-attr]
    # an inherited value is located where it was written (groups.yml), not at the device
    where = inv.locate(("hosts", 0, "nics", 0, "mtu"))
    assert where is not None and Path(where.file).name == "groups.yml"


def test_all_problems_reported_at_once(tmp_path: Path) -> None:
    f = tmp_path / "f.yml"
    f.write_text("switches:\n  - name: s1\n    platform: junos\n    mgmt: {host: h, port: 70000}\n")
    with pytest.raises(InventoryError) as err:
        load_inventory(f)
    lines = err.value.render().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{f}:3: switches[s1].platform: unknown switch platform")
    assert lines[1].startswith(f"{f}:4: switches[s1].mgmt.port: value out of range (expected <= 65535, got 70000)")
