"""``fabricd schema``: a valid JSON Schema (draft 2020-12) that every shipped inventory file satisfies, and that
rejects what the loader rejects for the same reason (unknown keys, out-of-range values)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from fabricd.cli.main import build_app

REPO = Path(__file__).resolve().parents[2]
FILES = sorted([*(REPO / "inventory" / "lab").glob("*.yml"), *(REPO / "inventory" / "examples").rglob("*.yml")])


def _jsonable(node: Any) -> Any:
    """YAML as a JSON document would hold it (mapping keys are strings: DSCP 26 -> '26')."""
    if isinstance(node, dict):
        return {str(k): _jsonable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_jsonable(v) for v in node]
    return node


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    result = CliRunner().invoke(build_app(), ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPO)) for p in FILES])
def test_shipped_inventories_satisfy_the_schema(validator: Draft202012Validator, path: Path) -> None:
    errors = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(_jsonable(yaml.safe_load(path.read_text())))
    ]
    assert errors == []


def test_schema_rejects_unknown_keys_and_ranges(validator: Draft202012Validator) -> None:
    doc = _jsonable(yaml.safe_load((REPO / "inventory" / "examples" / "sonic-only.yml").read_text()))
    doc["switches"][0]["platfrom"] = "sonic"
    doc["policy"]["pfc"]["priorities"] = [9]
    doc["defaults"]["nic"]["mtu"] = 100
    paths = sorted(tuple(map(str, e.absolute_path)) for e in validator.iter_errors(doc))
    assert paths == [("defaults", "nic", "mtu"), ("policy", "pfc", "priorities", "0"), ("switches", "0")]


def test_schema_takes_group_nic_defaults_and_cc_null(validator: Draft202012Validator) -> None:
    """What the loader takes (a group's nic:/port: defaults, cc: null to clear inherited knobs) the schema takes."""
    doc = _jsonable(yaml.safe_load((REPO / "inventory" / "examples" / "sonic-only.yml").read_text()))
    doc.setdefault("groups", {})["e810"] = {"nic": {"driver": "ice", "cc": None}}
    doc.setdefault("groups", {})["uplinks"] = {"port": {"mtu": 9100, "description": "uplink"}}
    assert [e.message for e in validator.iter_errors(doc)] == []
    doc["groups"]["e810"]["nic"]["drivr"] = "ice"
    assert [tuple(e.absolute_path) for e in validator.iter_errors(doc)] == [("groups", "e810")]
