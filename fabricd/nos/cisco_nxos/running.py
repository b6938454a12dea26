"""Cisco NX-OS ``show running-config``: the lossless settings in effect per interface, as a pure parser.

NX-OS builds lossless behaviour from policies (Nexus 9000 QoS Configuration Guide):

- classification: ``class-map type qos`` (``match dscp|cos <list>``) and ``policy-map type qos`` (``class X`` ->
  ``set qos-group N``), applied with ``service-policy type qos input NAME`` on the interface. The qos-group *is* the
  egress queue, so DSCP/CoS map straight to a queue (``dscp_to_queue``/``pcp_to_queue``); the match kind gives
  the trust;
- no-drop classes: ``policy-map type network-qos`` classes ``c-8q-nq<N>``/``c-8q-nq-default`` with ``pause pfc-cos
  <list>`` and the class ``mtu``, applied under ``system qos``; PFC is in effect on an interface with
  ``priority-flow-control mode on`` (``auto`` leaves it to DCBX negotiation);
- ECN: ``policy-map type queuing`` classes ``c-out-8q-q<N>`` with ``random-detect ... ecn``, applied under ``system
  qos`` (or per interface) as ``service-policy type queuing output``;
- the PFC watchdog: ``priority-flow-control watch-dog-interval on|off`` (global, or per interface, which wins),
  ``priority-flow-control watch-dog interval P`` (the poll, default 100 ms), per interface ``priority-flow-control
  watch-dog interface-multiplier N`` (detection = N x P; 0 or absent: the global ``watch-dog shutdown-multiplier``,
  default 1) and ``watch-dog disable-action`` (syslog only), globally ``fixed-restore multiplier M`` (restoration
  = M x P; else ``auto-restore multiplier``, default 10). The shutdown-multiplier/auto-restore forms have no Cisco
  source (they are read, never rendered); the defaults are fabricd's reading, unverified against a device.

The lossless path: a PFC frame for a CoS stops the queue (qos-group) of the network-qos class listing it in ``pause
pfc-cos``; that class is no-drop (NX-OS sizes its headroom) and the watchdog watches it; a queuing class with
``priority level N`` is strict (Nexus 9000 QoS Configuration Guide, "Configuring Priority Flow Control" and
"Configuring Queuing and Scheduling").

Format source: the real Azure Local TOR configs (fixtures/nxos/running-config-*-azurelocal.txt) and fabricd's NX-OS
templates.
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
    by_queue,
    indented,
    int_list,
    nothing_read,
    threshold_bytes,
    to_int,
)

PLATFORM = "cisco_nxos"
POLL_MS = 100
"""The NX-OS PFC watchdog's default interval; its timers are multiples of the interval."""
DEFAULT_SHUTDOWN_MULTIPLIER = 1
DEFAULT_RESTORE_MULTIPLIER = 10

_CLASS_QUEUE = re.compile(r"^class type (?:queuing|network-qos) c-(?:out-)?8q-(?:nq|q)(\d|-default)$")
_ECN = re.compile(
    r"^random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)"
    r"(?: drop-probability (\d+))?(?: weight \d+)?(?P<ecn> ecn)?$"
)
_MULTIPLIER = re.compile(
    r"^priority-flow-control (watch-dog shutdown-multiplier|auto-restore multiplier|"
    r"fixed-restore multiplier|watch-dog interval) (\d+)$"
)
_INTF_MULTIPLIER = "priority-flow-control watch-dog interface-multiplier "


def _queue_of(class_line: str) -> int | None:
    m = _CLASS_QUEUE.match(class_line)
    if m is None:
        return None
    return 0 if m.group(1) == "-default" else int(m.group(1))


def _ecn(policy: Block | None) -> dict[int, EcnConfig]:
    out: dict[int, EcnConfig] = {}
    for cls in policy.children if policy is not None else []:
        q = _queue_of(cls.line)
        if q is None:
            continue
        for child in cls.children:
            if m := _ECN.match(child.line):
                out[q] = EcnConfig(
                    enabled=m.group("ecn") is not None,
                    min_bytes=threshold_bytes(m.group(1), m.group(2)),
                    max_bytes=threshold_bytes(m.group(3), m.group(4)),
                    probability_percent=to_int(m.group(5)),
                )
    return out


