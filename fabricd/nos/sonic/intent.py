"""SONiC intent shaping: the CONFIG_DB tables fabricd writes (``json.dumps`` of :class:`SonicConfigDb`, never
Jinja) and the equivalent ``sonic-cfggen`` / ``config`` lines. Headroom profiles are named as SONiC's own buffer
manager names them (``pg_lossless_<speed>_<cable>m_profile``); ECN thresholds are bytes."""

from __future__ import annotations

import json
import math
from functools import cached_property
from typing import Any

from pydantic import Field

from fabricd.intent.render_warnings import WarningSink
from fabricd.intent.switch import (
    NUM_DSCP,
    NUM_PRIORITIES,
    IntentShaping,
    PolicyParts,
    PortIntent,
    ShapeContext,
    SwitchIntentBase,
    VlanIntent,
    cable_text,
    label,
)
from fabricd.intent.units import plain_list
from fabricd.model import Fabric, Platform, Speed, TrustMode
from fabricd.model.types import Model

from .watchdog import SonicWatchdog, sonic_watchdog

_label = label

SONIC_MAP = "FABRICD"
"""Name of the DSCP/TC/PG maps fabricd writes to SONiC CONFIG_DB (SONiC's own templates use AZURE)."""
SONIC_CABLE_PROFILE = "AZURE"
"""CABLE_LENGTH key: SONiC's buffers_config.j2 writes cable lengths under CABLE_LENGTH|AZURE."""
SONIC_LOSSLESS_POOL = "ingress_lossless_pool"
"""The ingress lossless pool every SONiC SKU's default buffer config defines (buffers_defaults_*.j2)."""


class SonicConfigDb(Model):
    """The CONFIG_DB tables fabricd writes, as ``config load`` reads them (every value a string)."""

    DSCP_TO_TC_MAP: dict[str, dict[str, str]] | None = None
    DOT1P_TO_TC_MAP: dict[str, dict[str, str]] | None = None
    TC_TO_QUEUE_MAP: dict[str, dict[str, str]]
    TC_TO_PRIORITY_GROUP_MAP: dict[str, dict[str, str]]
    MAP_PFC_PRIORITY_TO_QUEUE: dict[str, dict[str, str]]
    PORT_QOS_MAP: dict[str, dict[str, str]]
    WRED_PROFILE: dict[str, dict[str, str]] | None = None
    SCHEDULER: dict[str, dict[str, str]]
    QUEUE: dict[str, dict[str, str]]
    CABLE_LENGTH: dict[str, dict[str, str]] | None = None
    BUFFER_PROFILE: dict[str, dict[str, str]] | None = None
    BUFFER_PG: dict[str, dict[str, str]] | None = None
    PFC_WD: dict[str, dict[str, str]] | None = None
    VLAN: dict[str, dict[str, str]] | None = None
    VLAN_MEMBER: dict[str, dict[str, str]] | None = None
    PORT: dict[str, dict[str, str]]

    def to_json(self) -> str:
        """The config_db JSON file (``config load FILE``): ``json.dumps``, 4-space indent, sorted keys."""
        return json.dumps(self.model_dump(exclude_none=True), indent=4, sort_keys=True) + "\n"


class SonicTableLine(Model):
    """One CONFIG_DB table row as compact JSON for ``sonic-cfggen -a '<json>' --write-to-db``: a reviewer reads one
    short command per row (a 64-port QUEUE table was one 15 KB line), and cfggen merges rows into the table as it
    merges tables (``mod_config``: fields set, other keys kept)."""

    table: str = _label("CONFIG_DB table name")
    json_text: str = _label("json.dumps of {table: {key: row}}, compact, sorted keys")


