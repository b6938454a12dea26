"""SONiC's own YANG models, through libyang, as the oracle for fabricd's SONiC renders.

SONiC validates CONFIG_DB against its YANG models in ``config apply-patch`` (GCU), ``config replace`` and, when
``yang_config_validation`` is on, in the ``config`` commands; ``config load`` does not, so a row the models refuse
reaches CONFIG_DB and breaks the next validated operation. This module does what sonic-yang-mgmt does before it asks
libyang (``sonic_yang_ext.py`` in sonic-buildimage; its behaviour re-implemented here, not its code):

- the table map: every loaded module ``sonic-x`` has one top-level container ``sonic-x``; each configuration
  container under it is the CONFIG_DB table of the same name;
- a table container holds one list ``<TABLE>_LIST`` or several lists (multi-list tables); a row goes to the first
  list whose key leaves match the row key split on ``|`` and whose leaves hold every field of the row;
- "type 1" map lists (DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, CABLE_LENGTH, ...): a row ``{k: v, ...}`` becomes the inner
  list ``[{<inner key>: k, <inner value>: v}, ...]``;
- containers in a table container (``DEVICE_METADATA|localhost``): the row key is the container's name;
- leaf-list fields that CONFIG_DB stores as one separated string (``PORT.adv_speeds`` ...) are split;
- ``uint*`` leaves become JSON numbers, every other value stays a string, and libyang parses with
  ``LYD_PARSE_JSON_STRING_DATATYPES`` (strict, no state data), as SONiC does;
- a field no leaf holds, or a row no list takes, refuses the table (sonic-yang-mgmt's "All Keys are not parsed");
  a table no loaded module covers is refused too (sonic-yang-mgmt would only crop it out with a note: here it counts
  as a rejection so that a new fabricd table cannot pass unseen).

libyang 3.12.2 and the CESNET bindings 3.1.0 come from ``scripts/libyang.sh``; :func:`libyang_missing` says why they
are not there when they are not.
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(__file__).resolve().parent / "sonic-yang"

# libyang 3.12.2 parser_data.h: LYD_PARSE_JSON_STRING_DATATYPES. The bindings 3.1.0 do not expose it (SONiC's
# build patches them to), so the parse below calls lyd_parse_data_mem itself.
LYD_PARSE_JSON_STRING_DATATYPES = 0x8000000

# sonic-yang-mgmt's "type 1" map lists: a CONFIG_DB row {k: v} is an inner YANG list of {key: k, value: v}.
TYPE1_MAP_LISTS = frozenset(
    {
        "DSCP_TO_TC_MAP_LIST",
        "DOT1P_TO_TC_MAP_LIST",
        "TC_TO_PRIORITY_GROUP_MAP_LIST",
        "TC_TO_QUEUE_MAP_LIST",
        "MAP_PFC_PRIORITY_TO_QUEUE_LIST",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP_LIST",
        "DSCP_TO_FC_MAP_LIST",
        "EXP_TO_FC_MAP_LIST",
        "CABLE_LENGTH_LIST",
        "MPLS_TC_TO_TC_MAP_LIST",
        "TC_TO_DSCP_MAP_LIST",
    }
)

# Leaf-lists that CONFIG_DB keeps as one string, and their separator (sonic-yang-mgmt's list of such fields).
STRING_LEAF_LISTS = {
    ("MIRROR_SESSION", "src_ip"): ",",
    ("NTP", "src_intf"): ";",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v4"): ",",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v6"): ",",
    ("BUFFER_PORT_EGRESS_PROFILE_LIST", "profile_list"): ",",
    ("BUFFER_PORT_INGRESS_PROFILE_LIST", "profile_list"): ",",
    ("PORT", "adv_speeds"): ",",
    ("PORT", "adv_interface_types"): ",",
}


def libyang_missing() -> str | None:
    """Why the libyang bindings cannot be used here, or None when they can."""
    import importlib.metadata

    why = REPO / "build" / "libyang3.missing"
    reason = why.read_text().strip() if why.exists() else "scripts/libyang.sh has not run (make libyang)"
    try:
        import libyang  # noqa: F401
    except ImportError as e:
        return f"libyang 3.12.2 + bindings 3.1.0 not importable ({e}); {reason}"
    version = importlib.metadata.version("libyang")
    if version != "3.1.0":
        return f"the libyang bindings are {version}, not the 3.1.0 SONiC pins; {reason}"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@dataclass(frozen=True)
class Rejection:
    """One thing SONiC's YANG refuses: the CONFIG_DB table and row key (``""`` when table-wide) and why."""

    table: str
    key: str
    message: str
    path: str = ""

    def __str__(self) -> str:
        where = f"{self.table}|{self.key}" if self.key else self.table
        return f"{where}: {self.message}" + (f" ({self.path})" if self.path else "")


