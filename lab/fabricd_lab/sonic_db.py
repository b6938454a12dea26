"""The simulated SONiC's CONFIG_DB: the checks the Generic Config Updater runs on a target config (the subset of
sonic-yang the lab enforces: known tables, no empty tables, string fields, field ranges, min <= max, references to
ports), one function per table; RFC 6902 JSON patches applied to it; and the edits of sonic-utilities' ``config``
commands (``interface mtu``, ``vlan add``, ``vlan member add``, ``pfcwd start|stop|interval``), one function each.
The shell is :mod:`fabricd_lab.sonic`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

ConfigDb = dict[str, dict[str, dict[str, str]]]

KNOWN_TABLES = frozenset(
    {
        "DEVICE_METADATA",
        "PORT",
        "VLAN",
        "VLAN_MEMBER",
        "VLAN_INTERFACE",
        "INTERFACE",
        "LOOPBACK_INTERFACE",
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PORT_QOS_MAP",
        "WRED_PROFILE",
        "QUEUE",
        "SCHEDULER",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "CABLE_LENGTH",
        "PFC_WD",
        "FLEX_COUNTER_TABLE",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
        "LOSSLESS_TRAFFIC_PATTERN",
    }
)
"""Tables this simulated image has YANG models for; a patch touching another table is rejected."""

_NATURAL = re.compile(r"(\d+)")


def natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in _NATURAL.split(name)]


def _int_in(value: str, lo: int, hi: int) -> bool:
    return value.isdigit() and lo <= int(value) <= hi


def _check_shape(db: ConfigDb) -> str | None:
    """Every table known and not empty, every entry an object of string fields."""
    for table, entries in db.items():
        if table not in KNOWN_TABLES:
            return f"Table {table} does not have a YANG model"
        if not isinstance(entries, dict) or not entries:
            return f"Table {table} is empty; empty tables are not allowed in ConfigDb"
        for key, fields in entries.items():
            if not isinstance(fields, dict):
                return f"{table}|{key}: expected an object of fields"
            for field, value in fields.items():
                if not isinstance(value, str):
                    return f"{table}|{key}|{field}: value must be a string, got {json.dumps(value)}"
    return None


def _check_port(db: ConfigDb) -> str | None:
    for key, port in db.get("PORT", {}).items():
        if "mtu" in port and not _int_in(port["mtu"], 68, 9216):
            return f"PORT|{key}: mtu {port['mtu']} out of range 68..9216"
    return None


def _check_wred_profile(db: ConfigDb) -> str | None:
    for key, prof in db.get("WRED_PROFILE", {}).items():
        for color in ("green", "yellow", "red"):
            lo, hi = prof.get(f"{color}_min_threshold"), prof.get(f"{color}_max_threshold")
            if lo is not None and hi is not None and (not lo.isdigit() or not hi.isdigit() or int(lo) > int(hi)):
                return f"WRED_PROFILE|{key}: {color}_min_threshold {lo} must be <= {color}_max_threshold {hi}"
            prob = prof.get(f"{color}_drop_probability")
            if prob is not None and not _int_in(prob, 0, 100):
                return f"WRED_PROFILE|{key}: {color}_drop_probability {prob} out of range 0..100"
    return None


def _check_pfc_wd_entry(key: str, wd: dict[str, str]) -> str | None:
    if key == "GLOBAL":
        if "POLL_INTERVAL" in wd and not _int_in(wd["POLL_INTERVAL"], 100, 3000):
            return f"PFC_WD|GLOBAL: POLL_INTERVAL {wd['POLL_INTERVAL']} out of range 100..3000"
        return None
    if "detection_time" in wd and not _int_in(wd["detection_time"], 100, 5000):
        return f"PFC_WD|{key}: detection_time {wd['detection_time']} out of range 100..5000"
    if "restoration_time" in wd and not _int_in(wd["restoration_time"], 100, 60000):
        return f"PFC_WD|{key}: restoration_time {wd['restoration_time']} out of range 100..60000"
    if wd.get("action", "drop") not in ("drop", "forward", "alert"):
        return f"PFC_WD|{key}: action {wd.get('action')} is not one of drop, forward, alert"
    return None


def _check_pfc_wd(db: ConfigDb) -> str | None:
    for key, wd in db.get("PFC_WD", {}).items():
        problem = _check_pfc_wd_entry(key, wd)
        if problem:
            return problem
    return None


def _check_port_qos_map(db: ConfigDb) -> str | None:
    for key, qos in db.get("PORT_QOS_MAP", {}).items():
        for field in ("pfc_enable", "pfcwd_sw_enable"):
            if field in qos and qos[field] and not re.fullmatch(r"[0-7](,[0-7])*", qos[field]):
                return f"PORT_QOS_MAP|{key}: {field} {qos[field]!r} is not a list of priorities 0-7"
    return None


def _check_port_refs(db: ConfigDb) -> str | None:
    """QUEUE, BUFFER_PG and BUFFER_QUEUE keys name ports that exist."""
    ports = db.get("PORT", {})
    for table in ("QUEUE", "BUFFER_PG", "BUFFER_QUEUE"):
        for key in db.get(table, {}):
            port_name = key.split("|", 1)[0]
            if port_name not in ports:
                return f"{table}|{key}: port {port_name} does not exist"
    return None


_CHECKS: tuple[Callable[[ConfigDb], str | None], ...] = (
    _check_shape,
    _check_port,
    _check_wred_profile,
    _check_pfc_wd,
    _check_port_qos_map,
    _check_port_refs,
)
"""In the order they run; the shape check first, so the others read well-formed tables."""


def validate(db: ConfigDb) -> str | None:
    """The subset of sonic-yang checks the lab enforces; returns an error message or None."""
    for check in _CHECKS:
        problem = check(db)
        if problem:
            return problem
    return None


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply_patch(db: ConfigDb, ops: list[dict[str, Any]]) -> ConfigDb:
    """Apply RFC 6902 operations (add, remove, replace) to a copy of ``db``; raises ValueError on a bad op."""
    out: Any = copy.deepcopy(db)
    for op in ops:
        kind = op.get("op")
        path = op.get("path")
        if kind not in ("add", "remove", "replace") or not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"unsupported operation {json.dumps(op)}")
        parts = [_unescape(p) for p in path.split("/")[1:]]
        parent = out
        for part in parts[:-1]:
            if not isinstance(parent, dict) or part not in parent:
                raise ValueError(f"path {path} does not exist")
            parent = parent[part]
        last = parts[-1]
        if not isinstance(parent, dict):
            raise ValueError(f"path {path} does not address an object member")
        if kind == "remove":
            if last not in parent:
                raise ValueError(f"can't remove a non-existent object '{last}'")
            del parent[last]
        elif kind == "replace":
            if last not in parent:
                raise ValueError(f"can't replace a non-existent object '{last}'")
            parent[last] = op.get("value")
        else:
            parent[last] = op.get("value")
    result: ConfigDb = out
    return result


class EditError(Exception):
    """A ``config`` edit refused before validation: the message printed and the exit status."""

    def __init__(self, message: str, rc: int = 2) -> None:
        super().__init__(message)
        self.rc = rc


def _edit_mtu(db: ConfigDb, rest: list[str]) -> None:
    """``config interface mtu PORT MTU``."""
    port, mtu = rest[1], rest[2]
    if port not in db.get("PORT", {}):
        raise EditError("Error: Interface name is invalid. Please enter a valid interface name!!")
    db["PORT"][port]["mtu"] = mtu


def _edit_vlan_add(db: ConfigDb, rest: list[str]) -> None:
    """``config vlan add VID``."""
    db.setdefault("VLAN", {})[f"Vlan{rest[1]}"] = {"vlanid": rest[1]}


def _edit_vlan_member(db: ConfigDb, rest: list[str]) -> None:
    """``config vlan member add [-u] VID PORT``."""
    opts = [a for a in rest[2:] if a.startswith("-")]
    vid, port = [a for a in rest[2:] if not a.startswith("-")][:2]
    if f"Vlan{vid}" not in db.get("VLAN", {}):
        raise EditError(f"Error: Vlan{vid} doesn't exist")
    mode = "untagged" if "-u" in opts or "--untagged" in opts else "tagged"
    db.setdefault("VLAN_MEMBER", {})[f"Vlan{vid}|{port}"] = {"tagging_mode": mode}


def _edit_pfcwd_interval(db: ConfigDb, rest: list[str]) -> None:
    """``config pfcwd interval MS``."""
    db.setdefault("PFC_WD", {}).setdefault("GLOBAL", {})["POLL_INTERVAL"] = rest[1]


def _edit_pfcwd_stop(db: ConfigDb, rest: list[str]) -> None:
    """``config pfcwd stop [PORT...]``: every port's entry, or the named ones; the table goes when empty."""
    wd = db.get("PFC_WD", {})
    for port in [p for p in wd if p != "GLOBAL" and (len(rest) == 1 or p in rest[1:])]:
        del wd[port]
    if not wd:
        db.pop("PFC_WD", None)


