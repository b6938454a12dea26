"""Arista AVD (``pyavd`` 6.4) as the oracle of fabricd's EOS renders.

For one EOS switch intent (:class:`fabricd.intent.switch.EosSwitchIntent`):

1. :func:`structured_config` translates the intent into AVD *structured config* (the ``eos_cli_config_gen`` input:
   ``qos.map``, ``qos_profiles[]`` with ``trust``, ``priority_flow_control`` incl. ``watchdog``, ``tx_queues[]`` with
   ``priority``, ``bandwidth_percent`` and ``random_detect.ecn``; ``vlans``; ``ethernet_interfaces[]`` with ``mtu``,
   ``service_profile`` and ``switchport``). It reads the intent's typed values, never fabricd's template text, so it
   is a second, independent translation of the same decisions.
2. :func:`judge` validates it with ``pyavd.validate_structured_config`` (AVD's schema: watchdog action ``drop`` or
   ``notify-only``, timers ``\\d+(\\.\\d{1,2})?``, ECN thresholds >= 1 in one of AVD's units, probability 1-100, ...),
   renders it with ``pyavd.get_device_config`` and diffs AVD's CLI against fabricd's template output, line by line
   within each block (:func:`semantic_lines`).

What counts as *formatting only* (not a rejection), and nothing else:

- order: AVD prints sections in its own order (``qos map`` after the interfaces, interfaces natural-sorted) and the
  watchdog ``port timer`` line before ``port action``; fabricd prints them in its template order. EOS stores its
  running config in its own order whatever the input order, so the diff compares per block, ignoring order;
- ``!`` separators, ``!`` comments, ``end`` and AVD's ``hostname`` line (fabricd's render is a config fragment).

Every other difference is a rejected line: a fabricd line AVD does not print in the same block (``extra``), an AVD
line fabricd does not print (``missing``), and each schema violation.

Three EOS rules are outside AVD's schema and checked here on the structured config:

- ``qos.map`` entries are free strings in AVD's schema; they are checked against the forms of AVD's schema examples
  (``"8 9 10 to traffic-class 1"`` for dscp/cos); the ``traffic-class ... to tx-queue`` form has no AVD example: those
  lines count as **unverified**;
- strict-priority tx-queues above every round-robin (``no priority``) tx-queue: EOS schedules strict queues above the
  round-robin group, and a ``no priority`` queue above a strict one puts that strict queue into the round-robin group
  (EOS User Manual, QoS chapter, transmit queues; not in AVD's schema; fabricd's ``validate`` refuses it with
  ``qos.eos_strict_below_round_robin``);
- the interface ``mtu`` (the IP MTU): AVD's schema takes 68-65535, the EOS parser's range; EOS refuses more than the
  platform's maximum (``% Max MTU for <interface> is <max>``), which the EOS User Manual documents as 68-9214
  (:data:`EOS_L3_MTU_DOCUMENTED`).
"""

from __future__ import annotations

import gc
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from fabricd.nos.arista_eos.intent import EosSwitchIntent

_FREE_MAP = re.compile(r"^(?P<values>\d+(?: \d+)*) to traffic-class (?P<tc>\d+)$")
_TC_MAP = re.compile(r"^(?P<values>\d+(?: \d+)*) to tx-queue (?P<q>\d+)$")

EOS_L3_MTU_DOCUMENTED = (68, 9214)
"""EOS User Manual, "Support for Layer 3 MTU on 7280R3/7500R3/7800R3" (arista.com/um-eos/eos-support-for-layer-3-mtu-
on-7280r37500r37800r3): "MTU is independently configurable on all routable interfaces. The switch supports MTU sizes
ranging from 68 to 9214 bytes." Arista's rbeapi (lib/rbeapi/api/ipinterfaces.rb, set_mtu) and puppet-eos
(lib/puppet/type/eos_ipinterface.rb) state 68-9214 too. Written here, not imported from the pack, so the pack's
rule is checked against it."""


@cache
def _pyavd() -> Any:
    import pyavd

    return pyavd


def structured_config(intent: EosSwitchIntent) -> dict[str, Any]:
    """AVD ``eos_cli_config_gen`` structured config for the QoS/PFC/ECN/VLAN/MTU settings of ``intent``."""
    key = "dscp" if intent.trust_dscp else "cos"
    qos_map = {
        key: [
            f"{' '.join(str(c) for c in line.codepoints)} to traffic-class {line.priority}"
            for line in intent.classifier
        ],
        "traffic_class": [f"{pq.priority} to tx-queue {pq.queue}" for pq in intent.priority_queues],
    }
    profile: dict[str, Any] = {"name": intent.profile_name, "trust": "dscp" if intent.trust_dscp else "cos"}
    if intent.lossless:
        pfc: dict[str, Any] = {
            "enabled": True,
            "priorities": [{"priority": p, "no_drop": True} for p in intent.lossless_priorities],
        }
        if intent.watchdog is not None:
            wd = intent.watchdog
            pfc["watchdog"] = {
                "enabled": True,
                "action": wd.action,
                "timer": {"timeout": wd.timeout_s, "polling_interval": wd.polling_s, "recovery_time": wd.recovery_s},
            }
        profile["priority_flow_control"] = pfc
    tx_queues: list[dict[str, Any]] = []
    for q in intent.queues:
        if not (q.used or q.round_robin):
            continue
        txq: dict[str, Any] = {"id": q.id}
        if q.round_robin:
            txq["priority"] = "no priority"
        if q.strict:
            txq["priority"] = "priority strict"
        if q.dwrr:
            txq["bandwidth_percent"] = q.weight_percent
        if q.ecn is not None:
            txq["random_detect"] = {
                "ecn": {
                    "threshold": {
                        "units": q.ecn.unit,
                        "min": q.ecn.min_threshold,
                        "max": q.ecn.max_threshold,
                        "max_probability": q.ecn.probability_percent,
                        "weight": 0,
                    }
                }
            }
        tx_queues.append(txq)
    profile["tx_queues"] = tx_queues
    interfaces: list[dict[str, Any]] = []
    for p in intent.ports:
        eth: dict[str, Any] = {"name": p.name, "mtu": p.mtu_bytes, "service_profile": intent.profile_name}
        if p.description:
            eth["description"] = p.description
        if p.access_vlan is not None:
            eth["switchport"] = {"access_vlan": p.access_vlan}
        if p.tagged_vlans:
            eth["switchport"] = {"mode": "trunk", "trunk": {"allowed_vlan": p.trunk_vlans}}
        interfaces.append(eth)
    return {
        "hostname": intent.name,
        "qos": {"map": qos_map},
        "qos_profiles": [profile],
        "vlans": [{"id": v.id, "name": v.name} for v in intent.vlans],
        "ethernet_interfaces": interfaces,
    }