def _classify(policy: Block | None, classes: dict[str, Block]) -> tuple[Trust | None, dict[int, int], dict[int, int]]:
    """(trust, dscp -> qos-group, cos -> qos-group) of a qos policy; the first matching class wins."""
    dscp: dict[int, int] = {}
    cos: dict[int, int] = {}
    kinds: set[str] = set()
    for cls in policy.children if policy is not None else []:
        if not cls.line.startswith("class "):
            continue
        group = next((to_int(c.line.split()[-1]) for c in cls.find("set qos-group ")), None)
        cmap = classes.get(cls.line.split()[-1])
        if group is None or cmap is None:
            continue
        for match in cmap.find("match "):
            words = match.line.split(None, 2)
            if len(words) < 3 or words[1] not in ("dscp", "cos"):
                continue
            codes = int_list(words[2], 0, 63 if words[1] == "dscp" else 7) or []
            kinds.add(words[1])
            target = dscp if words[1] == "dscp" else cos
            for cp in codes:
                target.setdefault(cp, group)
    trust: Trust | None = None
    if kinds == {"dscp"}:
        trust = "dscp"
    elif kinds == {"cos"}:
        trust = "pcp"
    elif kinds:
        trust = "both"
    return trust, dscp, cos


@dataclass
class _Sections:
    """The top-level sections of the running config fabricd reads, each by its own handler."""

    classes: dict[str, Block] = field(default_factory=dict)
    policies: dict[tuple[str, str], Block] = field(default_factory=dict)
    system: dict[str, str] = field(default_factory=dict)
    interfaces: list[Block] = field(default_factory=list)
    wd_global: bool = False
    multipliers: dict[str, int] = field(default_factory=dict)

    def read(self, b: Block) -> None:
        """File one top-level block under its section (other blocks are not lossless settings)."""
        words = b.line.split()
        if b.line.startswith("class-map type qos ") and len(words) >= 4:
            self.classes[words[-1]] = b
        elif b.line.startswith("policy-map type ") and len(words) >= 4:
            self.policies[(words[2], words[-1])] = b
        elif b.line == "system qos":
            self.system.update(_system_qos(b))
        elif b.line.startswith("interface "):
            self.interfaces.append(b)
        elif b.line == "priority-flow-control watch-dog-interval on":
            self.wd_global = True
        elif m := _MULTIPLIER.match(b.line):
            self.multipliers[m.group(1)] = int(m.group(2))


def _system_qos(b: Block) -> dict[str, str]:
    """``system qos``: policy kind (``network-qos``, ``queuing output``, ...) -> the policy applied."""
    system: dict[str, str] = {}
    for c in b.find("service-policy type "):
        w = c.line.split()
        kind = w[2] if w[2] != "queuing" else f"queuing {w[3]}" if len(w) > 4 else "queuing"
        system[kind] = w[-1]
    return system


@dataclass
class _NoDrop:
    """The system network-qos policy: the CoS values it pauses, the queue each pauses and the classes' MTUs."""

    pause: set[int] = field(default_factory=set)
    pause_queue: dict[int, int] = field(default_factory=dict)
    queue_mtu: dict[int, int] = field(default_factory=dict)


def _no_drop(nq: Block | None) -> _NoDrop:
    out = _NoDrop()
    for cls in nq.children if nq is not None else []:
        q = _queue_of(cls.line)
        for child in cls.children:
            if child.line.startswith("pause pfc-cos "):
                listed = set(int_list(child.line.split(None, 2)[2], 0, 7) or [])
                out.pause |= listed
                if q is not None:
                    out.pause_queue.update(dict.fromkeys(listed, q))
            elif child.line.startswith("mtu ") and q is not None and (mtu := to_int(child.line.split()[1])):
                out.queue_mtu[q] = mtu
    return out


@dataclass(frozen=True)
class _Timers:
    """The PFC watchdog's global timers: poll interval, detection multiplier and restoration, in ms."""

    poll: int
    shutdown: int
    restoration: int


def _timers(multipliers: dict[str, int]) -> _Timers:
    poll = multipliers.get("watch-dog interval", POLL_MS)
    return _Timers(
        poll=poll,
        shutdown=multipliers.get("watch-dog shutdown-multiplier", DEFAULT_SHUTDOWN_MULTIPLIER),
        restoration=poll
        * (
            multipliers.get("fixed-restore multiplier")
            or multipliers.get("auto-restore multiplier")
            or DEFAULT_RESTORE_MULTIPLIER
        ),
    )


def _words(lines: list[str], prefix: str) -> list[str] | None:
    """The words of an interface's first line that starts with ``prefix`` (None: no such line)."""
    return next((ln.split() for ln in lines if ln.startswith(prefix)), None)