class SonicSwitchIntent(SwitchIntentBase):
    """SONiC: CONFIG_DB tables plus the equivalent ``config`` CLI lines.

    The ``*_lines`` (one cfggen JSON document per row) are computed from ``config_db`` when a template first reads
    them: validate builds every switch's intent for the packs' rules and never renders, and serialising each row
    was most of its time (docs/PERFORMANCE.md, bench/validate.py)."""

    platform: Platform = Platform.SONIC
    config_db: SonicConfigDb
    port_descriptions: dict[str, str] = Field(
        default_factory=dict, description="PORT descriptions (the ports that have one)"
    )
    pfcwd_ports: str = _label("space-separated ports for `config pfcwd start`")
    watchdog: SonicWatchdog | None

    @cached_property
    def _dumped(self) -> dict[str, Any]:
        return self.config_db.model_dump(exclude_none=True)

    def _lines(self, *tables: str) -> list[SonicTableLine]:
        dumped = self._dumped
        return [
            SonicTableLine(table=t, json_text=_ROW_JSON({t: {key: row}}))
            for t in tables
            if t in dumped
            for key, row in sorted(dumped[t].items())
        ]

    @cached_property
    def map_lines(self) -> list[SonicTableLine]:
        """DSCP/DOT1P, TC->queue, TC->PG and PFC priority->queue maps, as cfggen JSON."""
        return self._lines(
            "DSCP_TO_TC_MAP",
            "DOT1P_TO_TC_MAP",
            "TC_TO_QUEUE_MAP",
            "TC_TO_PRIORITY_GROUP_MAP",
            "MAP_PFC_PRIORITY_TO_QUEUE",
        )

    @cached_property
    def ecn_lines(self) -> list[SonicTableLine]:
        """WRED_PROFILE, as cfggen JSON."""
        return self._lines("WRED_PROFILE")

    @cached_property
    def scheduler_lines(self) -> list[SonicTableLine]:
        """SCHEDULER and QUEUE, as cfggen JSON."""
        return self._lines("SCHEDULER", "QUEUE")

    @cached_property
    def buffer_lines(self) -> list[SonicTableLine]:
        """CABLE_LENGTH, BUFFER_PROFILE, BUFFER_PG, as cfggen JSON."""
        return self._lines("CABLE_LENGTH", "BUFFER_PROFILE", "BUFFER_PG")

    @cached_property
    def pfc_lines(self) -> list[SonicTableLine]:
        """PORT_QOS_MAP (pfc_enable, pfcwd_sw_enable), as cfggen JSON."""
        return self._lines("PORT_QOS_MAP")

    @cached_property
    def vlan_lines(self) -> list[SonicTableLine]:
        """VLAN rows with descriptions, as cfggen JSON."""
        return self._lines("VLAN")

    @cached_property
    def port_lines(self) -> list[SonicTableLine]:
        """PORT descriptions (the ports that have one), as cfggen JSON."""
        if not self.port_descriptions:
            return []
        rows = {name: {"description": d} for name, d in self.port_descriptions.items()}
        return [SonicTableLine(table="PORT", json_text=_ROW_JSON({"PORT": rows}))]


_ROW_JSON = json.JSONEncoder(separators=(",", ":"), sort_keys=True).encode


def headroom_name(speed: Speed, cable_m: float, mtu: int) -> str:
    """SONiC's buffer manager's profile name: ``pg_lossless_<speed Mb/s>_<cable>m[_mtu<N>]_profile``."""
    cable = cable_text(cable_m).replace(".", "p")
    if mtu != 9216:
        return f"pg_lossless_{speed.gbps * 1000}_{cable}m_mtu{mtu}_profile"
    return f"pg_lossless_{speed.gbps * 1000}_{cable}m_profile"


def _qos_maps(fabric: Fabric, parts: PolicyParts) -> dict[str, Any]:
    """DSCP_TO_TC_MAP (trust dscp) or DOT1P_TO_TC_MAP (trust pcp), TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP and
    MAP_PFC_PRIORITY_TO_QUEUE.

    Every table that depends on where a lossless priority goes reads the one decision, parts.paths
    (fabricd/intent/lossless_path.py): priority -> queue, PFC priority -> queue, priority -> PG, the PGs' buffers
    and the watchdog's queues."""
    qos = fabric.policy.qos
    tables: dict[str, Any] = {}
    if qos.trust == TrustMode.DSCP:
        tables["DSCP_TO_TC_MAP"] = {SONIC_MAP: {str(d): str(qos.priority_of(d)) for d in range(NUM_DSCP)}}
    else:
        tables["DOT1P_TO_TC_MAP"] = {SONIC_MAP: {str(p): str(p) for p in range(NUM_PRIORITIES)}}
    tables["TC_TO_QUEUE_MAP"] = {SONIC_MAP: {str(pq.priority): str(pq.queue) for pq in parts.priority_queues}}
    pg_of = {path.priority: path.priority_group for path in parts.paths}
    tables["TC_TO_PRIORITY_GROUP_MAP"] = {SONIC_MAP: {str(p): str(pg_of.get(p, 0)) for p in range(NUM_PRIORITIES)}}
    # A PFC frame received for priority P stops the queue P carries (sonic-pfc-priority-queue-map.yang); without
    # it the ASIC pauses queue P, which is empty when P sits in a queue with another number.
    tables["MAP_PFC_PRIORITY_TO_QUEUE"] = {SONIC_MAP: {str(pq.priority): str(pq.queue) for pq in parts.priority_queues}}
    return tables


