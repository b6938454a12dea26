"""Switch intent: per-switch desired state, decided from the :class:`~fabricd.model.Fabric` model.

L1: pure, no device libraries. Every decision lives here; ``templates/<platform>/`` only print the result and
SONiC's CONFIG_DB is ``json.dumps`` of :class:`SonicConfigDb`. Per switch this decides:

* classification: the full 64-entry DSCP -> priority table (unmapped DSCPs go to the policy's default
  priority) or, with PCP trust, the identity PCP -> priority map; priority -> egress queue;
* queues: which of the 8 are DWRR (weights normalised to 100 %, as the host's ``dcb ets`` does), which is the
  strict CNP queue, which carry a lossless priority and which take ECN (a class's ``ecn_profile`` or a profile
  listing the class), with thresholds in the platform's unit (kbytes on EOS/NX-OS, bytes on NVUE/SONiC);
* per-port headroom (xoff/xon/size from :func:`fabricd.intent.headroom.headroom`, cable length from a
  ``Link.cable_m`` / ``Nic.cable_m`` override or ``policy.buffers.cable_length_m`` by link or port role);
* the PFC watchdog in the platform's timer units (:mod:`fabricd.intent.watchdog_timers`);
* VLANs and their members on this switch (tagged towards switches and VLAN-tagged NICs, untagged towards NICs
  without a VLAN), and port MTUs.

Whatever a platform cannot express exactly is a :class:`~fabricd.intent.render_warnings.RenderWarning` on the
intent. Fields marked ``walk=False`` are labels or pre-formatted text (names, JSON for a CLI line), not policy
values: the render tests check that every other scalar appears in the output or in a warning.

The :class:`SwitchIntentBuilder` caches what is the same for every switch of a platform (maps, queues, ECN,
watchdog) and headroom per (speed, cable, MTU), so a 1,000-switch fabric costs little more than its ports.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field

from fabricd.model import (
    EcnProfile,
    Fabric,
    LinkRole,
    Platform,
    Port,
    Scheduler,
    Speed,
    Switch,
    SwitchRole,
    TrafficClass,
    TrustMode,
    split_endpoint,
)
from fabricd.model.types import Model

from .eos import eos_ecn
from .headroom import headroom
from .render_warnings import RenderWarning, WarningSink
from .units import bytes_to_kbytes, chunks, plain_list, range_list, split_percent
from .watchdog_timers import EosWatchdog, NvueWatchdog, NxosWatchdog, SonicWatchdog, platform_watchdog

NUM_DSCP = 64
NUM_PRIORITIES = 8
NUM_QUEUES = 8
EOS_DSCP_PER_LINE = 8
"""DSCP values per ``qos map dscp ... to traffic-class`` line on EOS (kept short; EOS takes a list per line)."""
NVUE_BRIDGE = "br_default"
"""The NVUE bridge domain VLANs are added to (Cumulus's default single VLAN-aware bridge)."""
SONIC_MAP = "FABRICD"
"""Name of the DSCP/TC/PG maps fabricd writes to SONiC CONFIG_DB (SONiC's own templates use AZURE)."""
SONIC_CABLE_PROFILE = "AZURE"
"""CABLE_LENGTH key: SONiC's buffers_config.j2 writes cable lengths under CABLE_LENGTH|AZURE."""
SONIC_LOSSLESS_POOL = "ingress_lossless_pool"
"""The ingress lossless pool every SONiC SKU's default buffer config defines (buffers_defaults_*.j2)."""

_LABEL: Any = {"walk": False}
"""Field metadata for labels and pre-formatted text: the render tests do not look for them in the output."""


def _label(description: str) -> Any:
    return Field(description=description, json_schema_extra=_LABEL)


# ------------------------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------------------------


class EcnIntent(Model):
    """WRED/ECN marking on one egress queue, thresholds in the platform's unit."""

    profile: str = _label("ECN profile name from the policy")
    min_threshold: int = Field(description="start marking at this queue depth, in `unit`")
    max_threshold: int = Field(description="mark with max probability from this depth, in `unit`")
    unit: str = _label("kbytes (NX-OS, and EOS when both thresholds are whole kbytes: 1 kbyte = 1000 B) or bytes")
    probability_percent: int = Field(description="mark probability at max_threshold, 0-100 %")


class QueueIntent(Model):
    """One of the 8 egress queues (traffic classes). Unused queues carry no priority."""

    id: int = Field(ge=0, le=7, description="egress queue / traffic class, 0-7")
    name: str = _label("traffic class name from the policy ('unused' for queues no class uses)")
    priorities: list[int] = Field(description="priorities mapped to this queue, 0-7 each")
    used: bool = Field(description="a policy traffic class uses this queue")
    strict: bool = Field(description="strict priority (the CNP queue)")
    dwrr: bool = Field(description="deficit weighted round robin")
    weight_percent: int | None = Field(description="DWRR share in %, the DWRR queues summing to 100; None otherwise")
    round_robin: bool = Field(
        description="scheduled round robin on EOS: a DWRR queue, or an unused queue below the highest DWRR queue "
        "(EOS requires round-robin queues below strict ones)"
    )
    lossless: bool = Field(description="carries a PFC (no-drop) priority")
    ecn: EcnIntent | None = Field(description="ECN marking, None for no ECN")


class PriorityQueue(Model):
    priority: int = Field(ge=0, le=7)
    queue: int = Field(ge=0, le=7)


class ClassifierLine(Model):
    """Ingress codepoints (DSCPs, or PCPs under PCP trust) that classify to one priority."""

    codepoints: list[int] = Field(description="DSCPs 0-63 (or PCPs 0-7) classified to `priority`")
    text: str = _label("the codepoints as the platform lists them: EOS '0 1 2', NVUE '0,1,2'")
    priority: int = Field(ge=0, le=7)


class HeadroomIntent(Model):
    """PFC headroom of the lossless priority groups of one port (SONiC formula, fabricd.intent.headroom)."""

    profile: str = _label("buffer/PFC profile name shared by ports with the same speed, cable and MTU")
    cable_m: float = Field(description="cable length used, metres")
    xoff_bytes: int = Field(description="xoff headroom, bytes")
    xon_bytes: int = Field(description="xon offset, bytes")
    size_bytes: int = Field(description="xoff + xon, bytes")


class PortIntent(Model):
    name: str = Field(description="port name as the NOS spells it")
    speed: Speed = Field(description="port speed (an input of the headroom; not rendered)")
    role: LinkRole = Field(description="what the port connects (selects the default cable length)")
    mtu_bytes: int = Field(description="L2 MTU, bytes")
    pfc_priorities: list[int] = Field(description="lossless priorities on this port, empty when lossy")
    pfc: bool = Field(description="PFC on this port (it has lossless priorities)")
    watchdog: bool = Field(description="PFC watchdog on this port")
    headroom: HeadroomIntent | None = Field(description="headroom of the lossless PGs; None when lossy")
    access_vlan: int | None = Field(description="untagged VLAN, None for none")
    tagged_vlans: list[int] = Field(description="tagged VLANs")
    trunk_vlans: str = _label("tagged VLANs as a comma list with ranges, e.g. '100,200-202'")


class VlanMember(Model):
    port: str
    tagged: bool


class VlanIntent(Model):
    id: int = Field(ge=1, le=4094)
    name: str = Field(description="VLAN name from the policy")
    members: list[VlanMember]


class SwitchIntentBase(Model):
    """What every platform's switch intent has. Subclasses add the platform's own decided values."""

    name: str = Field(description="switch name")
    platform: Platform
    role: SwitchRole
    fabric: str = _label("fabric name")
    lossless: bool = Field(description="RoCEv2 lossless: PFC on the lossless priorities")
    trust: TrustMode
    trust_dscp: bool = Field(description="True for DSCP trust, False for PCP (802.1p) trust")
    lossless_priorities: list[int] = Field(description="PFC priorities, empty when lossy")
    classifier: list[ClassifierLine] = Field(description="ingress codepoint -> priority, grouped per priority")
    priority_queues: list[PriorityQueue] = Field(description="priority -> egress queue, all 8 priorities")
    queues: list[QueueIntent] = Field(description="the 8 egress queues")
    ports: list[PortIntent]
    vlans: list[VlanIntent]
    warnings: list[RenderWarning] = Field(description="values this platform cannot express exactly")


class EosSwitchIntent(SwitchIntentBase):
    """Arista EOS: a qos profile carrying trust, PFC, watchdog, schedulers and ECN, applied to every port."""

    platform: Literal[Platform.ARISTA_EOS] = Platform.ARISTA_EOS
    profile_name: str = _label("qos profile name")
    watchdog: EosWatchdog | None


class NxosQosClass(Model):
    """A ``class-map type qos`` and its ``set qos-group`` in the classification policy."""

    name: str = _label("class-map name")
    match: str = Field(description="DSCP (or CoS) list/ranges as NX-OS takes it: '24-31', '10,12'")
    qos_group: int = Field(ge=0, le=7, description="qos-group = egress queue")


class NxosQueue(Model):
    """One of the 8 system queues in the queuing and network-qos policies."""

    queue: QueueIntent
    queuing_class: str = _label("c-out-8q-qN / c-out-8q-q-default")
    network_class: str = _label("c-8q-nqN / c-8q-nq-default")
    pause_cos: str | None = Field(description="'pause pfc-cos' list for a lossless queue, else None")


class NxosSwitchIntent(SwitchIntentBase):
    """Cisco NX-OS: qos, queuing and network-qos policy-maps, system qos and per-interface PFC."""

    platform: Literal[Platform.CISCO_NXOS] = Platform.CISCO_NXOS
    qos_classes: list[NxosQosClass]
    nx_queues: list[NxosQueue]
    system_mtu_bytes: int = Field(description="network-qos class MTU: the largest port MTU")
    watchdog: NxosWatchdog | None


class NvuePfcProfile(Model):
    """An NVUE PFC profile (``nv set qos pfc <name>``) for ports with the same headroom."""

    name: str = _label("profile name")
    cable_length_m: int = Field(description="cable-length, whole metres 1-100000")
    xoff_bytes: int
    xon_bytes: int
    port_buffer_bytes: int


class NvueSwitchIntent(SwitchIntentBase):
    """NVIDIA Cumulus NVUE: ``nv set qos ...``, per-port PFC profiles, interface MTU and bridge VLANs."""

    platform: Literal[Platform.CUMULUS_NVUE] = Platform.CUMULUS_NVUE
    bridge: str = _label("bridge domain")
    pfc_profiles: list[NvuePfcProfile]
    lossless_pool_percent: int | None = Field(description="traffic-pool default-lossless memory-percent")
    lossy_pool_percent: int | None = Field(description="traffic-pool default-lossy memory-percent")
    watchdog: NvueWatchdog | None


class SonicConfigDb(Model):
    """The CONFIG_DB tables fabricd writes, as ``config load`` reads them (every value a string)."""

    DSCP_TO_TC_MAP: dict[str, dict[str, str]] | None = None
    DOT1P_TO_TC_MAP: dict[str, dict[str, str]] | None = None
    TC_TO_QUEUE_MAP: dict[str, dict[str, str]]
    TC_TO_PRIORITY_GROUP_MAP: dict[str, dict[str, str]]
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
    """One CONFIG_DB table as compact JSON for ``sonic-cfggen -a '<json>' --write-to-db``."""

    table: str = _label("CONFIG_DB table name")
    json_text: str = _label("json.dumps of {table: rows}, compact, sorted keys")


class SonicSwitchIntent(SwitchIntentBase):
    """SONiC: CONFIG_DB tables plus the equivalent ``config`` CLI lines."""

    platform: Literal[Platform.SONIC] = Platform.SONIC
    config_db: SonicConfigDb
    map_lines: list[SonicTableLine] = Field(description="DSCP/DOT1P, TC->queue and TC->PG maps, as cfggen JSON")
    ecn_lines: list[SonicTableLine] = Field(description="WRED_PROFILE, as cfggen JSON")
    scheduler_lines: list[SonicTableLine] = Field(description="SCHEDULER and QUEUE, as cfggen JSON")
    buffer_lines: list[SonicTableLine] = Field(description="CABLE_LENGTH, BUFFER_PROFILE, BUFFER_PG, as cfggen JSON")
    pfc_lines: list[SonicTableLine] = Field(description="PORT_QOS_MAP (pfc_enable, pfcwd_sw_enable), as cfggen JSON")
    vlan_lines: list[SonicTableLine] = Field(description="VLAN rows with descriptions, as cfggen JSON")
    pfcwd_ports: str = _label("space-separated ports for `config pfcwd start`")
    watchdog: SonicWatchdog | None


AnySwitchIntent = EosSwitchIntent | NxosSwitchIntent | NvueSwitchIntent | SonicSwitchIntent
"""Any platform's switch intent (a plain union, for type hints)."""

SwitchIntent = Annotated[
    EosSwitchIntent | NxosSwitchIntent | NvueSwitchIntent | SonicSwitchIntent, Field(discriminator="platform")
]
"""The per-switch desired state; its class depends on the switch's platform."""


# ------------------------------------------------------------------------------------------------------------
# Decisions shared by every switch of a platform
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PolicyParts:
    """Policy-level decisions for one platform; warnings are (field, intended, rendered, reason)."""

    lossless_priorities: list[int]
    classifier: list[ClassifierLine]
    priority_queues: list[PriorityQueue]
    queues: list[QueueIntent]
    watchdog: EosWatchdog | NxosWatchdog | NvueWatchdog | SonicWatchdog | None
    warnings: list[tuple[str, str, str, str]]


@dataclass(frozen=True)
class _Peer:
    """What is cabled to a switch port: another switch (link) or a host NIC."""

    kind: Literal["switch", "host"]
    cable_m: float | None
    role: LinkRole | None
    vlan: int | None = None


def _class_of_priority(fabric: Fabric) -> dict[int, TrafficClass | None]:
    qos = fabric.policy.qos
    default_tc = qos.class_of(qos.default_priority)
    return {p: qos.class_of(p) or default_tc for p in range(NUM_PRIORITIES)}


def _ecn_profile_of(fabric: Fabric, tc: TrafficClass) -> EcnProfile | None:
    policy = fabric.policy
    if tc.ecn_profile is not None:
        return policy.ecn_profile(tc.ecn_profile)
    return next((p for p in policy.ecn_profiles if tc.id in p.traffic_classes), None)


def _ecn(platform: Platform, profile: EcnProfile, queue: int, warn: Callable[[str, str, str, str], None]) -> EcnIntent:
    prob = profile.max_mark_probability_percent
    if platform == Platform.ARISTA_EOS:
        lo, hi, unit, prob = eos_ecn(profile, queue, warn)
        return EcnIntent(profile=profile.name, min_threshold=lo, max_threshold=hi, unit=unit, probability_percent=prob)
    if platform == Platform.CISCO_NXOS:
        lo, lo_exact = bytes_to_kbytes(profile.min_bytes)
        hi, hi_exact = bytes_to_kbytes(profile.max_bytes)
        if not lo_exact:
            warn(f"queues[{queue}].ecn.min_threshold", f"{profile.min_bytes} B", f"{lo} kbytes",
                 "the WRED command takes whole kbytes")
        if not hi_exact:
            warn(f"queues[{queue}].ecn.max_threshold", f"{profile.max_bytes} B", f"{hi} kbytes",
                 "the WRED command takes whole kbytes")
        return EcnIntent(profile=profile.name, min_threshold=lo, max_threshold=hi, unit="kbytes",
                         probability_percent=prob)
    if platform == Platform.CUMULUS_NVUE and prob < 1:
        warn(f"queues[{queue}].ecn.probability_percent", f"{prob} %", "1 %", "NVUE probability is 1-100")
        prob = 1
    return EcnIntent(profile=profile.name, min_threshold=profile.min_bytes, max_threshold=profile.max_bytes,
                     unit="bytes", probability_percent=prob)


def _policy_parts(fabric: Fabric, platform: Platform) -> _PolicyParts:
    policy = fabric.policy
    qos = policy.qos
    notes: list[tuple[str, str, str, str]] = []

    def warn(field: str, intended: str, rendered: str, reason: str) -> None:
        notes.append((field, intended, rendered, reason))

    lossless = policy.lossless
    lossless_prios = sorted(set(policy.pfc.priorities)) if lossless else []

    # classification
    sep = " " if platform == Platform.ARISTA_EOS else ","
    if qos.trust == TrustMode.DSCP:
        by_prio: dict[int, list[int]] = {}
        for d in range(NUM_DSCP):
            by_prio.setdefault(qos.priority_of(d), []).append(d)
        per_line = EOS_DSCP_PER_LINE if platform == Platform.ARISTA_EOS else NUM_DSCP
        classifier = [
            ClassifierLine(codepoints=part, text=plain_list(part, sep), priority=p)
            for p in sorted(by_prio)
            for part in chunks(by_prio[p], per_line)
        ]
    else:
        classifier = [ClassifierLine(codepoints=[p], text=str(p), priority=p) for p in range(NUM_PRIORITIES)]

    # priority -> queue
    class_of = _class_of_priority(fabric)
    prio_queue = {p: (tc.id if tc is not None else 0) for p, tc in class_of.items()}
    priority_queues = [PriorityQueue(priority=p, queue=q) for p, q in prio_queue.items()]

    # queues
    by_id = {tc.id: tc for tc in qos.traffic_classes}
    dwrr_ids = [tc.id for tc in qos.traffic_classes if tc.scheduler == Scheduler.DWRR]
    raw = {i: by_id[i].weight_percent for i in dwrr_ids}
    weights = split_percent(dict.fromkeys(raw, 1) if all(w is None for w in raw.values())
                            else {i: (w if w is not None else 1) for i, w in raw.items()})
    for i, w in raw.items():
        if w is not None and weights[i] != w:
            warn(f"queues[{i}].weight_percent", f"{w} %", f"{weights[i]} %",
                 "DWRR shares are normalised to sum to 100 %")
    top_dwrr = max(dwrr_ids, default=-1)
    queues: list[QueueIntent] = []
    for qid in range(NUM_QUEUES):
        tc = by_id.get(qid)
        prios = sorted(p for p, q in prio_queue.items() if q == qid)
        if tc is None:
            queues.append(QueueIntent(id=qid, name="unused", priorities=prios, used=False, strict=False, dwrr=False,
                                      weight_percent=None, round_robin=qid < top_dwrr, lossless=False, ecn=None))
            continue
        profile = _ecn_profile_of(fabric, tc)
        dwrr = tc.scheduler == Scheduler.DWRR
        queues.append(QueueIntent(
            id=qid, name=tc.name, priorities=prios, used=True, strict=not dwrr, dwrr=dwrr,
            weight_percent=weights[qid] if dwrr else None, round_robin=dwrr,
            lossless=any(p in lossless_prios for p in prios),
            ecn=_ecn(platform, profile, qid, warn) if profile is not None else None,
        ))

    wd = policy.pfc.watchdog
    watchdog = platform_watchdog(platform, wd, warn) if lossless and wd.enabled and lossless_prios else None
    return _PolicyParts(lossless_prios, classifier, priority_queues, queues, watchdog, notes)


def _peers(fabric: Fabric) -> dict[str, _Peer]:
    """``'switch:port'`` -> what is cabled there (links first, then NIC peers)."""
    out: dict[str, _Peer] = {}
    for link in fabric.links:
        for end in (link.a, link.b):
            out[end] = _Peer("switch", link.cable_m, link.role)
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.peer:
                out[nic.peer] = _Peer("host", nic.cable_m, None, nic.vlan)
    return out


def _vlan_members(fabric: Fabric, peers: dict[str, _Peer]) -> dict[str, dict[int, dict[str, bool]]]:
    """switch -> vlan id -> port -> tagged. Members come from policy.vlans and from NICs in that VLAN."""
    out: dict[str, dict[int, dict[str, bool]]] = {}

    def add(endpoint: str, vid: int) -> None:
        try:
            sw, port = split_endpoint(endpoint)
        except ValueError:
            return
        peer = peers.get(endpoint)
        tagged = not (peer is not None and peer.kind == "host" and peer.vlan is None)
        out.setdefault(sw, {}).setdefault(vid, {})[port] = tagged

    for vlan in fabric.policy.vlans:
        for member in vlan.members:
            add(member, vlan.id)
    known = {v.id for v in fabric.policy.vlans}
    for endpoint, peer in peers.items():
        if peer.kind == "host" and peer.vlan is not None and peer.vlan in known:
            add(endpoint, peer.vlan)
    return out


@lru_cache(maxsize=4096)
def _headroom(speed: Speed, cable_m: float, mtu: int, lossless_mtu: int | None, xon: int) -> tuple[int, int, int]:
    h = headroom(speed, cable_m, mtu, lossless_mtu_bytes=lossless_mtu, xon_bytes=xon)
    return h.xoff_bytes, h.xon_bytes, h.size_bytes


def _cable_text(cable_m: float) -> str:
    return f"{cable_m:g}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _ident(name: str) -> str:
    """A policy name as a NOS identifier: letters, digits, _ and - only."""
    return _UNSAFE.sub("_", name)


# ------------------------------------------------------------------------------------------------------------
# The builder
# ------------------------------------------------------------------------------------------------------------


class SwitchIntentBuilder:
    """Builds :data:`SwitchIntent` for the switches of one fabric, caching what they share."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self._parts: dict[Platform, _PolicyParts] = {}
        self._peers = _peers(fabric)
        self._vlans = _vlan_members(fabric, self._peers)
        self._vlan_names = {v.id: v.name for v in fabric.policy.vlans}
        self._headrooms: dict[tuple[Platform, Speed, float, int], HeadroomIntent] = {}

    def parts(self, platform: Platform) -> _PolicyParts:
        got = self._parts.get(platform)
        if got is None:
            got = self._parts[platform] = _policy_parts(self.fabric, platform)
        return got

    # --- per port ----------------------------------------------------------------------------------------

    def cable_m(self, switch: Switch, port: Port) -> float:
        """Cable length of a port: the link's or NIC's ``cable_m``, else the role table (link role, port role)."""
        peer = self._peers.get(f"{switch.name}:{port.name}")
        if peer is not None and peer.cable_m is not None:
            return peer.cable_m
        role = peer.role if peer is not None and peer.role is not None else port.role
        return self.fabric.policy.buffers.cable_length_m.get(role, 0.0)

    def _headroom_intent(self, platform: Platform, speed: Speed, cable_m: float, mtu: int) -> HeadroomIntent:
        key = (platform, speed, cable_m, mtu)
        got = self._headrooms.get(key)
        if got is None:
            buffers = self.fabric.policy.buffers
            xoff, xon, size = _headroom(speed, cable_m, mtu, buffers.lossless_mtu_bytes, buffers.xon_bytes)
            if platform == Platform.SONIC:
                cable = _cable_text(cable_m).replace(".", "p")
                name = f"pg_lossless_{speed.gbps * 1000}_{cable}m_profile"
                if mtu != 9216:
                    name = f"pg_lossless_{speed.gbps * 1000}_{cable}m_mtu{mtu}_profile"
            else:
                name = f"fabricd-{speed.value.lower()}-{_cable_text(cable_m).replace('.', 'p')}m"
                if mtu != 9216:
                    name += f"-mtu{mtu}"
            got = self._headrooms[key] = HeadroomIntent(profile=name, cable_m=cable_m, xoff_bytes=xoff,
                                                        xon_bytes=xon, size_bytes=size)
        return got

    def _ports(self, switch: Switch, parts: _PolicyParts, wd_on: bool, sink: WarningSink) -> list[PortIntent]:
        vlans = self._vlans.get(switch.name, {})
        by_port: dict[str, dict[int, bool]] = {}
        for vid, members in vlans.items():
            for port_name, is_tagged in members.items():
                by_port.setdefault(port_name, {})[vid] = is_tagged
        out: list[PortIntent] = []
        lossless = bool(parts.lossless_priorities)
        for port in switch.ports:
            hr = None
            if lossless:
                hr = self._headroom_intent(switch.platform, port.speed, self.cable_m(switch, port), port.mtu)
            memberships = by_port.get(port.name, {})
            access = None
            tagged = sorted(v for v, t in memberships.items() if t)
            untagged = sorted(v for v, t in memberships.items() if not t)
            if len(untagged) == 1 and not tagged:
                access = untagged[0]
            elif untagged:
                tagged = sorted(memberships)
                sink(f"ports[{port.name}].access_vlan", f"untagged VLAN {','.join(map(str, untagged))}",
                     f"tagged VLANs {','.join(map(str, tagged))}",
                     "a port carries one untagged VLAN only when it is in no other VLAN")
            out.append(PortIntent(
                name=port.name, speed=port.speed, role=port.role, mtu_bytes=port.mtu,
                pfc_priorities=parts.lossless_priorities, pfc=lossless, watchdog=wd_on, headroom=hr,
                access_vlan=access, tagged_vlans=tagged, trunk_vlans=range_list(tagged),
            ))
        return out

    def _vlan_intents(self, switch: Switch) -> list[VlanIntent]:
        members = self._vlans.get(switch.name, {})
        port_order = {p.name: i for i, p in enumerate(switch.ports)}
        return [
            VlanIntent(
                id=vid,
                name=self._vlan_names.get(vid, f"vlan{vid}"),
                members=[VlanMember(port=p, tagged=t) for p, t in sorted(
                    members[vid].items(), key=lambda kv: (port_order.get(kv[0], len(port_order)), kv[0]))],
            )
            for vid in sorted(members)
        ]

    # --- per switch --------------------------------------------------------------------------------------

    def build(self, switch: Switch) -> AnySwitchIntent:
        """The intent of one switch of this fabric."""
        platform = switch.platform
        parts = self.parts(platform)
        sink = WarningSink(switch.name, platform)
        for note in parts.warnings:
            sink(*note)
        ports = self._ports(switch, parts, parts.watchdog is not None, sink)
        vlans = self._vlan_intents(switch)
        policy = self.fabric.policy
        common: dict[str, Any] = {
            "name": switch.name,
            "role": switch.role,
            "fabric": self.fabric.name,
            "lossless": bool(parts.lossless_priorities),
            "trust": policy.qos.trust,
            "trust_dscp": policy.qos.trust == TrustMode.DSCP,
            "lossless_priorities": parts.lossless_priorities,
            "classifier": parts.classifier,
            "priority_queues": parts.priority_queues,
            "queues": parts.queues,
            "ports": ports,
            "vlans": vlans,
        }
        if platform == Platform.ARISTA_EOS:
            self._warn_headroom_computed(ports, sink, "EOS")
            assert parts.watchdog is None or isinstance(parts.watchdog, EosWatchdog)
            return EosSwitchIntent(profile_name="FABRICD_ROCE", watchdog=parts.watchdog, warnings=sink.items,
                                   **common)
        if platform == Platform.CISCO_NXOS:
            self._warn_headroom_computed(ports, sink, "NX-OS")
            assert parts.watchdog is None or isinstance(parts.watchdog, NxosWatchdog)
            return NxosSwitchIntent(
                qos_classes=self._nxos_classes(parts), nx_queues=self._nxos_queues(parts),
                system_mtu_bytes=max((p.mtu_bytes for p in ports), default=9216),
                watchdog=parts.watchdog, warnings=sink.items, **common,
            )
        if platform == Platform.CUMULUS_NVUE:
            assert parts.watchdog is None or isinstance(parts.watchdog, NvueWatchdog)
            for v in vlans:
                sink(f"vlans[{v.id}].name", v.name, "-", "NVUE bridge VLANs have no name")
            self._nvue_unused_queues(parts, sink)
            profiles = self._nvue_profiles(ports, sink)
            lossless_pct, lossy_pct = self._nvue_pools(switch, bool(parts.lossless_priorities), sink)
            return NvueSwitchIntent(bridge=NVUE_BRIDGE, pfc_profiles=profiles, lossless_pool_percent=lossless_pct,
                                    lossy_pool_percent=lossy_pct, watchdog=parts.watchdog, warnings=sink.items,
                                    **common)
        assert parts.watchdog is None or isinstance(parts.watchdog, SonicWatchdog)
        config_db = self._sonic_config_db(parts, ports, vlans, sink)
        dumped = config_db.model_dump(exclude_none=True)

        def lines(*tables: str) -> list[SonicTableLine]:
            return [SonicTableLine(table=t, json_text=json.dumps({t: dumped[t]}, separators=(",", ":"), sort_keys=True))
                    for t in tables if t in dumped]

        return SonicSwitchIntent(
            config_db=config_db,
            map_lines=lines("DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP"),
            ecn_lines=lines("WRED_PROFILE"),
            scheduler_lines=lines("SCHEDULER", "QUEUE"),
            buffer_lines=lines("CABLE_LENGTH", "BUFFER_PROFILE", "BUFFER_PG"),
            pfc_lines=lines("PORT_QOS_MAP"),
            vlan_lines=lines("VLAN"),
            pfcwd_ports=" ".join(p.name for p in ports if p.watchdog),
            watchdog=parts.watchdog, warnings=sink.items, **common,
        )

    # --- platform helpers --------------------------------------------------------------------------------

    @staticmethod
    def _warn_headroom_computed(ports: list[PortIntent], sink: WarningSink, nos: str) -> None:
        groups: dict[tuple[float, int, int, int], list[str]] = {}
        for p in ports:
            if p.headroom is not None:
                h = p.headroom
                groups.setdefault((h.cable_m, h.xoff_bytes, h.xon_bytes, h.size_bytes), []).append(p.name)
        if not groups:
            return
        intended = "; ".join(
            f"{','.join(names)}: cable {_cable_text(c)} m, xoff {xoff} B, xon {xon} B, size {size} B"
            for (c, xoff, xon, size), names in groups.items()
        )
        sink("ports.headroom", intended, "-",
             f"{nos} sizes PFC headroom itself; it has no CLI for per-port xoff/xon or cable length")

    @staticmethod
    def _nxos_classes(parts: _PolicyParts) -> list[NxosQosClass]:
        prio_queue = {pq.priority: pq.queue for pq in parts.priority_queues}
        by_queue: dict[int, list[int]] = {}
        for line in parts.classifier:
            q = prio_queue[line.priority]
            by_queue.setdefault(q, []).extend(line.codepoints)
        names = {q.id: q.name for q in parts.queues}
        return [
            NxosQosClass(name=f"FABRICD_{_ident(names[q]).upper()}", match=range_list(cps), qos_group=q)
            for q, cps in sorted(by_queue.items())
        ]

    @staticmethod
    def _nxos_queues(parts: _PolicyParts) -> list[NxosQueue]:
        out = []
        for q in parts.queues:
            suffix = "-default" if q.id == 0 else str(q.id)
            lossless = [p for p in q.priorities if p in parts.lossless_priorities]
            out.append(NxosQueue(
                queue=q, queuing_class=f"c-out-8q-q{suffix}", network_class=f"c-8q-nq{suffix}",
                pause_cos=plain_list(lossless) if lossless else None,
            ))
        return out

    @staticmethod
    def _nvue_unused_queues(parts: _PolicyParts, sink: WarningSink) -> None:
        unused = [q for q in parts.queues if not q.used]
        if not unused:
            return
        carrying = [q.id for q in unused if q.priorities]
        sink(f"queues[{','.join(str(q.id) for q in unused)}].scheduler", "unused (no DWRR share)", "mode strict",
             "NVUE dwrr takes bw-percent 1-100 (0 means strict), and a queue left out keeps Cumulus' default "
             "12-13 % share, pushing the shares past 100 %; "
             + (f"queues {','.join(map(str, carrying))} carry priorities mapped to no class" if carrying
                else "no priority maps to these queues"))

    @staticmethod
    def _nvue_profiles(ports: list[PortIntent], sink: WarningSink) -> list[NvuePfcProfile]:
        seen: dict[str, NvuePfcProfile] = {}
        for p in ports:
            h = p.headroom
            if h is None or h.profile in seen:
                continue
            cable = max(1, min(100_000, math.floor(h.cable_m + 0.5)))
            if cable != h.cable_m:
                sink(f"ports[{p.name}].headroom.cable_m", f"{_cable_text(h.cable_m)} m", f"{cable} m",
                     "NVUE cable-length takes whole metres, 1-100000")
            seen[h.profile] = NvuePfcProfile(name=h.profile, cable_length_m=cable, xoff_bytes=h.xoff_bytes,
                                             xon_bytes=h.xon_bytes, port_buffer_bytes=h.size_bytes)
        return list(seen.values())

    @staticmethod
    def _nvue_pools(switch: Switch, lossless: bool, sink: WarningSink) -> tuple[int | None, int | None]:
        if not lossless:
            return None, None
        total, pool = switch.buffer.total_bytes, switch.buffer.headroom_pool_bytes
        if not total or pool is None:
            sink("lossless_pool_percent", "a lossless traffic pool", "-",
                 "switch.buffer.total_bytes and headroom_pool_bytes are needed to size NVUE's default-lossless pool")
            return None, None
        pct = max(1, min(99, math.ceil(pool * 100 / total)))
        return pct, 100 - pct

    def _sonic_config_db(self, parts: _PolicyParts, ports: list[PortIntent], vlans: list[VlanIntent],
                         sink: WarningSink) -> SonicConfigDb:
        trust_dscp = self.fabric.policy.qos.trust == TrustMode.DSCP
        qos = self.fabric.policy.qos
        lossless = parts.lossless_priorities
        tables: dict[str, Any] = {}
        if trust_dscp:
            tables["DSCP_TO_TC_MAP"] = {SONIC_MAP: {str(d): str(qos.priority_of(d)) for d in range(NUM_DSCP)}}
        else:
            tables["DOT1P_TO_TC_MAP"] = {SONIC_MAP: {str(p): str(p) for p in range(NUM_PRIORITIES)}}
        tables["TC_TO_QUEUE_MAP"] = {SONIC_MAP: {str(pq.priority): str(pq.queue) for pq in parts.priority_queues}}
        tables["TC_TO_PRIORITY_GROUP_MAP"] = {
            SONIC_MAP: {str(p): str(p if p in lossless else 0) for p in range(NUM_PRIORITIES)}
        }
        port_qos: dict[str, dict[str, str]] = {}
        pfc = plain_list(lossless)
        for p in ports:
            row = {"dscp_to_tc_map" if trust_dscp else "dot1p_to_tc_map": SONIC_MAP,
                   "tc_to_queue_map": SONIC_MAP, "tc_to_pg_map": SONIC_MAP}
            if p.pfc_priorities:
                row["pfc_enable"] = pfc
            if p.watchdog:
                row["pfcwd_sw_enable"] = pfc
            port_qos[p.name] = row
        tables["PORT_QOS_MAP"] = port_qos
        wred = {
            q.ecn.profile: {
                "ecn": "ecn_all",
                **{f"wred_{c}_enable": "true" for c in ("green", "yellow", "red")},
                **{f"{c}_min_threshold": str(q.ecn.min_threshold) for c in ("green", "yellow", "red")},
                **{f"{c}_max_threshold": str(q.ecn.max_threshold) for c in ("green", "yellow", "red")},
                **{f"{c}_drop_probability": str(q.ecn.probability_percent) for c in ("green", "yellow", "red")},
            }
            for q in parts.queues
            if q.ecn is not None
        }
        if wred:
            tables["WRED_PROFILE"] = wred
        tables["SCHEDULER"] = {
            f"scheduler.{q.id}": ({"type": "STRICT"} if q.strict else {"type": "DWRR", "weight": str(q.weight_percent)})
            for q in parts.queues
            if q.used
        }
        queue_rows: dict[str, dict[str, str]] = {}
        for p in ports:
            for q in parts.queues:
                if not q.used:
                    continue
                row = {"scheduler": f"scheduler.{q.id}"}
                if q.ecn is not None:
                    row["wred_profile"] = q.ecn.profile
                queue_rows[f"{p.name}|{q.id}"] = row
        tables["QUEUE"] = queue_rows
        headrooms = [p for p in ports if p.headroom is not None]
        if headrooms:
            cables: dict[str, str] = {}
            for p in headrooms:
                assert p.headroom is not None
                whole = math.floor(p.headroom.cable_m + 0.5)
                if whole != p.headroom.cable_m:
                    sink(f"ports[{p.name}].headroom.cable_m", f"{_cable_text(p.headroom.cable_m)} m", f"{whole} m",
                         "SONiC CABLE_LENGTH takes whole metres ('5m'); the buffer profile keeps the exact headroom")
                cables[p.name] = f"{whole}m"
            tables["CABLE_LENGTH"] = {SONIC_CABLE_PROFILE: cables}
            tables["BUFFER_PROFILE"] = {
                p.headroom.profile: {
                    "pool": SONIC_LOSSLESS_POOL, "xon": str(p.headroom.xon_bytes), "xoff": str(p.headroom.xoff_bytes),
                    "size": str(p.headroom.size_bytes), "dynamic_th": "0",
                }
                for p in headrooms
                if p.headroom
            }
            tables["BUFFER_PG"] = {
                f"{p.name}|{prio}": {"profile": p.headroom.profile}
                for p in headrooms
                if p.headroom
                for prio in p.pfc_priorities
            }
        wd = parts.watchdog
        if isinstance(wd, SonicWatchdog):
            pfc_wd: dict[str, dict[str, str]] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
            for p in ports:
                if p.watchdog:
                    pfc_wd[p.name] = {"action": wd.action, "detection_time": str(wd.detection_ms),
                                      "restoration_time": str(wd.restoration_ms)}
            tables["PFC_WD"] = pfc_wd
        if vlans:
            tables["VLAN"] = {f"Vlan{v.id}": {"vlanid": str(v.id), "description": v.name} for v in vlans}
            tables["VLAN_MEMBER"] = {
                f"Vlan{v.id}|{m.port}": {"tagging_mode": "tagged" if m.tagged else "untagged"}
                for v in vlans
                for m in v.members
            }
        tables["PORT"] = {p.name: {"mtu": str(p.mtu_bytes)} for p in ports}
        # Built above from validated intents, every value a str: skip re-validating thousands of rows.
        return SonicConfigDb.model_construct(**tables)


def switch_intent(fabric: Fabric, name: str) -> AnySwitchIntent:
    """The intent of switch ``name``. Raises KeyError when the fabric has no such switch."""
    switch = fabric.switch(name)
    if switch is None:
        raise KeyError(name)
    return SwitchIntentBuilder(fabric).build(switch)


def switch_intents(fabric: Fabric) -> list[AnySwitchIntent]:
    """The intent of every switch, inventory order."""
    builder = SwitchIntentBuilder(fabric)
    return [builder.build(s) for s in fabric.switches]