class _NoFitError(Exception):
    """A row that a list cannot take (wrong key arity, a field the list has no leaf for, a bad integer)."""


class SonicYang:
    """The loaded models and the table map; :meth:`check` validates a whole CONFIG_DB dict."""

    def __init__(self, models: Path = MODELS) -> None:
        import libyang as ly

        self._ly = ly
        self.ctx = ly.Context(str(models), disable_searchdirs=False)
        self.modules = sorted(p.stem for p in models.glob("*.yang"))
        for name in self.modules:
            self.ctx.load_module(name)
        self.tables: dict[str, tuple[str, Any]] = {}
        for name in self.modules:
            module = self.ctx.get_module(name)
            top = next(iter(module.children(types=(ly.SNode.CONTAINER,))), None)
            if top is None or top.config_false():
                continue  # typedef/grouping-only module, or state data
            assert top.name() == name, f"{name}: top-level container {top.name()}"
            for table in top.children(types=(ly.SNode.CONTAINER,)):
                if not table.config_false():
                    self.tables[table.name()] = (name, table)

    # --- translation ---------------------------------------------------------------------------------------------

    def translate(self, config_db: dict[str, Any]) -> tuple[dict[str, Any], list[Rejection]]:
        """CONFIG_DB -> YANG instance JSON, and what cannot be translated (unknown tables, fields, rows)."""
        out: dict[str, Any] = {}
        problems: list[Rejection] = []
        for table, rows in config_db.items():
            if table not in self.tables:
                problems.append(
                    Rejection(
                        table,
                        "",
                        "no loaded SONiC YANG module has this table "
                        f"(loaded: {len(self.modules)} modules from {MODELS.name}/)",
                    )
                )
                continue
            module, snode = self.tables[table]
            try:
                body = self._container(snode, rows, table)
            except _NoFitError as e:
                problems.append(Rejection(table, "", str(e)))
                continue
            out.setdefault(f"{module}:{module}", {})[f"{module}:{table}"] = body
        return out, problems

    def _container(self, snode: Any, rows: dict[str, Any], table: str) -> dict[str, Any]:
        ly = self._ly
        left = dict(rows)
        out: dict[str, Any] = {}
        why: list[str] = []
        lists = list(snode.children(types=(ly.SNode.LIST,)))
        if len(lists) > 1 or (lists and lists[0].name() == f"{snode.name()}_LIST"):
            for lst in lists:
                entries = []
                for key in list(left):
                    try:
                        entries.append(self._entry(lst, key, left[key], table))
                    except _NoFitError as e:
                        why.append(str(e))
                        continue
                    del left[key]
                if entries:
                    out[lst.name()] = entries
        for inner in snode.children(types=(ly.SNode.CONTAINER,)):
            if inner.name() in left:
                sub = left.pop(inner.name())
                if sub:
                    out[inner.name()] = self._container(inner, sub, table)
        leaves = {c.name(): c for c in snode.children(types=(ly.SNode.LEAF, ly.SNode.LEAFLIST))}
        for field in [f for f in left if f in leaves]:
            out[field] = self._value(leaves[field], left.pop(field), table, field)
        if left:
            raise _NoFitError(
                f"rows/fields the model has no place for: {sorted(left)}"
                + (f" ({'; '.join(dict.fromkeys(why))})" if why else "")
            )
        return out

    def _entry(self, lst: Any, key: str, row: Any, table: str) -> dict[str, Any]:
        ly = self._ly
        key_leaves = lst.keys()  # SNode.keys(): the list's key leaves
        names = [k.name() for k in key_leaves]
        parts = key.split("|")
        if len(parts) != len(names):
            raise _NoFitError(f"{key!r}: {lst.name()} keys are {names}")
        entry: dict[str, Any] = {n: p.strip() for n, p in zip(names, parts, strict=True)}
        if not isinstance(row, dict):
            raise _NoFitError(f"{key!r}: a row must be an object, got {type(row).__name__}")
        if lst.name() in TYPE1_MAP_LISTS:
            inner = next(iter(lst.children(types=(ly.SNode.LIST,))), None)
            if inner is None:
                raise _NoFitError(f"{lst.name()} has no inner list")
            inner_keys = inner.keys()
            ikey = next(k.name() for k in inner_keys)
            ival = next(c.name() for c in inner.children(types=(ly.SNode.LEAF,)) if c.name() != ikey)
            entry[inner.name()] = [{ikey: str(k), ival: str(v)} for k, v in row.items()]
            return entry
        containers = {c.name(): c for c in lst.children(types=(ly.SNode.CONTAINER,))}
        leaves = {c.name(): c for c in lst.children(types=(ly.SNode.LEAF, ly.SNode.LEAFLIST))}
        for field, value in row.items():
            if field in containers:
                entry[field] = self._container(containers[field], value, table)
            elif field in leaves:
                entry[field] = self._value(leaves[field], value, table, field)
            else:
                raise _NoFitError(f"{key!r}: field {field!r} is not a leaf of {lst.name()}")
        return entry

    def _value(self, leaf: Any, value: Any, table: str, field: str) -> Any:
        def convert(v: Any) -> Any:
            text = str(v)
            if "uint" in leaf.type().basename():
                try:
                    return int(text, 10)
                except ValueError:
                    raise _NoFitError(f"{field}={text!r}: not an integer ({leaf.type().basename()})") from None
            return text

        if isinstance(leaf, self._ly.SLeafList):
            if isinstance(value, str):
                sep = STRING_LEAF_LISTS.get((table, field))
                if sep is None:
                    raise _NoFitError(
                        f"{field}={value!r}: a leaf-list given as one string (CONFIG_DB splits only "
                        f"{sorted(f'{t}.{f}' for t, f in STRING_LEAF_LISTS)})"
                    )
                value = [x.strip() for x in value.split(sep)]
            return [convert(v) for v in value if v != ""]
        return convert(value)

    # --- validation ----------------------------------------------------------------------------------------------

    def check(self, config_db: dict[str, Any]) -> list[Rejection]:
        """Everything SONiC's YANG refuses in ``config_db`` (a whole CONFIG_DB: merge fragments onto a base)."""
        from _libyang import ffi, lib

        data, problems = self.translate(config_db)
        tree = ffi.new("struct lyd_node **")
        parse = lib.LYD_PARSE_STRICT | lib.LYD_PARSE_NO_STATE | LYD_PARSE_JSON_STRING_DATATYPES
        # SONiC stops at the first error. LYD_VALIDATE_MULTI_ERROR would list them all, but libyang 3.12.2 crashes
        # (SIGSEGV) with it when a list key fails its pattern and another table's leafref points at that list.
        valid = lib.LYD_VALIDATE_NO_STATE
        text = json.dumps(data).encode()
        ret = lib.lyd_parse_data_mem(self.ctx.cdata, text, lib.LYD_JSON, parse, valid, tree)
        if ret != lib.LY_SUCCESS:
            err = lib.ly_err_first(self.ctx.cdata)
            while err:
                msg = ffi.string(err.msg).decode() if err.msg else "libyang error"
                path = ffi.string(err.data_path).decode() if err.data_path else ""
                table, key = _row_of(path)
                problems.append(Rejection(table or "?", key, msg, path))
                err = err.next
            lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
            if ret != lib.LY_SUCCESS and not problems:
                problems.append(Rejection("?", "", f"libyang returned {ret} with no error message"))
        if tree[0]:
            lib.lyd_free_all(tree[0])
        return problems