def _port_qos_map(
    fabric: Fabric, parts: PolicyParts, ports: list[PortIntent], sink: WarningSink
) -> dict[str, dict[str, str]]:
    """PORT_QOS_MAP: the maps each port uses, its PFC priorities and the queues its PFC watchdog watches."""
    paths = parts.paths
    trust_dscp = fabric.policy.qos.trust == TrustMode.DSCP
    pfc = plain_list([path.priority for path in paths])
    # pfcwd_sw_enable names *queues* (sonic-port-qos-map.yang); orchagent's pfcwdorch watches queue i for bit i and
    # its storm detector counts PFC frames of priority i (pfc_detect_*.lua), so a moved lossless priority cannot be
    # watched (validate refuses it, FAB113); the watchdog is put on the queue the traffic is in.
    watched = sorted({path.queue for path in paths})
    for path in paths:
        if path.moved and parts.watchdog is not None:
            sink(
                f"priority_queues[{path.priority}].watchdog",
                f"watchdog on priority {path.priority} in queue {path.queue}",
                f"pfcwd_sw_enable {path.queue}",
                f"SONiC's PFC watchdog watches queue {path.queue} for pauses of priority {path.queue}, not "
                f"{path.priority}: a storm on priority {path.priority} goes undetected",
            )
    port_qos: dict[str, dict[str, str]] = {}
    for p in ports:
        row = {
            "dscp_to_tc_map" if trust_dscp else "dot1p_to_tc_map": SONIC_MAP,
            "tc_to_queue_map": SONIC_MAP,
            "tc_to_pg_map": SONIC_MAP,
            "pfc_to_queue_map": SONIC_MAP,
        }
        if p.pfc_priorities:
            row["pfc_enable"] = pfc
        if p.watchdog:
            row["pfcwd_sw_enable"] = plain_list(watched)
        port_qos[p.name] = row
    return port_qos


def _wred_profile(parts: PolicyParts) -> dict[str, dict[str, str]]:
    """WRED_PROFILE: one ECN profile per queue that marks (empty: no queue marks)."""
    colours = ("green", "yellow", "red")
    return {
        q.ecn.profile: {
            "ecn": "ecn_all",
            **{f"wred_{c}_enable": "true" for c in colours},
            **{f"{c}_min_threshold": str(q.ecn.min_threshold) for c in colours},
            **{f"{c}_max_threshold": str(q.ecn.max_threshold) for c in colours},
            **{f"{c}_drop_probability": str(q.ecn.probability_percent) for c in colours},
        }
        for q in parts.queues
        if q.ecn is not None
    }


def _scheduler(parts: PolicyParts) -> dict[str, dict[str, str]]:
    """SCHEDULER: one strict or DWRR scheduler per used queue."""
    return {
        f"scheduler.{q.id}": ({"type": "STRICT"} if q.strict else {"type": "DWRR", "weight": str(q.weight_percent)})
        for q in parts.queues
        if q.used
    }


def _queue(parts: PolicyParts, ports: list[PortIntent]) -> dict[str, dict[str, str]]:
    """QUEUE: each port's used queues with their scheduler and ECN profile."""
    queue_rows: dict[str, dict[str, str]] = {}
    for p in ports:
        for q in parts.queues:
            if not q.used:
                continue
            row = {"scheduler": f"scheduler.{q.id}"}
            if q.ecn is not None:
                row["wred_profile"] = q.ecn.profile
            queue_rows[f"{p.name}|{q.id}"] = row
    return queue_rows


def _cable_length(headrooms: list[PortIntent], sink: WarningSink) -> dict[str, dict[str, str]]:
    """CABLE_LENGTH: whole metres per port with a headroom (a fraction is rounded, with a warning)."""
    cables: dict[str, str] = {}
    for p in headrooms:
        assert p.headroom is not None
        whole = math.floor(p.headroom.cable_m + 0.5)
        if whole != p.headroom.cable_m:
            sink(
                f"ports[{p.name}].headroom.cable_m",
                f"{cable_text(p.headroom.cable_m)} m",
                f"{whole} m",
                "SONiC CABLE_LENGTH takes whole metres ('5m'); the buffer profile keeps the exact headroom",
            )
        cables[p.name] = f"{whole}m"
    return {SONIC_CABLE_PROFILE: cables}


