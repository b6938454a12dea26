#!/usr/bin/env python3
"""Regenerate docs/inventory.md from the inventory's JSON Schema (``fabricd schema``) and the embedded lab fabric.

Every field of every section gets a row: its type, whether it is required, its default, its range or allowed values,
and the description the model gives it. Examples are the real files of inventory/lab, so they always validate.
tests/unit/test_inventory_doc.py fails when docs/inventory.md differs from what this script writes.

Usage (from the repo root): .venv/bin/python scripts/gen_inventory_doc.py [--check]
"""

from __future__ import annotations

import json
import sys
from collections import deque
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "docs" / "inventory.md"
LAB = REPO / "inventory" / "lab"

Schema = dict[str, Any]

INTRO = """\
# Inventory reference

An inventory is one YAML file, or a directory of YAML files merged together (top-level keys may not repeat across
files). It describes the fabric's lossless **policy**, its **switches** with their ports, its **hosts** with their
RDMA NICs, and the **links** between switches. Hosts are cabled by each NIC's `peer`. Devices inherit values from
`defaults` and then from the `groups` they list, in order, before their own.

Inheritance rules: mappings merge key by key; lists and scalars replace. So

- **NIC and port defaults of a group** go in the group's `nic:` / `port:` mapping (like `defaults.nic` /
  `defaults.port`): `groups: {e810: {nic: {driver: ice}}}` makes every NIC of the group's hosts an E810 unless the
  NIC says otherwise. A group's `nics:` / `ports:` *list* is replaced by a member's own list; validate refuses that
  combination (INV021) instead of ignoring the group's list.
- **Clearing an inherited mapping**: an explicit `null` replaces what is inherited. `cc: null` on a NIC clears the
  congestion-control knobs it would inherit from `defaults.nic` or a group (`cc: {}` merges nothing and keeps
  them).

- `fabricd validate [INVENTORY]` checks everything at once and prints each problem as
  `file:line: dotted.path: what is wrong; expected X, got Y; fix` ([checks.md](checks.md) lists every check).
- `fabricd schema > fabricd.schema.json` gives the JSON Schema below for your editor's YAML plugin
  (for example `# yaml-language-server: $schema=./fabricd.schema.json` at the top of a file).
- `fabricd show [INVENTORY]` prints what the loader understood, after inheritance.

The embedded lab fabric, [inventory/lab](../inventory/lab), is the running example: 2 spines, 4 leaves (one per
switch OS), 8 hosts with mlx5 NICs and the standard RoCEv2 recipe. Other complete inventories ship with fabricd:
`fabricd init --example NAME DIR` writes one (`fabricd init --help` lists them).

**Limits.** What the loader reads is bounded, for every command that loads an inventory (validate, push, `serve`, the
agent's intent fetch): at most `FABRICD_INVENTORY_MAX_BYTES` bytes of YAML (default 67108864, 64 MiB) and
`FABRICD_INVENTORY_MAX_NODES` YAML nodes (default 1000000; every scalar, list and mapping, keys included, an alias
counted as what it repeats), all files together. The 17,000-device benchmark fabric has about 360,000 nodes in
2.9 MB. What devices inherit from `defaults` and `groups` counts against the node limit too (each device counts the
groups it lists), so a large group listed by every device cannot multiply past it. Past a limit the load stops with
INV009 at the file and line, naming the alias when one took it past (an alias bomb); raise the variable if the
inventory really is that large. An alias inside the node its anchor
names (a cycle, INV022) and a list, mapping or alias used as a mapping key (INV008) are refused wherever they are,
unused groups included, and no message ever prints an aliased structure.

This page is generated from the schema by `scripts/gen_inventory_doc.py`; a test fails when it is stale.
"""


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _anchor(name: str) -> str:
    return name.lower()


def _type(node: Schema, defs: Schema) -> str:
    """A short Markdown type: scalars, ``list of X``, ``map of K to V``, links to sections, ``X or null``."""
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        target = defs.get(name, {})
        if "enum" in target:
            return " \\| ".join(f"`{v}`" for v in target["enum"])
        return f"[{name}](#{_anchor(name)})"
    if "anyOf" in node:
        parts = [p for p in node["anyOf"] if p.get("type") != "null"]
        text = " or ".join(_type(p, defs) for p in parts)
        return text + (" or null" if len(parts) < len(node["anyOf"]) else "")
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            keys = node.get("propertyNames")
            key = _type(keys, defs) if isinstance(keys, dict) else "string"
            return f"map of {key} to {_type(extra, defs)}"
        return "mapping"
    fmt = node.get("format")
    return f"{kind} ({fmt})" if fmt else str(kind or "any")


def _constraints(node: Schema) -> str:
    """Ranges, lengths and patterns of a field (looking inside ``anyOf`` too)."""
    parts: list[str] = []
    nodes = [node, *node.get("anyOf", [])]
    for n in nodes:
        lo, hi = n.get("minimum"), n.get("maximum")
        if lo is not None and hi is not None:
            parts.append(f"{lo}-{hi}")
        elif lo is not None:
            parts.append(f">= {lo}")
        elif hi is not None:
            parts.append(f"<= {hi}")
        if "exclusiveMinimum" in n:
            parts.append(f"> {n['exclusiveMinimum']}")
        if "exclusiveMaximum" in n:
            parts.append(f"< {n['exclusiveMaximum']}")
        if "minLength" in n or "maxLength" in n:
            parts.append(f"length {n.get('minLength', 0)}-{n.get('maxLength', '')}".rstrip("-"))
        if "minItems" in n:
            parts.append(f"at least {n['minItems']} item(s)")
        if "maxItems" in n:
            parts.append(f"at most {n['maxItems']} item(s)")
        if "pattern" in n:
            parts.append(f"matches `{n['pattern']}`")
    return ", ".join(dict.fromkeys(parts))


