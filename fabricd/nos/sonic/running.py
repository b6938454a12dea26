"""SONiC ``show runningconfiguration all`` (CONFIG_DB as JSON): the lossless settings in effect per port.

Read back (sonic-buildimage ``qos_config.j2`` / ``buffers_config.j2`` tables):

- ``PORT|<port>``: ``mtu``;
- ``PORT_QOS_MAP|<port>``: ``dscp_to_tc_map`` / ``dot1p_to_tc_map`` (the bound map gives the trust),
  ``tc_to_queue_map``, ``pfc_enable`` (``"3,4"``) and ``pfcwd_sw_enable`` (the priorities the watchdog watches;
  releases without it watch ``pfc_enable``);
- ``DSCP_TO_TC_MAP`` / ``DOT1P_TO_TC_MAP`` / ``TC_TO_QUEUE_MAP``: the maps those names refer to;
- ``PFC_WD|<port>``: the watchdog is on for a port with an entry; ``detection_time`` / ``restoration_time`` in ms;
- ``QUEUE|<port>|<queues>``: ``wred_profile`` -> ``WRED_PROFILE`` (``ecn`` ``ecn_none`` = marking off; the green
  thresholds in bytes and ``green_drop_probability`` in %). Queue keys may be ranges (``Ethernet0|3-4``).

No public CONFIG_DB capture of a lossless port exists in the fixtures; the golden is the lab simulator's output
after pushing inventory/lab, whose tables follow sonic-buildimage's templates.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabricd.readers.framing import framed
from fabricd.readers.switch.config_model import EcnConfig, LosslessConfig, PortConfig, Trust, int_list, to_int

PLATFORM = "sonic"

Table = dict[str, dict[str, Any]]


def _table(db: dict[str, Any], name: str) -> Table:
    value = db.get(name)
    return {k: v for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    """A CONFIG_DB field value: every value is a string; anything else is unreadable (None)."""
    return value if isinstance(value, str) else None


_REF = re.compile(r"^\[(?P<table>[A-Z0-9_]+)\|(?P<name>[^\]]+)\]$")


def _ref(value: Any) -> str | None:
    """A reference to another table's row: a plain name, or the older ``[TABLE|name]`` form (still in
    sonic-utilities' mock CONFIG_DB: ``"scheduler": "[SCHEDULER|scheduler.0]"``), read as the name."""
    text = _str(value)
    if text is None:
        return None
    m = _REF.match(text)
    return m.group("name") if m else text


def _map(table: Table, name: str | None, hi: int) -> dict[int, int] | None:
    if not name or name not in table:
        return None
    out: dict[int, int] = {}
    for key, value in table[name].items():
        k, v = to_int(str(key)), to_int(str(value))
        if k is not None and v is not None and k <= hi and v <= 7:
            out[k] = v
    return out


def _prios(text: Any) -> frozenset[int] | None:
    if not isinstance(text, str):
        return None
    return frozenset(int_list(text, 0, 7) or [])


@framed
def parse_running_config(text: str) -> LosslessConfig:
    """Per-port lossless settings from CONFIG_DB JSON (``show runningconfiguration all``)."""
    start = text.find("{")
    try:
        db = json.loads(text[start:]) if start >= 0 else None
    except ValueError as exc:
        return LosslessConfig(PLATFORM, {}, (f"running config is not JSON: {exc}",))
    if not isinstance(db, dict):
        return LosslessConfig(PLATFORM, {}, ("running config is not a CONFIG_DB object",))
    port_table = _table(db, "PORT")
    qos_map = _table(db, "PORT_QOS_MAP")
    dscp_maps, dot1p_maps, queue_maps = (_table(db, t) for t in ("DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP",
                                                                   "TC_TO_QUEUE_MAP"))
    pfc_wd = _table(db, "PFC_WD")
    wred = _table(db, "WRED_PROFILE")
    ecn: dict[str, dict[int, EcnConfig]] = {}
    problems: list[str] = []
    for key, row in _table(db, "QUEUE").items():
        parts = key.split("|")  # <port>|<queues>, or <host>|<asic>|<port>|<queues> on a VOQ chassis
        if len(parts) < 2:
            continue
        port, queues = parts[-2], parts[-1]
        profile = _ref(row.get("wred_profile"))
        if not profile:
            continue
        prof = wred.get(profile)
        if prof is None:
            problems.append(f"QUEUE|{key}: wred_profile {profile!r} is not in WRED_PROFILE")
            continue
        setting = EcnConfig(
            enabled=str(prof.get("ecn", "ecn_none")) != "ecn_none",
            min_bytes=to_int(str(prof.get("green_min_threshold", ""))),
            max_bytes=to_int(str(prof.get("green_max_threshold", ""))),
            probability_percent=to_int(str(prof.get("green_drop_probability", ""))),
        )
        for q in int_list(queues, 0, 15) or []:
            ecn.setdefault(port, {})[q] = setting
    ports: dict[str, PortConfig] = {}
    for name in sorted(set(port_table) | set(qos_map)):
        row = qos_map.get(name, {})
        dscp = _map(dscp_maps, _ref(row.get("dscp_to_tc_map")), 63)
        dot1p = _map(dot1p_maps, _ref(row.get("dot1p_to_tc_map")), 7)
        for field, table in (("dscp_to_tc_map", dscp_maps), ("dot1p_to_tc_map", dot1p_maps),
                             ("tc_to_queue_map", queue_maps)):
            value = row.get(field)
            if value and (_ref(value) is None or _ref(value) not in table):
                problems.append(f"PORT_QOS_MAP|{name}: {field} {value!r} names no map in the config")
        trust: Trust | None = "dscp" if dscp is not None else "pcp" if dot1p is not None else None
        pfc = _prios(row.get("pfc_enable")) or frozenset()
        wd_entry = pfc_wd.get(name)
        watched: frozenset[int] = frozenset()
        if wd_entry is not None:
            sw_enable = _prios(row.get("pfcwd_sw_enable"))
            watched = sw_enable if sw_enable is not None else pfc
        ports[name] = PortConfig(
            name=name, mtu_bytes=to_int(str(port_table.get(name, {}).get("mtu", ""))), trust=trust,
            dscp_to_priority=dscp, pcp_to_priority=dot1p,
            priority_to_queue=_map(queue_maps, _ref(row.get("tc_to_queue_map")), 7),
            pfc_priorities=pfc, watchdog_priorities=watched,
            detection_ms=to_int(str(wd_entry.get("detection_time", ""))) if wd_entry else None,
            restoration_ms=to_int(str(wd_entry.get("restoration_time", ""))) if wd_entry else None,
            ecn=ecn.get(name, {}),
        )
    return LosslessConfig(PLATFORM, ports, tuple(problems))