def _buffer_profile(headrooms: list[PortIntent]) -> dict[str, dict[str, str]]:
    """BUFFER_PROFILE: one lossless headroom profile per distinct headroom."""
    return {
        p.headroom.profile: {
            "pool": SONIC_LOSSLESS_POOL,
            "xon": str(p.headroom.xon_bytes),
            "xoff": str(p.headroom.xoff_bytes),
            "size": str(p.headroom.size_bytes),
            "dynamic_th": "0",
        }
        for p in headrooms
        if p.headroom
    }


def _buffer_pg(parts: PolicyParts, headrooms: list[PortIntent]) -> dict[str, dict[str, str]]:
    """BUFFER_PG: each port's lossless priority groups on its headroom profile."""
    return {
        f"{p.name}|{pg}": {"profile": p.headroom.profile}
        for p in headrooms
        if p.headroom
        for pg in sorted({path.priority_group for path in parts.paths})
    }


def _buffers(parts: PolicyParts, ports: list[PortIntent], sink: WarningSink) -> dict[str, Any]:
    """CABLE_LENGTH, BUFFER_PROFILE and BUFFER_PG, for the ports that have a headroom (none: no table)."""
    headrooms = [p for p in ports if p.headroom is not None]
    if not headrooms:
        return {}
    return {
        "CABLE_LENGTH": _cable_length(headrooms, sink),
        "BUFFER_PROFILE": _buffer_profile(headrooms),
        "BUFFER_PG": _buffer_pg(parts, headrooms),
    }


def _pfc_wd(wd: SonicWatchdog, ports: list[PortIntent]) -> dict[str, dict[str, str]]:
    """PFC_WD: the poll interval and each watched port's action and timers."""
    pfc_wd: dict[str, dict[str, str]] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    for p in ports:
        if p.watchdog:
            pfc_wd[p.name] = {
                "action": wd.action,
                "detection_time": str(wd.detection_ms),
                "restoration_time": str(wd.restoration_ms),
            }
    return pfc_wd


def _vlan(vlans: list[VlanIntent]) -> dict[str, dict[str, str]]:
    """VLAN: one row per VLAN with its description."""
    return {f"Vlan{v.id}": {"vlanid": str(v.id), "description": v.name} for v in vlans}


def _vlan_member(vlans: list[VlanIntent]) -> dict[str, dict[str, str]]:
    """VLAN_MEMBER: each VLAN's ports, tagged or untagged."""
    return {
        f"Vlan{v.id}|{m.port}": {"tagging_mode": "tagged" if m.tagged else "untagged"} for v in vlans for m in v.members
    }


def _port(ports: list[PortIntent]) -> dict[str, dict[str, str]]:
    """PORT: each port's MTU and description."""
    return {
        p.name: {"mtu": str(p.mtu_bytes)} | ({"description": p.description} if p.description else {}) for p in ports
    }


def sonic_config_db(
    fabric: Fabric, parts: PolicyParts, ports: list[PortIntent], vlans: list[VlanIntent], sink: WarningSink
) -> SonicConfigDb:
    """The CONFIG_DB tables of one switch, one builder per table (an optional table is left out when empty)."""
    tables: dict[str, Any] = _qos_maps(fabric, parts)
    tables["PORT_QOS_MAP"] = _port_qos_map(fabric, parts, ports, sink)
    wred = _wred_profile(parts)
    if wred:
        tables["WRED_PROFILE"] = wred
    tables["SCHEDULER"] = _scheduler(parts)
    tables["QUEUE"] = _queue(parts, ports)
    tables.update(_buffers(parts, ports, sink))
    if isinstance(parts.watchdog, SonicWatchdog):
        tables["PFC_WD"] = _pfc_wd(parts.watchdog, ports)
    if vlans:
        tables["VLAN"] = _vlan(vlans)
        tables["VLAN_MEMBER"] = _vlan_member(vlans)
    tables["PORT"] = _port(ports)
    # Built above from validated intents, every value a str: skip re-validating thousands of rows.
    return SonicConfigDb.model_construct(**tables)


def finish(ctx: ShapeContext) -> SonicSwitchIntent:
    parts, ports, vlans, sink = ctx.parts, ctx.ports, ctx.vlans, ctx.sink
    assert parts.watchdog is None or isinstance(parts.watchdog, SonicWatchdog)
    return SonicSwitchIntent(
        config_db=sonic_config_db(ctx.fabric, parts, ports, vlans, sink),
        port_descriptions={p.name: p.description for p in ports if p.description},
        pfcwd_ports=" ".join(p.name for p in ports if p.watchdog),
        watchdog=parts.watchdog,
        warnings=sink.items,
        **ctx.common,
    )


SHAPING = IntentShaping(model=SonicSwitchIntent, finish=finish, watchdog=sonic_watchdog, headroom_name=headroom_name)