def _description(node: Schema, defs: Schema) -> str:
    text = node.get("description")
    if text is None:
        for part in node.get("anyOf", []):
            if "description" in part:
                text = part["description"]
                break
    refs = [node] if "$ref" in node else [p for p in node.get("anyOf", []) if "$ref" in p]
    if text is None and refs:
        target = defs.get(_ref_name(refs[0]["$ref"]), {})
        text = target.get("description")
    if text is None and node.get("type") == "array" and "$ref" in node.get("items", {}):
        text = defs.get(_ref_name(node["items"]["$ref"]), {}).get("description")
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _default(node: Schema) -> str:
    if "default" not in node:
        return ""
    value = node["default"]
    if value is None:
        return "null"
    if isinstance(value, (dict, list)) and len(json.dumps(value)) > 40:
        return "(see the section)"
    return f"`{json.dumps(value)}`"


def _table(props: Schema, required: list[str], defs: Schema) -> list[str]:
    rows = ["| field | type | required | default | range | description |", "|---|---|---|---|---|---|"]
    for name, node in props.items():
        rows.append(
            f"| `{name}` | {_type(node, defs)} | {'yes' if name in required else ''} | {_default(node)} | "
            f"{_constraints(node)} | {_description(node, defs)} |"
        )
    return rows


def _refs(node: Any) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node:
            out.append(_ref_name(node["$ref"]))
        for value in node.values():
            out += _refs(value)
    elif isinstance(node, list):
        for value in node:
            out += _refs(value)
    return out


def _order(schema: Schema) -> list[str]:
    """Definitions in the order a reader meets them, breadth-first from the top-level keys."""
    defs = schema.get("$defs", {})
    seen: list[str] = []
    queue = deque(_refs(schema.get("properties", {})))
    while queue:
        name = queue.popleft()
        if name in seen or name not in defs:
            continue
        seen.append(name)
        queue.extend(_refs(defs[name]))
    return seen + [n for n in defs if n not in seen]


def _items(text: str, key: str, count: int) -> str:
    """The YAML of ``key:`` and its first ``count`` list items (two-space indent, as inventory/lab writes them)."""
    lines = text.splitlines()
    out: list[str] = []
    inside = False
    items = 0
    for line in lines:
        if line.startswith(f"{key}:"):
            inside = True
            out.append(line)
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            break
        if line.startswith("  - "):
            items += 1
            if items > count:
                break
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


def _example(title: str, rel: str, text: str) -> list[str]:
    return [f"Example ({title}, from [{rel}](../{rel})):", "", "```yaml", text.rstrip(), "```", ""]


def examples(lab: Path = LAB) -> dict[str, list[str]]:
    """Per section, the example lines taken from the lab inventory."""
    read = {name: (lab / f"{name}.yml").read_text() for name in ("fabric", "switches", "hosts", "links", "groups")}
    fabric = read["fabric"]
    policy = fabric[fabric.index("policy:") :]
    return {
        "Fabric": _example("top of the file", "inventory/lab/fabric.yml", fabric[: fabric.index("policy:")]),
        "Policy": _example("the standard RoCEv2 recipe", "inventory/lab/fabric.yml", policy),
        "Switch": _example(
            "the first two switches", "inventory/lab/switches.yml", _items(read["switches"], "switches", 2)
        ),
        "Host": _example("the first two hosts", "inventory/lab/hosts.yml", _items(read["hosts"], "hosts", 2)),
        "Link": _example("leaf-spine cables", "inventory/lab/links.yml", _items(read["links"], "links", 4)),
        "defaults": _example("defaults and groups", "inventory/lab/groups.yml", read["groups"]),
    }


def inventory_markdown(schema: Schema, lab: Path = LAB) -> str:
    defs: Schema = schema.get("$defs", {})
    ex = examples(lab)
    out = [INTRO, "## Top level", "", str(schema.get("description", "")), ""]
    out += _table(schema.get("properties", {}), list(schema.get("required", [])), defs)
    out += ["", *ex["Fabric"]]
    top = schema.get("properties", {})
    if "defaults" in top:
        out += [
            "### defaults and groups",
            "",
            _description(top["defaults"], defs),
            "",
            _description(top.get("groups", {}), defs),
            "",
        ]
        out += _table(top["defaults"].get("properties", {}), [], defs)
        out += ["", *ex["defaults"]]
    enums = []
    for name in _order(schema):
        node = defs[name]
        if "enum" in node:
            enums.append(name)
            continue
        out += [f"## {name}", ""]
        if node.get("title") and node["title"] != name:
            out += [f"*{node['title']}*", ""]
        if node.get("description"):
            out += [" ".join(str(node["description"]).split()), ""]
        out += _table(node.get("properties", {}), list(node.get("required", [])), defs)
        out.append("")
        if name in ex:
            out += ex[name]
    out += ["## Enumerations", "", "| name | values | description |", "|---|---|---|"]
    for name in enums:
        node = defs[name]
        values = ", ".join(f"`{v}`" for v in node["enum"])
        out.append(f'| <a id="{_anchor(name)}"></a>{name} | {values} | {_description(node, defs)} |')
    return "\n".join(out).rstrip() + "\n"


def generate() -> str:
    sys.path.insert(0, str(REPO))
    from fabricd.cli.schema import inventory_schema

    return inventory_markdown(inventory_schema())


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        if TARGET.read_text() != text:
            print(f"{TARGET} is stale: run scripts/gen_inventory_doc.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
