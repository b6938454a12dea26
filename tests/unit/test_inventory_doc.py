"""docs/inventory.md is what scripts/gen_inventory_doc.py writes from the current schema and inventory/lab: a
model or lab change without regenerating the page fails here (fix: .venv/bin/python scripts/gen_inventory_doc.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from fabricd.cli.schema import inventory_schema

REPO = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_inventory_doc", REPO / "scripts" / "gen_inventory_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_inventory_doc_is_current() -> None:
    gen = _generator()
    expected = gen.inventory_markdown(inventory_schema())
    assert (REPO / "docs" / "inventory.md").read_text() == expected, (
        "docs/inventory.md is stale: run .venv/bin/python scripts/gen_inventory_doc.py"
    )


def test_every_field_of_the_schema_is_documented() -> None:
    schema = inventory_schema()
    text = (REPO / "docs" / "inventory.md").read_text()
    for name, node in schema["$defs"].items():
        if "enum" in node:
            assert f'<a id="{name.lower()}"></a>{name}' in text
            continue
        assert f"## {name}\n" in text, name
        section = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        for field in node.get("properties", {}):
            assert f"| `{field}` |" in section, f"{name}.{field} missing"
    for field in schema["properties"]:
        assert f"| `{field}` |" in text


def test_examples_are_the_lab_files() -> None:
    text = (REPO / "docs" / "inventory.md").read_text()
    lab = REPO / "inventory" / "lab"
    assert (lab / "groups.yml").read_text().rstrip() in text
    assert "  - name: spine1\n    platform: sonic" in text
    assert "  - name: gpu1\n" in text and "  - name: gpu3\n" not in text