def _last_word(lines: list[str], prefix: str) -> str | None:
    """The last word of an interface's first line that starts with ``prefix`` (a policy name, a value)."""
    words = _words(lines, prefix)
    return words[-1] if words is not None else None


def _pfc_mode(lines: list[str], pause: set[int]) -> tuple[frozenset[int], str | None]:
    """The priorities PFC is in effect on (``priority-flow-control mode on``), and why not when DCBX decides."""
    words = _words(lines, "priority-flow-control mode ")
    mode = words[2] if words is not None else None
    pfc = frozenset(pause) if mode == "on" else frozenset()
    note = None
    if mode in (None, "auto") and pause:
        note = f"priority-flow-control mode {mode or 'auto (default)'}: PFC only where DCBX negotiates it"
    return pfc, note


def _watchdog(lines: list[str], wd_global: bool, timers: _Timers) -> tuple[bool, int]:
    """(watchdog on, detection ms) of an interface: its own ``watch-dog-interval on|off`` wins over the global one;
    its ``interface-multiplier`` (0 or absent: the global shutdown multiplier) times the poll interval."""
    wd = _words(lines, "priority-flow-control watch-dog-interval ")
    mult = _words(lines, _INTF_MULTIPLIER)
    intf_mult = (to_int(mult[-1]) or 0) if mult is not None else 0
    return (wd[-1] == "on" if wd is not None else wd_global), timers.poll * (intf_mult or timers.shutdown)


def _strict(queuing: Block | None) -> frozenset[int]:
    """The queues a queuing policy makes strict (``priority level N``)."""
    return frozenset(
        q
        for cls in (queuing.children if queuing is not None else [])
        if (q := _queue_of(cls.line)) is not None and any(cls.find("priority level "))
    )


def _interface(b: Block, sections: _Sections, *, no_drop: _NoDrop, timers: _Timers, problems: list[str]) -> PortConfig:
    """One ``interface`` block with the system policies it inherits."""
    name = b.line.split(" ", 1)[1]
    lines = b.lines()
    pfc, note = _pfc_mode(lines, no_drop.pause)
    wd_on, detection_ms = _watchdog(lines, sections.wd_global, timers)
    qos_in = _last_word(lines, "service-policy type qos input ")
    trust, dscp, cos = _classify(sections.policies.get(("qos", qos_in or "")), sections.classes)
    if qos_in is not None and ("qos", qos_in) not in sections.policies:
        problems.append(f"interface {name}: service-policy type qos input {qos_in} is not configured")
    out_q = _last_word(lines, "service-policy type queuing output ") or sections.system.get("queuing output")
    mtu_words = _words(lines, "mtu ")
    queuing = sections.policies.get(("queuing", out_q or ""))
    pause_queue = no_drop.pause_queue
    return PortConfig(
        name=name,
        mtu_bytes=to_int(mtu_words[1]) if mtu_words is not None else None,
        trust=trust,
        dscp_to_queue=dscp if trust in ("dscp", "both") else None,
        pcp_to_queue=cos if trust in ("pcp", "both") else None,
        pfc_priorities=pfc,
        pfc_note=note,
        watchdog_priorities=pfc if wd_on else frozenset(),
        detection_ms=detection_ms,
        restoration_ms=timers.restoration,
        ecn=_ecn(queuing),
        queue_mtu_bytes=dict(no_drop.queue_mtu),
        pfc_queues={c: pause_queue[c] for c in pfc if c in pause_queue},
        watchdog_queues=by_queue(frozenset(c for c in pfc if c in pause_queue), pause_queue) if wd_on else {},
        buffered_priorities=pfc,
        strict_queues=_strict(queuing),
    )


@framed
def parse_running_config(text: str) -> LosslessConfig:
    """Per-interface lossless settings from ``show running-config`` (text)."""
    sections = _Sections()
    for b in indented(text):
        sections.read(b)
    problems: list[str] = []
    nq_name = sections.system.get("network-qos")
    nq = sections.policies.get(("network-qos", nq_name or ""))
    if nq_name and nq is None:
        problems.append(f"system qos names network-qos policy {nq_name!r}, which is not configured")
    no_drop = _no_drop(nq)
    timers = _timers(sections.multipliers)
    ports = {
        b.line.split(" ", 1)[1]: _interface(b, sections, no_drop=no_drop, timers=timers, problems=problems)
        for b in sections.interfaces
    }
    return nothing_read(LosslessConfig(PLATFORM, ports, tuple(problems)), text, "`show running-config`")
