"""Simulated Arista EOS: config sessions with diffs, commit, abort and commit timers; checkpoints; QoS show commands.

Behaviour follows EOS's documented CLI (Arista EOS User Manual, "Configuration sessions"; AVD's qos-profiles and
priority-flow-control templates):

- login as a privilege-15 user lands in ``host#``; ``terminal length 0`` answers ``Pagination disabled.`` and
  ``terminal width N`` answers ``Width set to N columns.`` (the strings netmiko's arista_eos driver waits for);
- ``configure session NAME`` edits a copy of the running config; ``show session-config diffs`` prints a unified
  diff; ``commit`` replaces the running config; ``commit timer hh:mm:ss`` commits and reverts unless
  ``configure session NAME commit`` confirms in time; ``abort`` discards (and reverts a pending timer);
- ``configure checkpoint save NAME`` / ``configure replace checkpoint:NAME``;
- bad lines answer ``% Invalid input``, ``% Invalid input (at token N: 'x')`` or ``% Incomplete command``;
- an interface ``mtu`` parses as ``<68-65535>`` (cEOS ``mtu ?``, aristanetworks/avd#3274) and a value above the
  platform's maximum answers ``% Max MTU for Ethernet1 is 9214`` and is not applied (the wording of a virtual EOS,
  ipspace/netlab#1890, which caps at 9194; the simulator stands for a hardware switch, whose documented maximum is
  9214: EOS User Manual, "Support for Layer 3 MTU on 7280R3/7500R3/7800R3").

Counter output, each in the shape fabricd/nos/arista_eos/show.py documents with its source:
``show interfaces counters queue detail`` follows the captured format (ntc-templates);
``show priority-flow-control counters | json`` and ``show qos interfaces ecn counters queue | json`` follow real eAPI
output (ANTA's unit tests); ``show priority-flow-control counters detail | json`` and ``show priority-flow-control
counters watchdog | json`` follow the key paths of facebook/DNE-TaaC's health checks (no capture: unverified); the
plain-text PFC tables follow EOS's documented columns (unverified). The text forms of the ECN and watchdog counters
have no capture and are not simulated (``% Invalid input``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricd.model import Platform

from .cabling import eos_interfaces_json, eos_lldp_detail_json, eos_phy_detail_json, eos_transceiver
from .counters import WatchdogSettings
from .device import Cancellable, DeviceSpec, Reply
from .grammar import Rule
from .textconfig import Node
from .treecli import ModalShell, TreeSwitch, split_pipes

_UNITS = "(bytes|kbytes|mbytes|segments|milliseconds|microseconds)"
MAX_MTU = 9214
"""The largest interface ``mtu`` (the IP MTU) the EOS User Manual documents: 'MTU sizes ranging from 68 to 9214'."""
_PFC_LINES = (
    Rule.of("priority-flow-control (on|off)", key=1),
    Rule.of("priority-flow-control mode (on|off)", name="priority-flow-control"),
    Rule.of("priority-flow-control priority <int:0-7> (drop|no-drop)", key=3),
    Rule.of("priority-flow-control pause watchdog"),
    # AVD 6.4 schema (qos_profiles[].priority_flow_control.watchdog): port action drop | notify-only (no-drop was
    # removed in AVD 6.0 as invalid CLI, avd#6399); timeout and recovery-time with at most 2 decimals, polling
    # interval with at most 3 or `auto`.
    Rule.of("priority-flow-control pause watchdog port action (drop|notify-only)", key=5),
    Rule.of(
        "priority-flow-control pause watchdog port timer timeout <num:2> polling-interval <word> recovery-time <num:2>"
        " [forced]",
        key=5,
    ),
)
_QOS_PORT = (
    Rule.of("qos trust (dscp|cos)", key=2),
    Rule.of("no qos trust", name="qos trust"),
    Rule.of("qos (dscp|cos) <int:0-63>", key=2),
    Rule.of("service-policy type qos input <word>", key=4),
    Rule.of("shape rate <rest>", key=2),
)
_TXQ = (
    Rule.of("bandwidth percent <int:1-100>", key=2),
    Rule.of("bandwidth guaranteed percent <int:1-100>", key=2),
    Rule.of("priority strict", name="priority"),
    Rule.of("no priority", name="priority"),
    Rule.of("shape rate <rest>", key=2),
    Rule.of(
        f"random-detect ecn minimum-threshold <int> {_UNITS} maximum-threshold <int> {_UNITS}"
        " [max-mark-probability <int:1-100>] [weight <int:0-15>]",
        name="random-detect ecn threshold",
    ),
    Rule.of("random-detect ecn count"),
    Rule.of("random-detect ecn delay threshold <int> (milliseconds|microseconds)", key=4),
)

GRAMMAR: dict[str, tuple[Rule, ...]] = {
    "config": (
        Rule.of("hostname <word>", key=1),
        Rule.of("interface <word>", mode="if", key=2),
        Rule.of("qos profile <word>", mode="qos-profile", key=3),
        Rule.of("qos map dscp <ints> to traffic-class <int:0-7>"),
        Rule.of("qos map cos <ints> to traffic-class <int:0-7>"),
        Rule.of("qos map traffic-class <ints> to tx-queue <int:0-7>"),
        Rule.of("qos rewrite dscp"),
        Rule.of("priority-flow-control all (on|off)", key=2),
        # AVD 6.4 schema (priority_flow_control.watchdog): global action drop | errdisable | notify-only.
        Rule.of("priority-flow-control pause watchdog action (drop|errdisable|notify-only)", key=4),
        Rule.of("priority-flow-control pause watchdog default timeout <num:2>", key=5),
        Rule.of("priority-flow-control pause watchdog default polling-interval <num:3>", key=5),
        Rule.of("priority-flow-control pause watchdog default recovery-time <num:2>", key=5),
        Rule.of("priority-flow-control pause watchdog override action drop", key=5),
        Rule.of("priority-flow-control pause watchdog hardware monitor priority <list>", key=5),
        Rule.of("dcbx application udp <int> priority <int:0-7>", key=4),
        Rule.of("vlan <list>", mode="vlan", key=2),
        Rule.of("spanning-tree mode <word>", key=2),
        Rule.of("ip routing"),
        Rule.of("no ip routing", name="ip routing"),
        Rule.of("policy-map type qos <word>", mode="pmap", key=4),
        Rule.of("class-map type qos match-any <word>", mode="cmap", key=5),
        Rule.of("platform <rest>"),
        Rule.of("management api http-commands", mode="api", key=3),
    ),
    "if": (
        Rule.of("description <rest>", key=1),
        Rule.of("mtu <int:68-65535>", key=1),  # the parser's range; MAX_MTU is checked after it (EosShell)
        Rule.of("l2 mtu <int:68-10178>", key=2),
        Rule.of("shutdown", name="shutdown"),
        Rule.of("no shutdown", name="shutdown"),
        Rule.of("switchport", name="switchport"),
        Rule.of("no switchport", name="switchport"),
        Rule.of("switchport mode (access|trunk)", key=2),
        Rule.of("switchport access vlan <int:1-4094>", key=3),
        Rule.of("switchport trunk allowed vlan <rest>", key=4),
        Rule.of("switchport trunk native vlan <int:1-4094>", key=4),
        Rule.of("speed <word>", key=1),
        Rule.of("ip address <word>", key=2),
        Rule.of("service-profile <word>", key=1),
        Rule.of("dcbx mode (ieee|cee)", key=2),
        Rule.of("tx-queue <int:0-7>", mode="txq", key=2),
        Rule.of("uc-tx-queue <int:0-7>", mode="txq", key=2),
        *_QOS_PORT,
        *_PFC_LINES,
    ),
    "qos-profile": (
        *_QOS_PORT,
        *_PFC_LINES,
        Rule.of("tx-queue <int:0-7>", mode="txq", key=2),
        Rule.of("uc-tx-queue <int:0-7>", mode="txq", key=2),
    ),
    "txq": _TXQ,
    "vlan": (Rule.of("name <word>", key=1), Rule.of("state (active|suspend)", key=1)),
    "pmap": (Rule.of("class <word>", mode="pmap-c", key=2),),
    "pmap-c": (Rule.of("set (dscp|traffic-class|drop-precedence|cos) <int>", key=2), Rule.of("police <rest>", key=1)),
    "cmap": (Rule.of("match <rest>"),),
    "api": (Rule.of("shutdown", name="shutdown"), Rule.of("no shutdown", name="shutdown")),
}

_IFNAMES = (
    (re.compile(r"^(?:ethernet|eth|et)(\d[\d/]*)$", re.I), "Ethernet"),
    (re.compile(r"^(?:port-channel|po)(\d+)$", re.I), "Port-Channel"),
    (re.compile(r"^(?:management|ma)(\d[\d/]*)$", re.I), "Management"),
    (re.compile(r"^(?:vlan|vl)(\d+)$", re.I), "Vlan"),
    (re.compile(r"^(?:loopback|lo)(\d+)$", re.I), "Loopback"),
)


def canonical_interface(name: str) -> str:
    """``Et1`` / ``eth1`` / ``Ethernet1`` -> ``Ethernet1`` (EOS prints full names in running-config)."""
    for pattern, prefix in _IFNAMES:
        m = pattern.match(name)
        if m:
            return prefix + m.group(1)
    return name


def short_interface(name: str) -> str:
    """``Ethernet1`` -> ``Et1`` (EOS counter tables print short names)."""
    for long, short in (("Ethernet", "Et"), ("Port-Channel", "Po"), ("Management", "Ma")):
        if name.startswith(long):
            return short + name[len(long) :]
    return name


@dataclass
class ConfigSession:
    """One EOS configuration session. ``state``: pending | pendingCommitTimer | completed | aborted."""

    name: str
    tree: Node
    state: str = "pending"
    before: Node | None = None
    timer: Cancellable | None = None
    log: list[str] = field(default_factory=list)


class EosSwitch(TreeSwitch):
    platform = Platform.ARISTA_EOS
    grammar = GRAMMAR
    indent = "   "
    block_bang = True

    def __init__(self, spec: DeviceSpec, **kwargs: float | Callable[[], float]) -> None:
        self.sessions_by_name: dict[str, ConfigSession] = {}
        super().__init__(spec, **kwargs)

    def normalize(self, tokens: list[str]) -> list[str]:
        if len(tokens) >= 2 and tokens[0] == "interface":
            return [tokens[0], canonical_interface(tokens[1]), *tokens[2:]]
        return tokens

    def base_config(self) -> Node:
        lines = [f"hostname {self.name}", "spanning-tree mode mstp", "management api http-commands", "   no shutdown"]
        for port in self.port_names:
            lines += [f"interface {port}"]
        lines += ["interface Management1", "   ip address 127.0.0.1/8"]
        return self.seed("\n".join(lines))

    def running_config(self) -> str:
        return self.render_text(self.running)

    def render_text(self, tree: Node) -> str:
        head = [
            "! Command: show running-config",
            f"! device: {self.name} (vEOS-lab, EOS-4.31.2F-fabricd-lab)",
            "!",
            "! boot system flash:/vEOS-lab.swi",
            "!",
        ]
        return "\n".join([*head, *self.render_body(tree), "end"])

    def config_changed(self) -> None:
        """Derive the counter model's watchdog from the running config: priorities marked ``no-drop`` on ports
        (directly or through a ``service-profile``) that enable ``priority-flow-control pause watchdog``."""
        timeout_s = 0.2
        recovery_s = 0.2
        action = "errdisable"
        for node in self.running.children.values():
            words = node.line.split()
            if node.line.startswith("priority-flow-control pause watchdog default timeout"):
                timeout_s = float(words[-1])
            elif node.line.startswith("priority-flow-control pause watchdog default recovery-time"):
                recovery_s = float(words[-1])
            elif node.line.startswith("priority-flow-control pause watchdog action"):
                action = words[-1]
        profiles = {n.line.split()[2]: n for n in self.running.children.values() if n.line.startswith("qos profile ")}
        ports: set[str] = set()
        prios: set[int] = set()
        for node in self.running.children.values():
            if not node.line.startswith("interface "):
                continue
            sources = [node]
            for child in node.children.values():
                if child.line.startswith("service-profile ") and child.line.split()[1] in profiles:
                    sources.append(profiles[child.line.split()[1]])
            lines = [c.line for src in sources for c in src.children.values()]
            for ln in lines:  # the per-port (profile) forms win over the global defaults
                if m := re.match(
                    r"priority-flow-control pause watchdog port timer timeout (\S+) polling-interval "
                    r"\S+ recovery-time (\S+)",
                    ln,
                ):
                    timeout_s, recovery_s = float(m.group(1)), float(m.group(2))
                elif ln.startswith("priority-flow-control pause watchdog port action "):
                    action = ln.split()[-1]
            if "priority-flow-control pause watchdog" in lines:
                found = {
                    int(ln.split()[2]) for ln in lines if re.match(r"priority-flow-control priority \d no-drop", ln)
                }
                if found:
                    ports.add(node.line.split()[1])
                    prios |= found
        settings = None
        if ports:
            settings = WatchdogSettings(
                frozenset(prios),
                detection_ms=int(timeout_s * 1000),
                restoration_ms=int(recovery_s * 1000),
                action="drop" if action in ("drop", "errdisable") else "alert",  # notify-only: log, no mitigation
                ports=frozenset(ports),
            )
        self.counters.set_watchdog(settings)

    # -- sessions ------------------------------------------------------------------------------------------------

    def forget_finished_sessions(self, keep: int = 1) -> None:
        """EOS keeps only the last completed/aborted sessions ("Maximum number of completed sessions: 1")."""
        done = [n for n, s in self.sessions_by_name.items() if s.state in ("completed", "aborted")]
        for name in done[: max(0, len(done) - keep)]:
            del self.sessions_by_name[name]

    def commit_session(self, session: ConfigSession, timer_s: int | None) -> str | None:
        """Commit ``session``; returns an error message or None."""
        if self.faults.commit_fails:
            return f"% Failed to commit configuration session {session.name}: configuration could not be applied"
        if session.state != "pending":
            return f"% Session {session.name} is not pending (state {session.state})"
        before = self.running
        self.set_running(session.tree.copy())
        if timer_s is None:
            session.state = "completed"
            return None
        session.state = "pendingCommitTimer"
        session.before = before

        def expire() -> None:
            if session.state == "pendingCommitTimer" and session.before is not None:
                self.set_running(session.before)
                session.state = "aborted"
                session.log.append("commit timer expired: configuration reverted")

        session.timer = self.schedule(timer_s, expire)
        return None

    def confirm_session(self, session: ConfigSession) -> str | None:
        if session.state != "pendingCommitTimer":
            if session.state == "pending":
                return self.commit_session(session, None)
            return f"% Session {session.name} has no pending commit timer"
        if session.timer is not None:
            session.timer.cancel()
        session.state = "completed"
        session.before = None
        return None

    def abort_session(self, session: ConfigSession) -> None:
        if session.state == "pendingCommitTimer":
            if session.timer is not None:
                session.timer.cancel()
            if session.before is not None:
                self.set_running(session.before)
        if session.state in ("pending", "pendingCommitTimer"):
            session.state = "aborted"

    # -- counters ------------------------------------------------------------------------------------------------

    def pfc_counters(self, as_json: bool) -> str:
        ports = self.counters.read()
        if as_json:
            data = {
                "interfaceCounters": {
                    name: {"rxFrames": sum(c.rx_frames for c in p.pfc), "txFrames": sum(c.tx_frames for c in p.pfc)}
                    for name, p in ports.items()
                }
            }
            return json.dumps(data, indent=2)
        rows = [
            (short_interface(n), sum(c.rx_frames for c in p.pfc), sum(c.tx_frames for c in p.pfc))
            for n, p in ports.items()
        ]
        out = [f"{'Port':<10} {'RxPfc':>12} {'TxPfc':>12}"]
        out += [f"{n:<10} {rx:>12} {tx:>12}" for n, rx, tx in rows]
        return "\n".join(out)

    def pfc_counters_detail(self, as_json: bool) -> str:
        ports = self.counters.read()
        if as_json:
            data = {
                "interfaces": {
                    name: {
                        "priorities": {
                            str(i): {"rxFrames": c.rx_frames, "txFrames": c.tx_frames} for i, c in enumerate(p.pfc)
                        }
                    }
                    for name, p in ports.items()
                }
            }
            return json.dumps(data, indent=2)
        out = [f"{'Port':<10} {'Priority':>8} {'RxPfc':>12} {'TxPfc':>12}"]
        for name, p in ports.items():
            out += [
                f"{short_interface(name):<10} {i:>8} {c.rx_frames:>12} {c.tx_frames:>12}" for i, c in enumerate(p.pfc)
            ]
        return "\n".join(out)

    def watchdog_counters(self, as_json: bool) -> str | None:
        """``| json`` only: ``interfaces.<if>.txQueues.<q>.stuckCount/recoveryCount``, ``{"interfaces": {}}`` before
        a first event (facebook/DNE-TaaC ``pfc_wd_health_check.py``). The text form has no capture: not simulated."""
        if not as_json:
            return None
        ports = self.counters.read()
        data: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
        for name, p in ports.items():
            queues = {
                str(prio): {"stuckCount": wd.detected, "recoveryCount": wd.restored}
                for prio, wd in p.watchdog.items()
                if wd.detected or wd.restored
            }
            if queues:
                data[name] = {"txQueues": queues}
        return json.dumps({"interfaces": data}, indent=2)

    def queue_counters_detail(self) -> str:
        """Format of fixtures/eos/show-interfaces-counters-queue-detail-egress-ntc.txt."""
        ports = self.counters.read()
        out = [
            "Egress Queue Counters",
            "Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       OutDropPkts"
            "     OutDropOctets",
            "                    Class",
        ]
        for name, p in ports.items():
            for tc, q in enumerate(p.queues):
                if not (q.tx_packets or q.dropped_packets):
                    continue
                out.append(
                    f"{short_interface(name):<15}{'TC' + str(tc):>11}{'DP0-3':>11}{'UC':>11}{q.tx_packets:>18}"
                    f"{q.tx_bytes:>18}{q.dropped_packets:>18}{q.dropped_bytes:>18}"
                )
        return "\n".join(out)

    def ecn_queues(self) -> dict[str, set[int]]:
        """Port -> tx-queues with ``random-detect ecn`` in the running config (its own or its service-profile's)."""
        profiles = {n.line.split()[2]: n for n in self.running.children.values() if n.line.startswith("qos profile ")}
        out: dict[str, set[int]] = {}
        for node in self.running.children.values():
            if not node.line.startswith("interface "):
                continue
            sources = [node] + [
                profiles[c.line.split()[1]]
                for c in node.children.values()
                if c.line.startswith("service-profile ") and c.line.split()[1] in profiles
            ]
            out[node.line.split()[1]] = {
                int(q.line.split()[1])
                for src in sources
                for q in src.children.values()
                if re.match(r"(?:uc-)?tx-queue \d$", q.line)
                and any(c.line.startswith("random-detect ecn minimum-threshold") for c in q.children.values())
            }
        return out

    def ecn_counters(self, as_json: bool) -> str | None:
        """``| json`` only, the real eAPI shape (ANTA's unit tests, VerifyInterfacesECNCounters):
        ``intfQueueCounters.<if>.queueCounters.<txq>`` as a string, ``"-"`` for a queue without ECN. The text form
        has no capture: not simulated."""
        if not as_json:
            return None
        ports = self.counters.read()
        configured = self.ecn_queues()
        data = {
            "intfQueueCounters": {
                name: {
                    "queueCounters": {
                        str(i): str(q.ecn_marked_packets)
                        if q.ecn_marked_packets or i in configured.get(name, set())
                        else "-"
                        for i, q in enumerate(p.queues)
                    }
                }
                for name, p in ports.items()
            }
        }
        return json.dumps(data, indent=2)

    def discards(self, as_json: bool) -> str | None:
        """``| json`` only, the real eAPI shape (ANTA's unit tests, VerifyInterfaceDiscards): per port
        ``inDiscards``/``outDiscards`` and the device totals. The text form has no capture: not simulated."""
        if not as_json:
            return None
        ports = self.counters.read()
        data = {
            "inDiscardsTotal": sum(p.rx_drops for p in ports.values()),
            "interfaces": {name: {"outDiscards": p.tx_drops, "inDiscards": p.rx_drops} for name, p in ports.items()},
            "outDiscardsTotal": sum(p.tx_drops for p in ports.values()),
        }
        return json.dumps(data, indent=2)

    def open_shell(self) -> EosShell:
        return EosShell(self)


_MODE_PROMPT: dict[str, Callable[[list[str]], str]] = {
    "if": lambda t: f"if-{short_interface(t[1])}",
    "qos-profile": lambda t: f"qos-profile-{t[2]}",
    "txq": lambda t: f"txq-{t[1]}",
    "vlan": lambda t: f"vlan-{t[1]}",
    "pmap": lambda t: f"pmap-qos-{t[3]}",
    "pmap-c": lambda t: f"pmap-c-qos-{t[1]}",
    "cmap": lambda t: f"cmap-qos-{t[4]}",
    "api": lambda t: "mgmt-api-http-cmds",
}


class EosShell(ModalShell):
    switch: EosSwitch

    def __init__(self, switch: EosSwitch) -> None:
        super().__init__(switch)
        self.session: ConfigSession | None = None
        self.privileged = True

    def greeting(self) -> str:
        return "Last login: from 127.0.0.1\n"

    def prompt(self) -> str:
        if self.editor is None:
            return f"{self.hostname}{'#' if self.privileged else '>'}"
        parts = ["config"]
        if self.session is not None:
            parts.append(f"s-{self.session.name[:6]}")
        frames = self.editor.stack[1:]
        if frames:
            frame = frames[-1]
            fmt = _MODE_PROMPT.get(frame.mode)
            parts.append(fmt(list(frame.tokens)) if fmt else frame.mode)
        return f"{self.hostname}({'-'.join(parts)})#"

    def length_message(self, length: int) -> str:
        return "Pagination disabled." if length == 0 else f"Pagination set to {length} lines."

    def width_message(self, width: int) -> str:
        return f"Width set to {width} columns."

    @staticmethod
    def invalid(tokens: list[str], bad: int) -> str:
        if bad < 0:
            return "% Incomplete command"
        if bad == 0:
            return "% Invalid input"
        return f"% Invalid input (at token {bad}: '{tokens[bad]}')"

    # -- exec mode -----------------------------------------------------------------------------------------------

    def exec_line(self, line: str) -> Reply:
        cmd, filters, as_json = split_pipes(line)
        tokens = cmd.split()
        term = self.terminal(tokens)
        if term is not None:
            return term
        word = tokens[0]
        if word in ("exit", "logout", "quit"):
            return Reply(close=True)
        if word in ("enable", "disable"):
            self.privileged = word == "enable"
            return Reply()
        if word == "show":
            return self.show(tokens, filters, as_json)
        if not self.privileged:
            return Reply(self.invalid(tokens, 0))
        return self._privileged(tokens)

    def _privileged(self, tokens: list[str]) -> Reply:
        """The privileged exec commands other than ``show``: configure, write, clear counters."""
        if tokens[0] in ("configure", "config", "conf"):
            return self.configure(tokens)
        if tokens[:2] in (["copy", "running-config"], ["write", "memory"]) or tokens == ["write"]:
            self.switch.startup = self.switch.running.copy()
            return Reply("Copy completed successfully.")
        if tokens[:2] == ["clear", "counters"]:
            self.switch.counters.clear()
            return Reply()
        return Reply(self.invalid(tokens, 0))

    def configure(self, tokens: list[str]) -> Reply:
        sw = self.switch
        if len(tokens) == 1 or tokens[1:] == ["terminal"]:
            self.editor = sw.editor(sw.running)
            self.session = None
            return Reply()
        if tokens[1] == "session" and len(tokens) >= 3:
            return self._configure_session(tokens)
        if tokens[1] == "checkpoint" and len(tokens) == 4 and tokens[2] in ("save", "restore"):
            if tokens[2] == "save":
                sw.checkpoints[tokens[3]] = sw.running.copy()
                return Reply()
            return self._restore(tokens[3], f"% Checkpoint {tokens[3]} does not exist")
        if tokens[1] == "replace" and len(tokens) >= 3 and tokens[2].startswith("checkpoint:"):
            return self._restore(tokens[2].split(":", 1)[1], f"% Error: file {tokens[2]} not found")
        return Reply(self.invalid(tokens, 1))

    def _restore(self, checkpoint: str, missing: str) -> Reply:
        """The running config replaced by a saved checkpoint (``missing`` when there is none by that name)."""
        saved = self.switch.checkpoints.get(checkpoint)
        if saved is None:
            return Reply(missing)
        self.switch.set_running(saved.copy())
        return Reply()

    def _configure_session(self, tokens: list[str]) -> Reply:
        """``configure session NAME [commit|abort]``: enter (or open) a session, or end a pending one."""
        sw = self.switch
        name = tokens[2]
        session = sw.sessions_by_name.get(name)
        if len(tokens) == 4 and tokens[3] in ("commit", "abort"):
            if session is None:
                return Reply(f"% Session {name} does not exist")
            if tokens[3] == "abort":
                sw.abort_session(session)
                return Reply()
            error = sw.confirm_session(session)
            return Reply(error or "")
        if len(tokens) != 3:
            return Reply(self.invalid(tokens, 3))
        if session is None or session.state in ("completed", "aborted"):
            session = ConfigSession(name, sw.running.copy())
            sw.forget_finished_sessions()
            sw.sessions_by_name[name] = session
        elif session.state == "pendingCommitTimer":
            return Reply(f"% Session {name} has a pending commit timer; confirm or abort it first")
        self.session = session
        self.editor = sw.editor(session.tree)
        return Reply()

    def show(self, tokens: list[str], filters: list[str], as_json: bool) -> Reply:
        sw = self.switch
        args = tokens[1:]
        text: str | None
        if args[:1] == ["session-config"]:
            return self.show_session(args[1:], filters)
        if args[:1] == ["running-config"]:
            text = sw.render_text(sw.running)
            if len(args) >= 3 and args[1] == "section":
                filters = [f"section {' '.join(args[2:])}", *filters]
            elif len(args) >= 3 and args[1] == "interfaces":
                name = canonical_interface(args[2])
                filters = [f"section ^interface {re.escape(name)}$", *filters]
        else:
            text = self._show_text(args, as_json)
        if text is None:
            return Reply(self.invalid(tokens, 1 if len(tokens) > 1 else -1))
        return Reply(self.filtered(text, filters))

    def _show_text(self, args: list[str], as_json: bool) -> str | None:
        """The text of ``show ARGS`` other than the configs; None for a command this image does not have (some
        counters exist only on some platforms, some outputs only as JSON)."""
        sw = self.switch
        command = self._show_commands().get(tuple(args))
        if command is not None:
            return command(as_json)
        if args[:2] == ["configuration", "sessions"]:
            return self.sessions_table()
        if args[:3] == ["interfaces", "counters", "queue"]:
            return sw.queue_counters_detail()
        if args[:2] == ["qos", "interfaces"] and args[-3:] == ["ecn", "counters", "queue"]:
            return sw.ecn_counters(as_json) or None
        return None

    def _show_commands(self) -> dict[tuple[str, ...], Callable[[bool], str | None]]:
        """``show`` commands by their exact words; each takes ``| json`` and returns None when absent."""
        sw = self.switch
        return {
            ("startup-config",): lambda _j: sw.render_text(sw.startup),
            ("priority-flow-control", "counters"): sw.pfc_counters,
            ("priority-flow-control", "counters", "detail"): sw.pfc_counters_detail,
            ("priority-flow-control", "counters", "watchdog"): lambda j: sw.watchdog_counters(j) or None,
            ("interfaces", "counters", "discards"): lambda j: sw.discards(j) or None,
            ("interfaces",): lambda j: eos_interfaces_json(sw.link, sw.clock()) if j else None,
            ("interfaces", "phy", "detail"): lambda j: eos_phy_detail_json(sw.link, sw.clock()) if j else None,
            ("interfaces", "transceiver"): lambda j: None if j else eos_transceiver(sw.link, sw.clock()),
            ("lldp", "neighbors", "detail"): lambda j: (
                eos_lldp_detail_json(sw.spec.neighbors, sw.port_names) if j else None
            ),
            ("version",): lambda j: (
                json.dumps({"modelName": "vEOS-lab", "version": "4.31.2F"})
                if j
                else ("Arista vEOS-lab\nSoftware image version: 4.31.2F (fabricd lab simulator)")
            ),
            ("hostname",): lambda _j: f"Hostname: {sw.name}\nFQDN:     {sw.name}",
        }

    def show_session(self, args: list[str], filters: list[str]) -> Reply:
        sw = self.switch
        session = self.session
        if args[:1] == ["named"] and len(args) >= 2:
            session = sw.sessions_by_name.get(args[1])
            args = args[2:]
            if session is None:
                return Reply("% Session does not exist")
        if session is None:
            return Reply("% Not in a configuration session")
        if args == ["diffs"]:
            before = sw.render_text(sw.running).splitlines()
            after = sw.render_text(session.tree).splitlines()
            diff = difflib.unified_diff(
                before, after, "system:/running-config", f"session:/{session.name}-session-config", lineterm=""
            )
            return Reply(self.filtered("\n".join(diff), filters))
        if not args:
            return Reply(self.filtered(sw.render_text(session.tree), filters))
        return Reply(self.invalid(["show", "session-config", *args], 2))

    def sessions_table(self) -> str:
        out = [
            "Maximum number of completed sessions: 1",
            "Maximum number of pending sessions: 5",
            "",
            f"  {'Name':<16} {'State':<26} {'User':<10} Terminal",
            f"  {'-' * 16} {'-' * 26} {'-' * 10} --------",
        ]
        for s in self.switch.sessions_by_name.values():
            mark = "*" if s is self.session else " "
            out.append(f"{mark} {s.name:<16} {s.state:<26} {'':<10}")
        return "\n".join(out)

    # -- config mode ---------------------------------------------------------------------------------------------

    def config_line(self, line: str) -> Reply:
        assert self.editor is not None
        cmd, filters, as_json = split_pipes(line)
        tokens = cmd.split()
        word = tokens[0]
        if word == "end":
            self.editor = None
            return Reply()
        if word == "exit":
            if not self.editor.exit():
                self.editor = None
            return Reply()
        if word == "do":
            return self.exec_line(line[2:].strip())
        if word == "show":
            return self.show(tokens, filters, as_json)
        if self.session is not None:
            reply = self._session_command(tokens)
            if reply is not None:
                return reply
        return self._edit(cmd, tokens)

    def _session_command(self, tokens: list[str]) -> Reply | None:
        """``abort``, ``commit`` and ``commit timer HH:MM:SS`` inside a configuration session; None for others."""
        sw = self.switch
        assert self.session is not None
        if tokens == ["abort"]:
            sw.abort_session(self.session)
            self.editor, self.session = None, None
            return Reply()
        if tokens != ["commit"] and tokens[:2] != ["commit", "timer"]:
            return None
        timer_s: int | None = None
        if len(tokens) == 3:
            hms = tokens[2].split(":")
            if len(hms) != 3 or not all(p.isdigit() for p in hms):
                return Reply(self.invalid(tokens, 2))
            timer_s = int(hms[0]) * 3600 + int(hms[1]) * 60 + int(hms[2])
        elif len(tokens) != 1:
            return Reply(self.invalid(tokens, 1) if len(tokens) == 2 else self.invalid(tokens, 3))
        failure = sw.commit_session(self.session, timer_s)
        if failure:
            return Reply(failure)
        self.editor, self.session = None, None
        return Reply()

    def _edit(self, cmd: str, tokens: list[str]) -> Reply:
        """A configuration line applied to the editor's tree (the running config outside a session)."""
        assert self.editor is not None
        sw = self.switch
        if sw.faults.rejects(cmd):
            return Reply(self.invalid(tokens, 0))
        refusal = self._over_max_mtu(tokens)
        if refusal is not None:
            return Reply(refusal)
        error = self.editor.apply(cmd)
        if error is not None:
            return Reply(self.invalid(tokens, error.bad_token))
        if self.session is None:
            sw.config_changed()
        return Reply()

    def _over_max_mtu(self, tokens: list[str]) -> str | None:
        """EOS's refusal of an interface ``mtu`` the parser takes but the platform cannot (module docstring)."""
        assert self.editor is not None
        frame = next((f for f in reversed(self.editor.stack) if f.mode == "if"), None)
        if frame is None or len(tokens) != 2 or tokens[0] != "mtu" or not tokens[1].isdigit():
            return None
        if not MAX_MTU < int(tokens[1]) <= 65535:
            return None  # taken, or the parser's own `% Invalid input`
        return f"% Max MTU for {frame.tokens[1]} is {MAX_MTU}"

    def closed(self) -> None:
        """A dropped SSH session leaves its configuration session pending, as on EOS (nothing is applied)."""
        self.editor = None
