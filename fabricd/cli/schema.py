"""``fabricd schema``: the JSON Schema (draft 2020-12) of the inventory, for editors and CI."""

from __future__ import annotations

from typing import Any

import typer

from fabricd.model import Fabric

from .common import OutputFormat, OutputOpt, emit_json


def inventory_schema() -> dict[str, object]:
    schema: dict[str, object] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://fabricd.dev/schema/inventory.json",
        "title": "fabricd inventory",
        "description": "One YAML file, or a directory of YAML files merged together. Devices inherit from "
        "defaults.{switch,host,port,nic} and then from the groups they list.",
    }
    body = Fabric.model_json_schema(mode="validation")
    defs: dict[str, Any] = body.setdefault("$defs", {})
    # Inherited fields: a switch may get platform and mgmt (or mgmt.host) from defaults or groups, so the raw
    # files only require what cannot sensibly be inherited (names). The loader still requires the merged values.
    defs["Switch"]["required"] = ["name"]
    defs["Management"].pop("required", None)
    for kind in ("Switch", "Host", "Port", "Nic"):
        partial = {k: v for k, v in defs[kind].items() if k != "required"}
        partial["title"] = f"{kind} fields (inherited)"
        defs[f"{kind}Fields"] = partial
    for kind, child in (("Switch", "Port"), ("Host", "Nic")):
        group = dict(defs[f"{kind}Fields"])
        group["properties"] = {
            **group.get("properties", {}),
            child.lower(): {
                "$ref": f"#/$defs/{child}Fields",
                "description": f"{child} defaults for every {child.lower()} of the group's members (above "
                f"defaults.{child.lower()}, below the {child.lower()}'s own values)",
            },
        }
        group["title"] = f"{kind} group"
        defs[f"{kind}Group"] = group
    # `cc: null` clears the knobs a NIC inherits (the loader's merge; the model reads null as no knob)
    cc = defs["Nic"]["properties"]["cc"]
    defs["Nic"]["properties"]["cc"] = defs["NicFields"]["properties"]["cc"] = {
        "anyOf": [{k: v for k, v in cc.items() if k not in ("default", "description", "title")}, {"type": "null"}],
        **{k: v for k, v in cc.items() if k in ("default", "description", "title")},
    }
    props = dict(body.get("properties", {}))
    props["defaults"] = {
        "type": "object",
        "description": "Values every switch, host, port or NIC inherits unless it sets its own.",
        "properties": {k: {"$ref": f"#/$defs/{k.capitalize()}Fields"} for k in ("switch", "host", "port", "nic")},
        "additionalProperties": False,
    }
    props["groups"] = {
        "type": "object",
        "description": "Named sets of device fields; a device lists the groups it inherits from, in order.",
        "additionalProperties": {"anyOf": [{"$ref": "#/$defs/SwitchGroup"}, {"$ref": "#/$defs/HostGroup"}]},
    }
    body["properties"] = props
    schema.update(body)
    return schema


def schema_cmd(output: OutputOpt = OutputFormat.JSON) -> None:
    """Print the JSON Schema of the inventory (draft 2020-12).

    [bold]Example[/]: fabricd schema > fabricd.schema.json   (then point your editor's YAML plugin at it)
    """
    emit_json(inventory_schema())


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_cmd)
