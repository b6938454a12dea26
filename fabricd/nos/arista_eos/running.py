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
- interface ``mtu``;
- the lossless path: the tx-queue of a priority is its traffic class's (``qos map traffic-class``, EOS's default
  traffic-class N -> tx-queue N where unmapped); EOS pauses and watches the tx-queue a no-drop priority's
  traffic class maps to and sizes its headroom itself (fabricd's reading of the EOS QoS chapter: PFC is
  configured per priority, scheduling per tx-queue; not verified on a device). A tx-queue is round robin with
  ``no priority``; EOS schedules strict priority (its default) the queues above every round-robin queue.

Format source: the real AVD-generated running config (fixtures/eos/running-config-qos-profile-pfc-ecn-avd-generated
.txt) and fabricd's EOS templates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from fabricd.readers.framing import framed
from fabricd.readers.switch.config_model import (
    Block,
    EcnConfig,
    LosslessConfig,
    PortConfig,
    Trust,
    by_queue,
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
_TIMER = re.compile(
    r"^priority-flow-control pause watchdog port timer timeout (\S+) polling-interval (\S+) "
    r"recovery-time (\S+)(?: forced)?$"
)
_DEFAULT_TIMER = re.compile(r"^priority-flow-control pause watchdog default (timeout|recovery-time) (\S+)$")
_QUEUE = re.compile(r"^(?:uc-)?tx-queue (\d)$")
_ECN = re.compile(
    r"^random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)"
    r"(?: max-mark-probability (\d+))?(?: weight \d+)?$"
)


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
    round_robin: set[int] = field(default_factory=set)

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
                    if sub.line in ("no priority", "priority strict"):
                        (self.round_robin.add if sub.line == "no priority" else self.round_robin.discard)(
                            int(m.group(1))
                        )
                    if e := _ECN.match(sub.line):
                        self.ecn[int(m.group(1))] = EcnConfig(
                            enabled=True,
                            min_bytes=threshold_bytes(e.group(1), e.group(2)),
                            max_bytes=threshold_bytes(e.group(3), e.group(4)),
                            probability_percent=to_int(e.group(5)),
                        )


@dataclass
class _Global:
    """The top-level lines and blocks of the running config: the maps, the qos profiles, the interfaces and the
    global PFC settings."""

    dscp: list[tuple[list[int], int]] = field(default_factory=list)
    pcp: list[tuple[list[int], int]] = field(default_factory=list)
    txq: list[tuple[list[int], int]] = field(default_factory=list)
    profiles: dict[str, Block] = field(default_factory=dict)
    interfaces: list[Block] = field(default_factory=list)
    default_ms: dict[str, int | None] = field(default_factory=dict)
    pfc_all_off: bool = False
    problems: list[str] = field(default_factory=list)

    def read(self, b: Block) -> None:
        """File one top-level block under what it configures."""
        line = b.line
        if m := _MAP.match(line):
            self._codepoint_map(line, m)
        elif m := _TXQ_MAP.match(line):
            self._queue_map(line, m)
        elif line.startswith("qos profile "):
            self.profiles[line.split(" ", 2)[2]] = b
        elif line.startswith("interface "):
            self.interfaces.append(b)
        elif line == "priority-flow-control all off":
            self.pfc_all_off = True
        elif m := _DEFAULT_TIMER.match(line):
            self.default_ms[m.group(1)] = seconds_to_ms(m.group(2))

    def _codepoint_map(self, line: str, m: re.Match[str]) -> None:
        """``qos map dscp|cos <list> to traffic-class N``."""
        codes = int_list(m.group(2), 0, 63 if m.group(1) == "dscp" else 7)
        if codes is None:
            self.problems.append(f"unreadable codepoint list: {line!r}")
        else:
            (self.dscp if m.group(1) == "dscp" else self.pcp).append((codes, int(m.group(3))))

    def _queue_map(self, line: str, m: re.Match[str]) -> None:
        """``qos map traffic-class <list> to tx-queue N``."""
        tcs = int_list(m.group(1), 0, 7)
        if tcs is None:
            self.problems.append(f"unreadable traffic-class list: {line!r}")
        else:
            self.txq.append((tcs, int(m.group(2))))

    @cached_property
    def maps(self) -> tuple[dict[int, int] | None, dict[int, int] | None, dict[int, int] | None]:
        """(dscp -> traffic class, cos -> traffic class, traffic class -> tx-queue), once every line is read."""
        return (
            mapping(self.dscp) if self.dscp else None,
            mapping(self.pcp) if self.pcp else None,
            mapping(self.txq) if self.txq else None,
        )

    def port(self, name: str, state: _State, mtu: int | None) -> PortConfig:
        """One port's (or profile's) settings after the global maps and PFC switch."""
        dscp_map, pcp_map, queue_map = self.maps
        pfc = frozenset(state.no_drop) if state.pfc_on and not self.pfc_all_off else frozenset()
        return PortConfig(
            name=name,
            mtu_bytes=mtu,
            trust=state.trust,
            dscp_to_priority=dscp_map,
            pcp_to_priority=pcp_map,
            priority_to_queue=queue_map,
            pfc_priorities=pfc,
            pfc_note="priority-flow-control all off (global)" if self.pfc_all_off and state.pfc_on else None,
            watchdog_priorities=frozenset(state.no_drop) if state.watchdog else frozenset(),
            detection_ms=state.detection_ms if state.detection_ms is not None else self.default_ms.get("timeout"),
            restoration_ms=(
                state.restoration_ms if state.restoration_ms is not None else self.default_ms.get("recovery-time")
            ),
            ecn=state.ecn,
            pfc_queues={p: (queue_map or {}).get(p, p) for p in pfc},
            watchdog_queues=by_queue(pfc, queue_map or {}) if state.watchdog else {},
            buffered_priorities=pfc,
            strict_queues=frozenset(q for q in range(8) if q > max(state.round_robin, default=-1)),
        )

    def interface(self, b: Block) -> PortConfig:
        """An interface: its ``service-profile`` first, then its own lines."""
        name = b.line.split(" ", 1)[1]
        state = _State()
        for profile_line in b.find("service-profile "):
            profile = self.profiles.get(profile_line.line.split(" ", 1)[1])
            if profile is None:
                self.problems.append(f"interface {name}: {profile_line.line} names no qos profile in the config")
            else:
                state.apply(profile)
        state.apply(b)
        return self.port(name, state, next((to_int(c.line.split()[1]) for c in b.find("mtu ")), None))

    def profile(self, name: str, block: Block) -> PortConfig:
        """A ``qos profile`` as a port would have it."""
        state = _State()
        state.apply(block)
        return self.port(name, state, None)


@framed
def parse_running_config(text: str) -> LosslessConfig:
    """Per-interface lossless settings from ``show running-config`` (text)."""
    g = _Global()
    for b in indented(text):
        g.read(b)
    ports = {b.line.split(" ", 1)[1]: g.interface(b) for b in g.interfaces}
    by_profile = {pname: g.profile(pname, block) for pname, block in g.profiles.items()}
    return nothing_read(LosslessConfig(PLATFORM, ports, tuple(g.problems), by_profile), text, "`show running-config`")
