"""SONiC ``show runningconfiguration all`` (CONFIG_DB as JSON): the lossless settings in effect per port.

Read back (sonic-buildimage ``qos_config.j2`` / ``buffers_config.j2`` tables):

- ``PORT|<port>``: ``mtu``;
- ``PORT_QOS_MAP|<port>``: ``dscp_to_tc_map`` / ``dot1p_to_tc_map`` (the bound map gives the trust),
  ``tc_to_queue_map``, ``pfc_enable`` (``"3,4"``) and ``pfcwd_sw_enable`` (the priorities the watchdog watches;
  releases without it watch ``pfc_enable``);
- ``DSCP_TO_TC_MAP`` / ``DOT1P_TO_TC_MAP`` / ``TC_TO_QUEUE_MAP``: the maps those names refer to;
- ``PFC_WD|<port>``: the watchdog is on for a port with an entry; ``detection_time`` / ``restoration_time`` in ms;
- ``QUEUE|<port>|<queues>``: ``wred_profile`` -> ``WRED_PROFILE`` (``ecn`` ``ecn_none`` = marking off; the green
  thresholds in bytes and ``green_drop_probability`` in %), ``scheduler`` -> ``SCHEDULER`` (``type`` ``STRICT``: a
  strict queue). Queue keys may be ranges (``Ethernet0|3-4``);
- the lossless path: ``PORT_QOS_MAP|<port>`` ``pfc_to_queue_map`` -> ``MAP_PFC_PRIORITY_TO_QUEUE`` (the queue a PFC
  frame for a priority stops; unbound: the identity, as SONiC's own ``qos_config.j2`` AZURE map), ``tc_to_pg_map``
  -> ``TC_TO_PRIORITY_GROUP_MAP`` and ``BUFFER_PG|<port>|<pgs>`` -> ``BUFFER_PROFILE`` (a PG is lossless when its
  profile has ``xoff`` headroom or draws from ``ingress_lossless_pool``, or is ``NULL``: the dynamic buffer model
  computes its headroom; an unbound ``tc_to_pg_map`` is the identity). ``pfcwd_sw_enable`` names *queues*
  (sonic-port-qos-map.yang); sonic-swss's pfcwdorch watches queue i for bit i and its storm detector
  (``orchagent/pfc_detect_*.lua``) counts ``SAI_PORT_STAT_PFC_<i>_RX_PKTS``, the pause frames of priority i.

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


def _queue_key(key: str) -> tuple[str, str] | None:
    """``<port>|<queues>`` (or ``<host>|<asic>|<port>|<queues>`` on a VOQ chassis) -> (port, queues)."""
    parts = key.split("|")
    return (parts[-2], parts[-1]) if len(parts) >= 2 else None


def _strict_queues(db: dict[str, Any]) -> dict[str, set[int]]:
    """QUEUE -> SCHEDULER: port -> its queues whose scheduler is ``STRICT``."""
    schedulers = _table(db, "SCHEDULER")
    strict: dict[str, set[int]] = {}
    for key, row in _table(db, "QUEUE").items():
        sched = schedulers.get(_ref(row.get("scheduler")) or "")
        where = _queue_key(key)
        if where is not None and sched is not None and str(sched.get("type", "")).upper() == "STRICT":
            strict.setdefault(where[0], set()).update(int_list(where[1], 0, 15) or [])
    return strict


def _lossless_pgs(db: dict[str, Any]) -> dict[str, set[int]]:
    """BUFFER_PG -> BUFFER_PROFILE: port -> its priority groups with lossless headroom."""
    profiles = _table(db, "BUFFER_PROFILE")
    lossless_pgs: dict[str, set[int]] = {}
    for key, row in _table(db, "BUFFER_PG").items():
        pname = _ref(row.get("profile")) or ""
        prof = profiles.get(pname)
        lossless = pname == "NULL" or (
            prof is not None
            and bool(to_int(str(prof.get("xoff", ""))) or _ref(prof.get("pool")) == "ingress_lossless_pool")
        )
        where = _queue_key(key)
        if where is not None and lossless:
            lossless_pgs.setdefault(where[0], set()).update(int_list(where[1], 0, 15) or [])
    return lossless_pgs


def _wred(prof: dict[str, Any]) -> EcnConfig:
    """One WRED_PROFILE row: marking on unless ``ecn_none``; the green thresholds and probability."""
    return EcnConfig(
        enabled=str(prof.get("ecn", "ecn_none")) != "ecn_none",
        min_bytes=to_int(str(prof.get("green_min_threshold", ""))),
        max_bytes=to_int(str(prof.get("green_max_threshold", ""))),
        probability_percent=to_int(str(prof.get("green_drop_probability", ""))),
    )


def _ecn(db: dict[str, Any], problems: list[str]) -> dict[str, dict[int, EcnConfig]]:
    """QUEUE -> WRED_PROFILE: port -> queue -> its ECN settings."""
    wred = _table(db, "WRED_PROFILE")
    ecn: dict[str, dict[int, EcnConfig]] = {}
    for key, row in _table(db, "QUEUE").items():
        where = _queue_key(key)
        profile = _ref(row.get("wred_profile"))
        if where is None or not profile:
            continue
        prof = wred.get(profile)
        if prof is None:
            problems.append(f"QUEUE|{key}: wred_profile {profile!r} is not in WRED_PROFILE")
            continue
        setting = _wred(prof)
        for q in int_list(where[1], 0, 15) or []:
            ecn.setdefault(where[0], {})[q] = setting
    return ecn


class _Db:
    """The CONFIG_DB tables a port's row in PORT_QOS_MAP refers to, and what is read per port from the others."""

    def __init__(self, db: dict[str, Any], problems: list[str]) -> None:
        self.port = _table(db, "PORT")
        self.qos_map = _table(db, "PORT_QOS_MAP")
        self.maps = {field: _table(db, table) for field, table in _MAP_TABLES.items()}
        self.pfc_wd = _table(db, "PFC_WD")
        self.strict = _strict_queues(db)
        self.lossless_pgs = _lossless_pgs(db)
        self.ecn = _ecn(db, problems)

    def bound(self, row: dict[str, Any], field: str, hi: int = 7) -> dict[int, int] | None:
        """The map a PORT_QOS_MAP row binds in ``field`` (None: unbound or not in the config)."""
        return _map(self.maps[field], _ref(row.get(field)), hi)


