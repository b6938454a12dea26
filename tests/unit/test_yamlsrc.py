"""The event-based YAML builder keeps SafeLoader semantics, records lines, and turns YAML oddities into problems."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabricd.errors import InventoryError, Problem
from fabricd.inventory import load_inventory
from fabricd.inventory.yamlsrc import Located, load_located

SAMPLE = """\
plain: text
quoted: '26'
int: 26
octal: 010
hex: 0x1a
float: 1.5
yes_bool: yes
null_value: ~
empty:
date: 2024-01-02
list: [1, two, '3', null]
anchor: &a {x: 1, y: [a, b]}
alias: *a
nested:
  - name: n1
    deep: {k: v}
"""


def test_same_data_as_pyyaml_safe_load(tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(SAMPLE)
    located = Located()
    problems: list[Problem] = []
    assert load_located(f, located, problems, ("@", 0)) == yaml.safe_load(SAMPLE)
    assert problems == []


def test_lines_of_keys_and_items(tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(SAMPLE)
    located = Located()
    located.add_file(f)
    load_located(f, located, [], ("@", 0))
    assert located.lines[("@", 0, "octal")] == 4
    assert located.lines[("@", 0, "list", 3)] == 11
    assert located.lines[("@", 0, "nested", 0, "deep", "k")] == 16
    where = located.where(("@", 0, "nested", 0, "missing"))
    assert where is not None and (where.file, where.line) == (str(f), 15)


def test_directory_inventory_skips_hidden_files(tmp_path: Path, lab_inventory: Path) -> None:
    root = tmp_path / "inv"
    root.mkdir()
    for f in lab_inventory.glob("*.yml"):
        (root / f.name).write_text(f.read_text())
    (root / ".editor-backup.yml").write_text("garbage: [\n")
    (root / ".git").mkdir()
    (root / ".git" / "x.yml").write_text("also: [garbage\n")
    inv = load_inventory(root)
    assert len(inv.fabric.switches) == 6 and len(inv.files) == 5


def test_all_file_problems_are_reported_together(tmp_path: Path) -> None:
    root = tmp_path / "inv"
    root.mkdir()
    (root / "a.yml").write_text("name: x\nname: y\n")
    (root / "b.yml").write_text("hosts: [\n")
    (root / "c.yml").write_text("")
    with pytest.raises(InventoryError) as err:
        load_inventory(root)
    assert [p.code for p in err.value.problems] == ["INV002", "INV005", "INV012"]
    assert [str(p.location) for p in err.value.problems] == [f"{root}/a.yml:2", f"{root}/b.yml:2", f"{root}/c.yml"]