_PRED = re.compile(r"\[[^=\]]+='((?:[^']|'')*)'\]")


def _row_of(path: str) -> tuple[str, str]:
    """The CONFIG_DB table and row key a libyang data path points into (``/mod:top/TABLE/TABLE_LIST[k='v']/...``)."""
    steps = [s for s in re.split(r"/(?![^\[]*\])", path) if s]
    if len(steps) < 2:
        return "", ""
    table = steps[1].split(":")[-1]
    if len(steps) < 3:
        return table, ""
    third = steps[2].split(":")[-1]
    values = _PRED.findall(third)
    if values:
        return table, "|".join(values)
    name = third.split("[")[0]
    if name.endswith("_LIST"):
        return table, ""  # a list instance whose key did not parse
    return table, name  # a container in the table container (DEVICE_METADATA/localhost)


@cache
def oracle() -> SonicYang:
    return SonicYang()


# --- the base a fragment merges onto ------------------------------------------------------------------------------


def ports_of(config_db: dict[str, Any]) -> list[str]:
    """Every port name a fabricd CONFIG_DB fragment refers to (row keys and CABLE_LENGTH members)."""
    seen: dict[str, None] = {}
    for table, rows in config_db.items():
        for key, row in rows.items():
            if table in ("PORT", "PORT_QOS_MAP", "PFC_WD"):
                seen[key] = None
            elif table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
                seen[key.split("|")[0]] = None
            elif table == "VLAN_MEMBER":
                seen[key.split("|")[-1]] = None
            elif table == "CABLE_LENGTH":
                seen.update(dict.fromkeys(row))
    seen.pop("GLOBAL", None)
    seen.pop("global", None)
    return list(seen)