_MAP_TABLES = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
}
"""PORT_QOS_MAP field -> the table of the maps it names."""
_CHECKED_MAPS = ("dscp_to_tc_map", "dot1p_to_tc_map", "tc_to_queue_map")
"""The PORT_QOS_MAP fields whose dangling reference is a problem."""


def _port(name: str, t: _Db, problems: list[str]) -> PortConfig:
    """One port: its PORT row, its PORT_QOS_MAP row with the maps it binds, and its PFC_WD row."""
    row = t.qos_map.get(name, {})
    dscp = t.bound(row, "dscp_to_tc_map", 63)
    dot1p = t.bound(row, "dot1p_to_tc_map")
    for field in _CHECKED_MAPS:
        value = row.get(field)
        if value and (_ref(value) is None or _ref(value) not in t.maps[field]):
            problems.append(f"PORT_QOS_MAP|{name}: {field} {value!r} names no map in the config")
    trust: Trust | None = "dscp" if dscp is not None else "pcp" if dot1p is not None else None
    pfc = _prios(row.get("pfc_enable")) or frozenset()
    wd_entry = t.pfc_wd.get(name)
    watched: frozenset[int] = frozenset()
    if wd_entry is not None:
        sw_enable = _prios(row.get("pfcwd_sw_enable"))
        watched = sw_enable if sw_enable is not None else pfc
    to_queue = t.bound(row, "pfc_to_queue_map")
    to_pg = t.bound(row, "tc_to_pg_map")
    pgs = t.lossless_pgs.get(name, set())
    return PortConfig(
        name=name,
        mtu_bytes=to_int(str(t.port.get(name, {}).get("mtu", ""))),
        trust=trust,
        dscp_to_priority=dscp,
        pcp_to_priority=dot1p,
        priority_to_queue=t.bound(row, "tc_to_queue_map"),
        pfc_priorities=pfc,
        watchdog_priorities=watched,
        detection_ms=to_int(str(wd_entry.get("detection_time", ""))) if wd_entry else None,
        restoration_ms=to_int(str(wd_entry.get("restoration_time", ""))) if wd_entry else None,
        ecn=t.ecn.get(name, {}),
        pfc_queues={p: (to_queue.get(p, p) if to_queue is not None else p) for p in pfc},
        watchdog_queues={q: frozenset({q}) for q in watched},
        buffered_priorities=frozenset(p for p in pfc if (to_pg.get(p) if to_pg is not None else p) in pgs),
        strict_queues=frozenset(t.strict.get(name, set())),
    )


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
    problems: list[str] = []
    tables = _Db(db, problems)
    ports = {name: _port(name, tables, problems) for name in sorted(set(tables.port) | set(tables.qos_map))}
    return LosslessConfig(PLATFORM, ports, tuple(problems))