def semantic_lines(text: str) -> Counter[tuple[tuple[str, ...], str]]:
    """``(enclosing block headers, line)`` for every configuration line of an EOS config, order ignored.

    Nesting follows indentation (EOS indents 3 spaces a level). ``!`` lines, ``end`` and ``hostname`` are dropped
    (formatting only, see the module docstring); runs of blanks inside a line are one blank.
    """
    out: Counter[tuple[tuple[str, ...], str]] = Counter()
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped == "end" or stripped.startswith("hostname "):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        line = " ".join(stripped.split())
        out[(tuple(h for _, h in stack), line)] += 1
        stack.append((indent, line))
    return out


@dataclass
class Judgement:
    """AVD's verdict on one fabricd EOS render."""

    violations: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    rule_breaks: list[str] = field(default_factory=list)
    lines: int = 0
    unverified: int = 0
    avd_cli: str = ""

    @property
    def rejected(self) -> int:
        return len(self.violations) + len(self.extra) + len(self.missing) + len(self.rule_breaks)

    def explain(self) -> str:
        parts = [f"schema: {v}" for v in self.violations] + [f"rule: {r}" for r in self.rule_breaks]
        parts += [f"fabricd only: {e}" for e in self.extra] + [f"AVD only: {m}" for m in self.missing]
        return "\n".join(parts)


def _rules(cfg: dict[str, Any]) -> tuple[list[str], int]:
    """EOS rules outside AVD's schema (module docstring): (breaks, unverified line count)."""
    breaks: list[str] = []
    unverified = 0
    qmap = cfg["qos"]["map"]
    for kind, top in (("dscp", 63), ("cos", 7)):
        for entry in qmap.get(kind, []):
            m = _FREE_MAP.match(entry)
            if m is None or int(m.group("tc")) > 7 or any(int(v) > top for v in m.group("values").split()):
                breaks.append(f"qos map {kind} {entry!r}: expected '<{kind} 0-{top} ...> to traffic-class <0-7>'")
    for entry in qmap.get("traffic_class", []):
        unverified += 1
        m = _TC_MAP.match(entry)
        if m is None or int(m.group("q")) > 7 or any(int(v) > 7 for v in m.group("values").split()):
            breaks.append(f"qos map traffic-class {entry!r}: expected '<tc 0-7 ...> to tx-queue <0-7>'")
    lo, hi = EOS_L3_MTU_DOCUMENTED
    for eth in cfg["ethernet_interfaces"]:
        if not lo <= eth["mtu"] <= hi:
            breaks.append(f"interface {eth['name']}: mtu {eth['mtu']} is outside EOS's documented {lo}-{hi}")
    for profile in cfg["qos_profiles"]:
        queues = profile.get("tx_queues", [])
        rr = [q["id"] for q in queues if q.get("priority") == "no priority"]
        for q in queues:
            if q.get("priority") == "priority strict" and rr and q["id"] < max(rr):
                breaks.append(
                    f"qos profile {profile['name']}: strict tx-queue {q['id']} below round-robin tx-queue "
                    f"{max(rr)} (EOS schedules strict queues above every round-robin queue)"
                )
    return breaks, unverified


def judge(intent: EosSwitchIntent, fabricd_cli: str) -> Judgement:
    """Validate the intent's structured config with AVD's schema, render it with AVD, diff against ``fabricd_cli``."""
    pyavd = _pyavd()
    cfg = structured_config(intent)
    out = Judgement()
    result = pyavd.validate_structured_config(cfg)
    out.violations = [f"{'.'.join(v.path)}: {v.message}" for v in result.validation_result.violations]
    out.rule_breaks, out.unverified = _rules(cfg)
    ours = semantic_lines(fabricd_cli)
    out.lines = sum(ours.values())
    if result.validated_data is None:
        return out
    out.avd_cli = pyavd.get_device_config(result.validated_data)
    # Each call builds a jinja2 ModuleLoader that registers a module in sys.modules and removes it when collected;
    # collect now, not at a random later moment (hypothesis scans sys.modules between examples).
    gc.collect()
    theirs = semantic_lines(out.avd_cli)
    out.extra = [" > ".join((*ctx, line)) for (ctx, line), n in (ours - theirs).items() for _ in range(n)]
    out.missing = [" > ".join((*ctx, line)) for (ctx, line), n in (theirs - ours).items() for _ in range(n)]
    return out
