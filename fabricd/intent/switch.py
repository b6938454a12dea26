"""Switch intent: per-switch desired state, decided from the :class:`~fabricd.model.Fabric` model.

L1: pure, no device libraries. Every decision lives here; ``templates/<platform>/`` only print the result and
SONiC's CONFIG_DB is ``json.dumps`` of its intent model. Per switch this decides:

* classification: the full 64-entry DSCP -> priority table (unmapped DSCPs go to the policy's default
  priority) or, with PCP trust, the identity PCP -> priority map; priority -> egress queue;
* queues: which of the 8 are DWRR (weights normalised to 100 %, as the host's ``dcb ets`` does), which is the
  strict CNP queue, which carry a lossless priority and which take ECN (a class's ``ecn_profile`` or a profile
  listing the class), with thresholds in the platform's unit (kbytes on EOS/NX-OS, bytes on NVUE/SONiC);
* per-port headroom (xoff/xon/size from :func:`fabricd.intent.headroom.headroom`, cable length from a
  ``Link.cable_m`` / ``Nic.cable_m`` override or ``policy.buffers.cable_length_m`` by link or port role);
* the PFC watchdog in the platform's timer units (its pack's codec, ``fabricd/nos/<id>/watchdog.py``);
* VLANs and their members on this switch (tagged towards switches and VLAN-tagged NICs, untagged towards NICs
  without a VLAN), and port MTUs.

Whatever a platform cannot express exactly is a :class:`~fabricd.intent.render_warnings.RenderWarning` on the
intent. Fields marked ``walk=False`` are labels or pre-formatted text (names, JSON for a CLI line), not policy
values: the render tests check that every other scalar appears in the output or in a warning.

This module holds what every platform shares: the models every switch intent has, the policy-level decisions and
the :class:`SwitchIntentCore` builder. What is one platform's own (its intent class, ECN units, classifier layout,
headroom profile names, watchdog codec and the last shaping step) is that platform's pack,
``fabricd/nos/<id>/intent.py``, handed to the builder as an :class:`IntentShaping`; the builder callers use,
:class:`fabricd.nos.registry.SwitchIntentBuilder`, finds it through the platform registry.

The builder caches what is the same for every switch of a platform (maps, queues, ECN, watchdog) and headroom per
(speed, cable, MTU), so a 1,000-switch fabric costs little more than its ports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

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
    Watchdog,
    split_endpoint,
)
from fabricd.model.types import Model

from .headroom import headroom
from .lossless_path import LosslessPath, PathPlan, path_plan
from .render_warnings import RenderWarning, WarningSink
from .units import chunks, plain_list, range_list, split_percent
from .watchdog_timers import Warn

NUM_DSCP = 64
NUM_PRIORITIES = 8
NUM_QUEUES = 8

_LABEL: Any = {"walk": False}
"""Field metadata for labels and pre-formatted text: the render tests do not look for them in the output."""


def label(description: str) -> Any:
    """A labelled field: names and pre-formatted text the render tests do not look for in the output."""
    return Field(description=description, json_schema_extra=_LABEL)


_label = label

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
    description: str | None = Field(default=None, description="the inventory's port description; None for none")


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


# ------------------------------------------------------------------------------------------------------------
# What a platform pack hands the builder
# ------------------------------------------------------------------------------------------------------------


def bytes_ecn(profile: EcnProfile, queue: int, warn: Warn) -> EcnIntent:
    """ECN thresholds in bytes, as the policy gives them (SONiC; NVUE after its probability floor)."""
    return EcnIntent(
        profile=profile.name,
        min_threshold=profile.min_bytes,
        max_threshold=profile.max_bytes,
        unit="bytes",
        probability_percent=profile.max_mark_probability_percent,
    )


def default_headroom_name(speed: Speed, cable_m: float, mtu: int) -> str:
    """``fabricd-<speed>-<cable>m[-mtu<N>]``: the PFC/buffer profile name shared by ports alike."""
    name = f"fabricd-{speed.value.lower()}-{cable_text(cable_m).replace('.', 'p')}m"
    if mtu != 9216:
        name += f"-mtu{mtu}"
    return name


@dataclass(frozen=True)
class PolicyParts:
    """Policy-level decisions for one platform; warnings are (field, intended, rendered, reason). ``paths`` is the
    one lossless-path decision (:mod:`fabricd.intent.lossless_path`): every table that depends on where a lossless
    priority goes (queue, PFC priority -> queue, watchdog queues, priority groups and their buffers) reads it."""

    lossless_priorities: list[int]
    classifier: list[ClassifierLine]
    priority_queues: list[PriorityQueue]
    queues: list[QueueIntent]
    watchdog: Model | None
    warnings: list[tuple[str, str, str, str]]
    plan: PathPlan

    @property
    def paths(self) -> tuple[LosslessPath, ...]:
        return self.plan.lossless


@dataclass(frozen=True)
class ShapeContext:
    """What the last, platform-own shaping step of one switch gets: the shared decisions and the warning sink.
    ``common`` are the :class:`SwitchIntentBase` fields, ready to pass on."""

    fabric: Fabric
    switch: Switch
    parts: PolicyParts
    ports: list[PortIntent]
    vlans: list[VlanIntent]
    sink: WarningSink
    common: dict[str, Any]


@dataclass(frozen=True)
class IntentShaping:
    """A platform's part of intent shaping (the ``intent`` field of its :class:`~fabricd.nos.spec.PlatformSpec`).

    ``model``: the platform's intent class; ``finish``: builds it from the shared decisions; ``watchdog``: the
    forward watchdog codec (policy ms -> the platform's watchdog model); ``ecn``: ECN thresholds in the platform's
    unit; ``classifier_sep`` / ``dscp_per_line``: how a classifier line lists its codepoints; ``headroom_name``: the
    name of the buffer/PFC profile of ports with the same (speed, cable, MTU)."""

    model: type[SwitchIntentBase]
    finish: Callable[[ShapeContext], SwitchIntentBase]
    watchdog: Callable[[Watchdog, Warn], Model]
    ecn: Callable[[EcnProfile, int, Warn], EcnIntent] = bytes_ecn
    classifier_sep: str = ","
    dscp_per_line: int = NUM_DSCP
    headroom_name: Callable[[Speed, float, int], str] = default_headroom_name


# ------------------------------------------------------------------------------------------------------------
# Decisions shared by every switch of a platform
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Peer:
    """What is cabled to a switch port: another switch (link) or a host NIC."""

    kind: Literal["switch", "host"]
    cable_m: float | None
    role: LinkRole | None
    vlan: int | None = None


def ecn_profile_of(fabric: Fabric, tc: TrafficClass) -> EcnProfile | None:
    """The ECN profile the switches mark ``tc``'s queue with: the class's ``ecn_profile``, else the first profile
    listing the class (validate's checks read the binding from here too)."""
    policy = fabric.policy
    if tc.ecn_profile is not None:
        return policy.ecn_profile(tc.ecn_profile)
    return next((p for p in policy.ecn_profiles if tc.id in p.traffic_classes), None)


def policy_parts(fabric: Fabric, shaping: IntentShaping) -> PolicyParts:
    policy = fabric.policy
    qos = policy.qos
    notes: list[tuple[str, str, str, str]] = []

    def warn(field: str, intended: str, rendered: str, reason: str) -> None:
        notes.append((field, intended, rendered, reason))

    lossless = policy.lossless
    plan = path_plan(fabric)
    lossless_prios = plan.lossless_priorities

    # classification
    sep = shaping.classifier_sep
    if qos.trust == TrustMode.DSCP:
        by_prio: dict[int, list[int]] = {}
        for d in range(NUM_DSCP):
            by_prio.setdefault(qos.priority_of(d), []).append(d)
        per_line = shaping.dscp_per_line
        classifier = [
            ClassifierLine(codepoints=part, text=plain_list(part, sep), priority=p)
            for p in sorted(by_prio)
            for part in chunks(by_prio[p], per_line)
        ]
    else:
        classifier = [ClassifierLine(codepoints=[p], text=str(p), priority=p) for p in range(NUM_PRIORITIES)]

    # priority -> queue: the one decision (intent/lossless_path.py)
    prio_queue = plan.priority_queue
    priority_queues = [PriorityQueue(priority=p, queue=q) for p, q in prio_queue.items()]

    # queues
    by_id = {tc.id: tc for tc in qos.traffic_classes}
    dwrr_ids = [tc.id for tc in qos.traffic_classes if tc.scheduler == Scheduler.DWRR]
    raw = {i: by_id[i].weight_percent for i in dwrr_ids}
    weights = split_percent(
        dict.fromkeys(raw, 1)
        if all(w is None for w in raw.values())
        else {i: (w if w is not None else 1) for i, w in raw.items()}
    )
    for i, w in raw.items():
        if w is not None and weights[i] != w:
            warn(
                f"queues[{i}].weight_percent", f"{w} %", f"{weights[i]} %", "DWRR shares are normalised to sum to 100 %"
            )
    top_dwrr = max(dwrr_ids, default=-1)
    queues: list[QueueIntent] = []
    for qid in range(NUM_QUEUES):
        tc = by_id.get(qid)
        prios = sorted(p for p, q in prio_queue.items() if q == qid)
        if tc is None:
            queues.append(
                QueueIntent(
                    id=qid,
                    name="unused",
                    priorities=prios,
                    used=False,
                    strict=False,
                    dwrr=False,
                    weight_percent=None,
                    round_robin=qid < top_dwrr,
                    lossless=False,
                    ecn=None,
                )
            )
            continue
        profile = ecn_profile_of(fabric, tc)
        dwrr = tc.scheduler == Scheduler.DWRR
        queues.append(
            QueueIntent(
                id=qid,
                name=tc.name,
                priorities=prios,
                used=True,
                strict=not dwrr,
                dwrr=dwrr,
                weight_percent=weights[qid] if dwrr else None,
                round_robin=dwrr,
                lossless=any(path.queue == qid for path in plan.lossless),
                ecn=shaping.ecn(profile, qid, warn) if profile is not None else None,
            )
        )

    wd = policy.pfc.watchdog
    watchdog = shaping.watchdog(wd, warn) if lossless and wd.enabled and lossless_prios else None
    return PolicyParts(lossless_prios, classifier, priority_queues, queues, watchdog, notes, plan)


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


def cable_text(cable_m: float) -> str:
    return f"{cable_m:g}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def ident(name: str) -> str:
    """A policy name as a NOS identifier: letters, digits, _ and - only."""
    return _UNSAFE.sub("_", name)


_cable_text = cable_text


def warn_headroom_computed(ports: list[PortIntent], sink: WarningSink, nos: str) -> None:
    """One warning listing the headroom fabricd computed, for a NOS that sizes PFC headroom itself."""
    groups: dict[tuple[float, int, int, int], list[str]] = {}
    for p in ports:
        if p.headroom is not None:
            h = p.headroom
            groups.setdefault((h.cable_m, h.xoff_bytes, h.xon_bytes, h.size_bytes), []).append(p.name)
    if not groups:
        return
    intended = "; ".join(
        f"{','.join(names)}: cable {cable_text(c)} m, xoff {xoff} B, xon {xon} B, size {size} B"
        for (c, xoff, xon, size), names in groups.items()
    )
    sink(
        "ports.headroom",
        intended,
        "-",
        f"{nos} sizes PFC headroom itself; it has no CLI for per-port xoff/xon or cable length",
    )


# ------------------------------------------------------------------------------------------------------------
# The builder
# ------------------------------------------------------------------------------------------------------------


class SwitchIntentCore:
    """Builds the switch intents of one fabric, caching what they share. ``shaping_of`` gives each platform's part
    (:class:`IntentShaping`); it raises for a platform without one (:func:`fabricd.nos.registry.spec_of`)."""

    def __init__(self, fabric: Fabric, shaping_of: Callable[[Platform], IntentShaping]) -> None:
        self.fabric = fabric
        self._shaping_of = shaping_of
        self._parts: dict[Platform, PolicyParts] = {}
        self._peers = _peers(fabric)
        self._vlans = _vlan_members(fabric, self._peers)
        self._vlan_names = {v.id: v.name for v in fabric.policy.vlans}
        self._headrooms: dict[tuple[Platform, Speed, float, int], HeadroomIntent] = {}

    def parts(self, platform: Platform) -> PolicyParts:
        got = self._parts.get(platform)
        if got is None:
            got = self._parts[platform] = policy_parts(self.fabric, self._shaping_of(platform))
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
            name = self._shaping_of(platform).headroom_name(speed, cable_m, mtu)
            got = self._headrooms[key] = HeadroomIntent(
                profile=name, cable_m=cable_m, xoff_bytes=xoff, xon_bytes=xon, size_bytes=size
            )
        return got

    def _ports(self, switch: Switch, parts: PolicyParts, wd_on: bool, sink: WarningSink) -> list[PortIntent]:
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
                sink(
                    f"ports[{port.name}].access_vlan",
                    f"untagged VLAN {','.join(map(str, untagged))}",
                    f"tagged VLANs {','.join(map(str, tagged))}",
                    "a port carries one untagged VLAN only when it is in no other VLAN",
                )
            out.append(
                PortIntent(
                    name=port.name,
                    speed=port.speed,
                    role=port.role,
                    mtu_bytes=port.mtu,
                    pfc_priorities=parts.lossless_priorities,
                    pfc=lossless,
                    watchdog=wd_on,
                    headroom=hr,
                    access_vlan=access,
                    tagged_vlans=tagged,
                    trunk_vlans=range_list(tagged),
                    description=port.description,
                )
            )
        return out

    def _vlan_intents(self, switch: Switch) -> list[VlanIntent]:
        members = self._vlans.get(switch.name, {})
        port_order = {p.name: i for i, p in enumerate(switch.ports)}
        return [
            VlanIntent(
                id=vid,
                name=self._vlan_names.get(vid, f"vlan{vid}"),
                members=[
                    VlanMember(port=p, tagged=t)
                    for p, t in sorted(
                        members[vid].items(), key=lambda kv: (port_order.get(kv[0], len(port_order)), kv[0])
                    )
                ],
            )
            for vid in sorted(members)
        ]

    # --- per switch --------------------------------------------------------------------------------------

    def build(self, switch: Switch) -> SwitchIntentBase:
        """The intent of one switch of this fabric, in its platform's intent class."""
        platform = switch.platform
        shaping = self._shaping_of(platform)
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
        return shaping.finish(ShapeContext(self.fabric, switch, parts, ports, vlans, sink, common))
