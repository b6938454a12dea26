"""Arista EOS ``show running-config``: the lossless settings in effect per interface, as a pure parser.

What EOS applies to a port is its ``service-profile`` (a ``qos profile``) overlaid by the interface's own lines, the
interface winning for the same setting (EOS User Manual, "QoS profiles"; AVD ``qos-profiles.j2``). Read back:

- ``qos map dscp|cos <list> to traffic-class <tc>`` and ``qos map traffic-class <list> to tx-queue <q>`` (global);
- ``qos trust dscp|cos`` (``no qos trust``: untrusted, the port default only);
- ``priority-flow-control on|off`` (also ``mode on|off``) and ``priority-flow-control priority <p> no-drop|drop``;
  a global ``priority-flow-control all off`` turns PFC off everywhere;
- ``priority-flow-control pause watchdog`` (on, watching the no-drop priorities), its ``port timer timeout T
  polling-interval P recovery-time R`` or the global ``pause watchdog default timeout|recovery-time`` (decimal
  seconds);
- ``tx-queue``/``uc-tx-queue <q>`` blocks with ``random-detect ecn minimum-threshold A <unit> maximum-threshold B
  <unit> [max-mark-probability P]`` (``kbytes`` = 1000 bytes; ``segments`` have no fixed size: None);
- interface ``mtu``.

Format source: the real AVD-generated running config (fixtures/eos/running-config-qos-profile-pfc-ecn-avd-generated
.txt) and fabricd's EOS templates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricd.readers.framing import framed
from fabricd.readers.switch.config_model import (
    Block,
    EcnConfig,
    LosslessConfig,
    PortConfig,
    Trust,
    indented,
    int_list,
    mapping,
    nothing_read,
    seconds_to_ms,
    threshold_bytes,
    to_int,
)

PLATFORM = "arista_eos"

_MAP = re.compile(r"^qos map (dscp|cos) (.+?) to traffic-class (\d)$")
_TXQ_MAP = re.compile(r"^qos map traffic-class (.+?) to tx-queue (\d)$")
_PRIO = re.compile(r"^priority-flow-control priority (\d) (no-drop|drop)$")
_TIMER = re.compile(r"^priority-flow-control pause watchdog port timer timeout (\S+) polling-interval (\S+) "
                    r"recovery-time (\S+)(?: forced)?$")
_DEFAULT_TIMER = re.compile(r"^priority-flow-control pause watchdog default (timeout|recovery-time) (\S+)$")
_QUEUE = re.compile(r"^(?:uc-)?tx-queue (\d)$")
_ECN = re.compile(r"^random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)"
                  r"(?: max-mark-probability (\d+))?(?: weight \d+)?$")


@dataclass
class _State:
    """Settings accumulated over a port's sources (profile first, then the interface)."""

    trust: Trust | None = None
    pfc_on: bool | None = None
    no_drop: set[int] = field(default_factory=set)
    watchdog: bool = False
    detection_ms: int | None = None
    restoration_ms: int | None = None
    ecn: dict[int, EcnConfig] = field(default_factory=dict)

    def apply(self, source: Block) -> None:
        for child in source.children:
            line = child.line
            if line in ("qos trust dscp", "qos trust cos"):
                self.trust = "dscp" if line.endswith("dscp") else "pcp"
            elif line == "no qos trust":
                self.trust = "port"
            elif line in ("priority-flow-control on", "priority-flow-control mode on"):
                self.pfc_on = True
            elif line in ("priority-flow-control off", "priority-flow-control mode off"):
                self.pfc_on = False
            elif m := _PRIO.match(line):
                (self.no_drop.add if m.group(2) == "no-drop" else self.no_drop.discard)(int(m.group(1)))
            elif line == "priority-flow-control pause watchdog":
                self.watchdog = True
            elif m := _TIMER.match(line):
                self.detection_ms = seconds_to_ms(m.group(1))
                self.restoration_ms = seconds_to_ms(m.group(3))
            elif m := _QUEUE.match(line):
                for sub in child.children:
                    if e := _ECN.match(sub.line):
                        self.ecn[int(m.group(1))] = EcnConfig(
                            enabled=True, min_bytes=threshold_bytes(e.group(1), e.group(2)),
                            max_bytes=threshold_bytes(e.group(3), e.group(4)),
                            probability_percent=to_int(e.group(5)),
                        )


@framed
def parse_running_config(text: str) -> LosslessConfig:
    """Per-interface lossless settings from ``show running-config`` (text)."""
    blocks = indented(text)
    dscp: list[tuple[list[int], int]] = []
    pcp: list[tuple[list[int], int]] = []
    txq: list[tuple[list[int], int]] = []
    profiles: dict[str, Block] = {}
    interfaces: list[Block] = []
    default_ms: dict[str, int | None] = {}
    pfc_all_off = False
    problems: list[str] = []
    for b in blocks:
        line = b.line
        if m := _MAP.match(line):
            codes = int_list(m.group(2), 0, 63 if m.group(1) == "dscp" else 7)
            if codes is None:
                problems.append(f"unreadable codepoint list: {line!r}")
            else:
                (dscp if m.group(1) == "dscp" else pcp).append((codes, int(m.group(3))))
        elif m := _TXQ_MAP.match(line):
            tcs = int_list(m.group(1), 0, 7)
            if tcs is None:
                problems.append(f"unreadable traffic-class list: {line!r}")
            else:
                txq.append((tcs, int(m.group(2))))
        elif line.startswith("qos profile "):
            profiles[line.split(" ", 2)[2]] = b
        elif line.startswith("interface "):
            interfaces.append(b)
        elif line == "priority-flow-control all off":
            pfc_all_off = True
        elif m := _DEFAULT_TIMER.match(line):
            default_ms[m.group(1)] = seconds_to_ms(m.group(2))
    dscp_map = mapping(dscp) if dscp else None
    pcp_map = mapping(pcp) if pcp else None
    queue_map = mapping(txq) if txq else None
    maps = (dscp_map, pcp_map, queue_map)

    def port(name: str, state: _State, mtu: int | None) -> PortConfig:
        pfc = frozenset(state.no_drop) if state.pfc_on and not pfc_all_off else frozenset()
        return PortConfig(
            name=name, mtu_bytes=mtu, trust=state.trust, dscp_to_priority=maps[0], pcp_to_priority=maps[1],
            priority_to_queue=maps[2], pfc_priorities=pfc,
            pfc_note="priority-flow-control all off (global)" if pfc_all_off and state.pfc_on else None,
            watchdog_priorities=frozenset(state.no_drop) if state.watchdog else frozenset(),
            detection_ms=state.detection_ms if state.detection_ms is not None else default_ms.get("timeout"),
            restoration_ms=(state.restoration_ms if state.restoration_ms is not None
                            else default_ms.get("recovery-time")),
            ecn=state.ecn,
        )

    ports: dict[str, PortConfig] = {}
    for b in interfaces:
        name = b.line.split(" ", 1)[1]
        state = _State()
        for profile_line in b.find("service-profile "):
            profile = profiles.get(profile_line.line.split(" ", 1)[1])
            if profile is None:
                problems.append(f"interface {name}: {profile_line.line} names no qos profile in the config")
            else:
                state.apply(profile)
        state.apply(b)
        ports[name] = port(name, state, next((to_int(c.line.split()[1]) for c in b.find("mtu ")), None))
    by_profile: dict[str, PortConfig] = {}
    for pname, block in profiles.items():
        state = _State()
        state.apply(block)
        by_profile[pname] = port(pname, state, None)
    return nothing_read(LosslessConfig(PLATFORM, ports, tuple(problems), by_profile), text, "`show running-config`")