def base_config(ports: list[str], speed_mbps: int = 400_000) -> dict[str, Any]:
    """The minimal CONFIG_DB a fabricd fragment assumes the switch already has: DEVICE_METADATA|localhost, a PORT row
    (lanes and speed, both mandatory in sonic-port.yang) per port, and the stock traditional-model buffer pools.

    The pool shapes (ingress_lossless_pool dynamic, egress_lossless_pool static, egress_lossy_pool dynamic) are those
    of SONiC's buffer HLD example of the traditional buffer model; the sizes are placeholders (YANG types them, it
    does not size them). The lanes are synthetic (four per port, from the port's number); the models do not relate
    lanes or speed to anything fabricd writes."""
    port_rows: dict[str, dict[str, str]] = {}
    for i, name in enumerate(ports):
        m = re.search(r"(\d+)$", name)
        first = int(m.group(1)) if m else 4 * i
        port_rows[name] = {
            "lanes": ",".join(str(first * 2 + n) for n in range(4)),
            "speed": str(speed_mbps),
            "admin_status": "up",
        }
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "conformance",
                "hwsku": "ACS-MSN2700",
                "platform": "x86_64-mlnx_msn2700-r0",
                "mac": "52:54:00:12:34:56",
                "type": "LeafRouter",
                "buffer_model": "traditional",
            }
        },
        "PORT": port_rows,
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "10875072", "xoff": "4194112"},
            "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "15982720"},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "9243812"},
        },
    }


def merged(base: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    """``fragment`` applied onto ``base`` as ``config load`` applies a file: field by field, the fragment winning."""
    out = copy.deepcopy(base)
    for table, rows in fragment.items():
        dest = out.setdefault(table, {})
        for key, row in rows.items():
            dest.setdefault(key, {}).update(row)
    return out


def check_fragment(fragment: dict[str, Any]) -> list[Rejection]:
    """What SONiC's YANG refuses in a fabricd CONFIG_DB fragment merged onto :func:`base_config`."""
    return oracle().check(merged(base_config(ports_of(fragment)), fragment))


def rows_of(config_db: dict[str, Any]) -> int:
    """The CONFIG_DB rows of a fragment (the verdict's 'lines')."""
    return sum(len(rows) for rows in config_db.values())