def _edit_pfcwd_start(db: ConfigDb, rest: list[str]) -> None:
    """``config pfcwd start [--action A] [--restoration-time MS] PORTS... detection-time MS``."""
    action, restore, detect, ports = "drop", None, None, []
    args = rest[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--action", "-a") and i + 1 < len(args):
            action = args[i + 1]
            i += 2
        elif a in ("--restoration-time", "-r") and i + 1 < len(args):
            restore = args[i + 1]
            i += 2
        elif a == "detection-time" and i + 1 < len(args):
            detect = args[i + 1]
            i += 2
        elif a == "ports":
            i += 1
        else:
            ports.append(a)
            i += 1
    if detect is None or not ports:
        raise EditError("Error: Missing argument 'DETECTION_TIME'.")
    for port in ports:
        if port not in db.get("PORT", {}):
            raise EditError(f"Error: Invalid port {port}")
        db.setdefault("PFC_WD", {})[port] = {
            "action": action,
            "detection_time": detect,
            "restoration_time": restore or str(2 * int(detect)),
        }


CLI_EDITS: tuple[tuple[Callable[[str, list[str]], bool], Callable[[ConfigDb, list[str]], None]], ...] = (
    (lambda sub, rest: sub == "interface" and len(rest) == 3 and rest[0] == "mtu", _edit_mtu),
    (lambda sub, rest: sub == "vlan" and rest[:1] == ["add"] and len(rest) == 2 and rest[1].isdigit(), _edit_vlan_add),
    (lambda sub, rest: sub == "vlan" and rest[:2] == ["member", "add"], _edit_vlan_member),
    (lambda sub, rest: sub == "pfcwd" and rest[:1] == ["interval"] and len(rest) == 2, _edit_pfcwd_interval),
    (lambda sub, rest: sub == "pfcwd" and rest[:1] == ["stop"], _edit_pfcwd_stop),
    (lambda sub, rest: sub == "pfcwd" and rest[:1] == ["start"], _edit_pfcwd_start),
)
"""``config`` edits of CONFIG_DB: (does it match the subcommand and its words, the edit), first match wins."""
