"""Simulated Cisco NX-OS (Nexus 9000 style): live config mode, checkpoints, rollback and rollback patches.

Behaviour follows Cisco's NX-OS Configuration Guides ("Configuration Rollback": ``checkpoint``, ``rollback
running-config checkpoint``, ``show diff rollback-patch``; QoS: class-maps and the three policy-map types,
Cisco Nexus 9000 QoS Configuration Guide) and the captured configs (fixtures/nxos/running-config-*.txt):

- login lands in ``host#``; ``terminal length 0`` and ``terminal width 511`` are silent (netmiko waits for the
  echo);
- config lines take effect at once (no candidate); a bad line answers ``% Invalid command at '^' marker.`` with the
  caret under the offending token, an unfinished one ``% Incomplete command at '^' marker.``;
- ``checkpoint NAME`` saves the running config, ``rollback running-config checkpoint NAME`` restores it and
  ``show diff rollback-patch checkpoint A running-config`` prints the patch between two configs.

``show interface priority-flow-control`` follows the capture
(fixtures/nxos/show-interface-priority-flow-control-n5k-mierdin-blog.txt); its ``| json`` form has no capture and no
schema found (``TABLE_entity``/``ROW_entity``, unverified). ``show queuing interface`` prints the Nexus 9000 shapes:
JSON nested as Cisco's NX-API schema gives it (``TABLE_module -> ROW_module -> TABLE_queuing_interface ->
ROW_queuing_interface -> TABLE_qosgrp_egress_stats -> ...``), text as the real capture
(tests/golden/readers/switch/cisco_nxos/show-queuing-interface-*-n9k-zartbot.txt). ``show queuing pfc-queue
detail`` prints the schema's JSON keys and the text of the only public example (a third-party test fixture).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

from fabricd.model import Platform

from .cabling import nxos_lldp_detail, nxos_transceiver_details
from .counters import WatchdogSettings
from .device import DeviceSpec, Reply
from .grammar import Rule
from .textconfig import Node
from .treecli import ModalShell, TreeSwitch, split_pipes

_BYTES = "(bytes|kbytes|mbytes)"
GRAMMAR: dict[str, tuple[Rule, ...]] = {
    "config": (
        Rule.of("hostname <word>", key=1),
        Rule.of("feature <word>"),
        Rule.of("interface <word>", mode="if", key=2),
        Rule.of("class-map type qos (match-any|match-all) <word>", mode="cmap-qos", name=None, key=None),
        Rule.of("policy-map type qos <word>", mode="pmap-qos", key=4),
        Rule.of("policy-map type queuing <word>", mode="pmap-que", key=4),
        Rule.of("policy-map type network-qos <word>", mode="pmap-nqos", key=4),
        Rule.of("system qos", mode="sys-qos", key=2),
        Rule.of("priority-flow-control watch-dog-interval (on|off)", key=2),
        # watch-dog interval: NDFC's pfc_watch_int (101-1000 ms, default 100); fixed-restore: NX-API REST SDK 9.3(x).
        # shutdown-multiplier / auto-restore: no Cisco source of the CLI form was found (unverified), kept so that
        # configs written by other tools still load.
        Rule.of("priority-flow-control watch-dog interval <int:100-1000>", key=3),
        Rule.of("priority-flow-control fixed-restore multiplier <int:0-100>", key=3),
        Rule.of("priority-flow-control watch-dog shutdown-multiplier <int:1-10>", key=3),
        Rule.of("priority-flow-control auto-restore multiplier <int:0-100>", key=3),
        Rule.of("vlan <list>", mode="vlan", key=2),
        Rule.of("hardware qos <rest>"),
        Rule.of("spanning-tree <rest>"),
    ),
    "if": (
        Rule.of("description <rest>", key=1),
        Rule.of("mtu <int:576-9216>", key=1),
        Rule.of("switchport", name="switchport"),
        Rule.of("no switchport", name="switchport"),
        Rule.of("switchport mode (access|trunk)", key=2),
        Rule.of("switchport access vlan <int:1-4094>", key=3),
        Rule.of("switchport trunk allowed vlan <rest>", key=4),
        Rule.of("switchport trunk native vlan <int:1-4094>", key=4),
        Rule.of("priority-flow-control mode (on|off|auto) [send-tlv]", key=2),
        Rule.of("priority-flow-control watch-dog-interval (on|off)", key=2),
        # DME ipqosPriorFlowCtrlWd interfaceMutiplier 0-40 and disableAction (syslog only); the CLI spelling is
        # the label `show queuing pfc-queue detail` prints (unverified)
        Rule.of("priority-flow-control watch-dog interface-multiplier <int:0-40>", key=3),
        Rule.of("priority-flow-control watch-dog disable-action", key=3),
        Rule.of("service-policy type qos input <word>", key=4),
        Rule.of("service-policy type queuing (input|output) <word>", key=4),
        Rule.of("shutdown", name="shutdown"),
        Rule.of("no shutdown", name="shutdown"),
        Rule.of("spanning-tree port type edge [trunk]", key=3),
        Rule.of("no logging event port link-status"),
        Rule.of("speed <word>", key=1),
        Rule.of("ip address <word>", key=2),
        Rule.of("channel-group <rest>", key=1),
    ),
    "cmap-qos": (
        Rule.of("match dscp <list>"),
        Rule.of("match cos <list>"),
        Rule.of("match precedence <list>"),
    ),
    "pmap-qos": (Rule.of("class <word>", mode="pmap-c-qos", key=2),),
    "pmap-c-qos": (
        Rule.of("set qos-group <int:0-7>", key=2),
        Rule.of("set dscp <int:0-63>", key=2),
        Rule.of("set cos <int:0-7>", key=2),
    ),
    "pmap-que": (Rule.of("class type queuing <word>", mode="pmap-c-que", key=4),),
    "pmap-c-que": (
        Rule.of("bandwidth remaining percent <int:0-100>", name="bandwidth"),
        Rule.of("bandwidth percent <int:0-100>", name="bandwidth"),
        Rule.of("priority level <int:1-8>", name="priority"),
        Rule.of("priority", name="priority"),
        Rule.of(
            f"random-detect minimum-threshold <int> {_BYTES} maximum-threshold <int> {_BYTES}"
            " drop-probability <int:0-100> weight <int:0-15> [ecn]",
            name="random-detect",
        ),
        Rule.of("random-detect threshold burst-optimized ecn", name="random-detect"),
        Rule.of("shape min <rest>", key=1),
    ),
    "pmap-nqos": (Rule.of("class type network-qos <word>", mode="pmap-c-nqos", key=4),),
    "pmap-c-nqos": (
        Rule.of("mtu <int:1500-9216>", key=1),
        Rule.of("pause pfc-cos <list>", key=2),
        Rule.of("pause buffer-size <int> pause-threshold <int> resume-threshold <int>", key=2),
    ),
    "sys-qos": (
        Rule.of("service-policy type network-qos <word>", key=3),
        Rule.of("service-policy type queuing (input|output) <word>", key=4),
        Rule.of("service-policy type qos input <word>", key=4),
    ),
    "vlan": (Rule.of("name <word>", key=1), Rule.of("state (active|suspend)", key=1)),
}

_PROMPTS = {
    "if": "config-if",
    "cmap-qos": "config-cmap-qos",
    "pmap-qos": "config-pmap-qos",
    "pmap-c-qos": "config-pmap-c-qos",
    "pmap-que": "config-pmap-que",
    "pmap-c-que": "config-pmap-c-que",
    "pmap-nqos": "config-pmap-nqos",
    "pmap-c-nqos": "config-pmap-nqos-c",
    "sys-qos": "config-sys-qos",
    "vlan": "config-vlan",
}

_IFNAME = re.compile(r"^(?:ethernet|eth|e)(\d+/\d+(?:/\d+)?)$", re.I)


def canonical_interface(name: str) -> str:
    """``eth1/1`` / ``e1/1`` / ``Ethernet1/1`` -> ``Ethernet1/1`` (NX-OS prints full names in running-config)."""
    m = _IFNAME.match(name)
    return f"Ethernet{m.group(1)}" if m else name


def _stamp() -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime())


def patch_commands(src: Node, dst: Node, depth: int = 0) -> list[str]:
    """NX-OS style rollback patch: the commands that turn ``src`` into ``dst`` (``no X`` for removals)."""
    out: list[str] = []
    pad = "  " * depth
    for key, node in src.children.items():
        if key not in dst.children:
            out.append(f"{pad}no {node.line}")
    for key, node in dst.children.items():
        old = src.children.get(key)
        if old is None:
            out.append(pad + node.line)
            out.extend(_all_lines(node, depth + 1))
        elif old.line != node.line:
            out.append(pad + node.line)
            if node.children or old.children:
                out.extend(patch_commands(old, node, depth + 1))
        elif node.children or old.children:
            inner = patch_commands(old, node, depth + 1)
            if inner:
                out.append(pad + node.line)
                out.extend(inner)
    return out


def _all_lines(node: Node, depth: int) -> list[str]:
    out: list[str] = []
    for child in node.children.values():
        out.append("  " * depth + child.line)
        out.extend(_all_lines(child, depth + 1))
    return out


class NxosSwitch(TreeSwitch):
    platform = Platform.CISCO_NXOS
    grammar = GRAMMAR
    indent = "  "
    block_bang = False

    def __init__(self, spec: DeviceSpec, **kwargs: float | Callable[[], float]) -> None:
        self.last_change = _stamp()
        self.checkpoint_times: dict[str, str] = {}
        super().__init__(spec, **kwargs)

    def normalize(self, tokens: list[str]) -> list[str]:
        if len(tokens) >= 2 and tokens[0] == "interface":
            return [tokens[0], canonical_interface(tokens[1]), *tokens[2:]]
        return tokens

    def base_config(self) -> Node:
        lines = [f"hostname {self.name}", "feature lldp", "feature lacp"]
        for port in self.port_names:
            lines.append(f"interface {canonical_interface(port)}")
        lines += ["interface mgmt0", "   ip address 127.0.0.1/8"]
        return self.seed("\n".join(lines))

    def running_config(self) -> str:
        return self.render_text(self.running, "show running-config")

    def render_text(self, tree: Node, command: str) -> str:
        head = [
            f"!Command: {command}",
            f"!Running configuration last done at: {self.last_change}",
            f"!Time: {_stamp()}",
            "",
            "version 10.3(4a) Bios:version  ",
        ]
        return "\n".join([*head, *self.render_body(tree)]).rstrip() + "\n"

    def global_watchdog(self) -> dict[str, int | bool]:
        """The global watchdog lines: on/off, the poll interval (ms, default 100) and the restore multipliers
        (0 = not set)."""
        top = [n.line for n in self.running.children.values()]
        out: dict[str, int | bool] = {
            "on": "priority-flow-control watch-dog-interval on" in top,
            "interval": 100,
            "fixed_restore": 0,
            "auto_restore": 0,
            "shutdown": 0,
        }
        for line in top:
            for prefix, key in (
                ("priority-flow-control watch-dog interval ", "interval"),
                ("priority-flow-control fixed-restore multiplier ", "fixed_restore"),
                ("priority-flow-control auto-restore multiplier ", "auto_restore"),
                ("priority-flow-control watch-dog shutdown-multiplier ", "shutdown"),
            ):
                if line.startswith(prefix):
                    out[key] = int(line.split()[-1])
        return out

    def _interface_lines(self, port: str) -> set[str]:
        node = self.running.children.get(f"interface {port}")
        return {c.line for c in node.children.values()} if node is not None else set()

    def interface_multiplier(self, port: str) -> int:
        for line in self._interface_lines(port):
            if line.startswith("priority-flow-control watch-dog interface-multiplier "):
                return int(line.split()[-1])
        return 0

    def config_changed(self) -> None:
        """Watchdog from the running config: interfaces with ``priority-flow-control mode on`` and the watchdog
        interval on, watching the ``pause pfc-cos`` classes. fabricd's reading of Cisco's workflow (QoS guide
        10.5(x), "Workflow of Priority Flow Control Watchdog"): the watchdog polls every ``watch-dog interval`` ms,
        shuts a stuck queue after ``interface-multiplier`` polls (or the global shutdown multiplier, default 1) and
        restores it after ``fixed-restore multiplier`` polls (or ``auto-restore``, default 10); with
        ``disable-action`` it only logs (syslog) and keeps the queue."""
        self.last_change = _stamp()
        glb = self.global_watchdog()
        poll = int(glb["interval"])
        prios: set[int] = set()
        for node in self.running.children.values():
            if node.line.startswith("policy-map type network-qos "):
                for cls in node.children.values():
                    for child in cls.children.values():
                        if child.line.startswith("pause pfc-cos "):
                            prios |= {int(x) for x in re.split(r"[,\s]+", child.line.split(None, 2)[2]) if x.isdigit()}
        ports: set[str] = set()
        multipliers: list[int] = []
        alert = False
        for node in self.running.children.values():
            if not node.line.startswith("interface "):
                continue
            name = node.line.split()[1]
            lines = self._interface_lines(name)
            pfc_on = any(ln.startswith("priority-flow-control mode on") for ln in lines)
            wd_on = "priority-flow-control watch-dog-interval on" in lines or (
                bool(glb["on"]) and "priority-flow-control watch-dog-interval off" not in lines
            )
            if pfc_on and wd_on:
                ports.add(name)
                multipliers.append(self.interface_multiplier(name))
                alert = alert or "priority-flow-control watch-dog disable-action" in lines
        shutdown = next((m for m in multipliers if m > 0), int(glb["shutdown"]) or 1)
        restore = int(glb["fixed_restore"]) or int(glb["auto_restore"]) or 10
        settings = None
        if ports and prios:
            settings = WatchdogSettings(
                frozenset(prios),
                detection_ms=poll * shutdown,
                restoration_ms=poll * restore,
                action="alert" if alert else "drop",
                ports=frozenset(ports),
            )
        self.counters.set_watchdog(settings)

    # -- counters ------------------------------------------------------------------------------------------------

    def pfc_mode(self, port: str) -> tuple[str, str]:
        node = self.running.children.get(f"interface {port}")
        mode = "Auto"
        if node is not None:
            for child in node.children.values():
                if child.line.startswith("priority-flow-control mode "):
                    mode = child.line.split()[2].capitalize()
        prios = self.counters.watchdog.priorities if self.counters.watchdog else frozenset()
        bmap = sum(1 << p for p in prios)
        oper = f"On ({bmap:x})" if mode == "On" and bmap else "Off"
        return mode, oper

    def pfc_table(self, as_json: bool) -> str:
        ports = self.counters.read()
        rows = []
        for name, p in ports.items():
            mode, oper = self.pfc_mode(name)
            rows.append((name, mode, oper, sum(c.rx_frames for c in p.pfc), sum(c.tx_frames for c in p.pfc)))
        if as_json:
            return json.dumps(
                {
                    "TABLE_entity": {
                        "ROW_entity": [
                            {"if_name_str": n, "mode": m, "oper": o, "rx_ppp": str(rx), "tx_ppp": str(tx)}
                            for n, m, o, rx, tx in rows
                        ]
                    }
                },
                indent=2,
            )
        bar = "=" * 60
        out = [bar, "Port               Mode Oper(VL bmap)  RxPPP      TxPPP     ", bar, ""]
        out += [f"{n:<19}{m:<5}{o:<14}{rx:<11}{tx:<11}" for n, m, o, rx, tx in rows]
        return "\n".join(out)

    def queuing(self, port: str | None, as_json: bool) -> str:
        """``show queuing interface [IF]`` in the Nexus 9000 shapes: JSON after Cisco's NX-API schema
        (``TABLE_module -> ROW_module -> TABLE_queuing_interface``, ``TABLE_qosgrp_egress_stats``,
        ``TABLE_pfc_stats``), text after the real capture (``QOS GROUP n`` boxes, ``PFC Statistics``)."""
        ports = self.counters.read()
        names = [port] if port else list(ports)
        rows: list[dict[str, object]] = []
        out: list[str] = []
        bar = "+-------------------------------------------------------------+"
        for name in names:
            p = ports[name]
            groups = []
            out += [f"Egress Queuing for {name} [System]", ""]
            for group, q in enumerate(p.queues):
                stats = [
                    ("Tx", "Pkts", q.tx_packets),
                    ("Tx", "Byts", q.tx_bytes),
                    ("WRED/AFD & Tail Drop", "Pkts", q.dropped_packets),
                    ("WRED/AFD & Tail Drop", "Byts", q.dropped_bytes),
                    ("ECN", "Pkts", q.ecn_marked_packets),
                    ("ECN", "Byts", q.ecn_marked_bytes),
                ]
                groups.append(
                    {
                        "eq-qosgrp": str(group),
                        "TABLE_qosgrp_egress_stats_entry": {
                            "ROW_qosgrp_egress_stats_entry": [
                                {
                                    "eq-stat-type": t,
                                    "eq-stat-units": u,
                                    "eq-uc-stat-value": str(v),
                                    "eq-mc-stat-value": "0",
                                }
                                for t, u, v in stats
                            ]
                        },
                    }
                )
                out += [
                    bar,
                    f"|{f'QOS GROUP {group}':^61}|",
                    bar,
                    "|                           |  Unicast       |Multicast       |",
                    bar,
                ]
                out += [f"|{f'{t} {u}':>26} |{v:>16}|{0:>16}|" for t, u, v in stats]
            out += [
                bar,
                "",
                f"Ingress Queuing for {name}",
                "",
                "PFC Statistics",
                "-" * 78,
                f"TxPPP: {sum(c.tx_frames for c in p.pfc):>20},   RxPPP: {sum(c.rx_frames for c in p.pfc):>20}",
                "-" * 78,
                "PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount",
            ]
            pfc_rows = []
            for cos, c in enumerate(p.pfc):
                rx_state = (
                    "Active"
                    if c.rx_frames and p.watchdog.get(cos) is not None and p.watchdog[cos].stormed
                    else "Inactive"
                )
                out.append(f"{cos:>7}{cos:>10}  {'Inactive':<8}{c.tx_frames:>20}  {rx_state:<8}{c.rx_frames:>20}")
                pfc_rows.append(
                    {
                        "cos": str(cos),
                        "pfc-qosgrp": str(cos),
                        "tx-pause-state": "Inactive",
                        "tx-pause-count": str(c.tx_frames),
                        "rx-pause-state": rx_state,
                        "rx-pause-count": str(c.rx_frames),
                    }
                )
            out += ["-" * 78, ""]
            rows.append(
                {"dir": "Egress", "if_name_str": name, "TABLE_qosgrp_egress_stats": {"ROW_qosgrp_egress_stats": groups}}
            )
            rows.append(
                {
                    "dir": "Ingress",
                    "if_name_str": name,
                    "tx-ppp": str(sum(c.tx_frames for c in p.pfc)),
                    "rx-ppp": str(sum(c.rx_frames for c in p.pfc)),
                    "TABLE_pfc_stats": {"ROW_pfc_stats": pfc_rows},
                }
            )
        if as_json:
            one: object = rows[0] if len(rows) == 1 else rows
            return json.dumps(
                {"TABLE_module": {"ROW_module": {"TABLE_queuing_interface": {"ROW_queuing_interface": one}}}}, indent=2
            )
        return "\n".join(out)

    def pfc_queue(self, as_json: bool, port: str | None = None) -> str:
        """``show queuing pfc-queue [interface IF] detail``: JSON after Cisco's NX-API schema
        (``TABLE_queuing_interface -> TABLE_qosgrp_stats -> TABLE_qosgrp_stats_entry``), text after the only public
        example of the detail form (a third-party test fixture: unverified against a device). The state of a queue
        out of a storm is printed ``Monitored`` (Cisco's QoS guide's word for it; no capture shows the token)."""
        ports = self.counters.read()
        wd_cfg = self.counters.watchdog
        rows: list[dict[str, object]] = []
        out: list[str] = []
        bar = "+----------------------------------------------------+"
        for name, p in ports.items():
            if port is not None and name != port:
                continue
            watched = wd_cfg is not None and wd_cfg.ports is not None and name in wd_cfg.ports
            if not p.watchdog and not watched:
                continue
            disable = "Yes" if wd_cfg is not None and wd_cfg.action == "alert" else "No"
            out += [
                f"{name} Interface PFC watchdog: [{'Enabled' if watched else 'Disabled'}]",
                f"Disable-action                     : {disable}",
                f"PFC watch-dog interface-multiplier : {self.interface_multiplier(name)}",
            ]
            groups = []
            for prio, wd in p.watchdog.items():
                state = "Shutdown" if wd.stormed else "Monitored"
                stats = [
                    ("Shutdown", wd.detected),
                    ("Restored", wd.restored),
                    ("Total pkts drained", 0),
                    ("Total pkts dropped", wd.tx_drop),
                    ("Total pkts drained + dropped", wd.tx_drop),
                    ("Aggregate pkts dropped", wd.tx_drop),
                    ("Total Ingress pkts dropped", wd.rx_drop),
                    ("Aggregate Ingress pkts dropped", wd.rx_drop),
                ]
                out += [
                    bar,
                    f"| QOS GROUP {prio} [{state}] PFC [YES] PFC-COS [{prio}]",
                    bar,
                    "|                               |  Stats             |",
                    bar,
                ]
                out += [f"|{label:>31}|{value:>20}|" for label, value in stats]
                out.append(bar)
                groups.append(
                    {
                        "eq-qosgrp": str(prio),
                        "eq-qosgrp-state": state,
                        "pfc-configured": "YES",
                        "pfc-cos": str(prio),
                        "TABLE_qosgrp_stats_entry": {
                            "ROW_qosgrp_stats_entry": {
                                "q-stat-type": "Stats",
                                "q-shutdown": str(wd.detected),
                                "q-restored": str(wd.restored),
                                "q-pkt-drained": "0",
                                "q-pkt-dropped": str(wd.tx_drop),
                                "q-pkt-drained-n-dropped": str(wd.tx_drop),
                                "q-aggr-pkt-dropped": str(wd.tx_drop),
                                "q-ing-pkt-dropped": str(wd.rx_drop),
                                "q-ing-aggr-pkt-dropped": str(wd.rx_drop),
                            }
                        },
                    }
                )
            rows.append(
                {
                    "if_name_str": name,
                    "wd-status": "Enabled" if watched else "Disabled",
                    "disable-action": disable,
                    "intf-multi": str(self.interface_multiplier(name)),
                    "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": groups[0] if len(groups) == 1 else groups},
                }
            )
        if as_json:
            glb = self.global_watchdog()
            doc: dict[str, object] = {
                "glb-wd-status": "Enabled" if glb["on"] else "Disabled",
                "glb-wd-timer": str(glb["interval"]),
                "glb-fixed-restore": str(glb["fixed_restore"]),
            }
            if rows:  # the schema's TABLE_queuing_interface is optional: absent when no port has a watchdog
                doc["TABLE_queuing_interface"] = {"ROW_queuing_interface": rows[0] if len(rows) == 1 else rows}
            return json.dumps(doc, indent=2)
        return "\n".join(out)

    def open_shell(self) -> NxosShell:
        return NxosShell(self)


class NxosShell(ModalShell):
    switch: NxosSwitch

    def prompt(self) -> str:
        if self.editor is None:
            return f"{self.hostname}# "
        frames = self.editor.stack[1:]
        mode = _PROMPTS.get(frames[-1].mode, "config") if frames else "config"
        return f"{self.hostname}({mode})# "

    def caret(self, line: str, tokens: list[str], bad: int) -> str:
        """NX-OS marks the bad token with ``^`` under the echoed line (prompt included)."""
        if bad < 0:
            col = len(self.prompt()) + len(line.rstrip())
            return " " * col + "^\n% Incomplete command at '^' marker."
        offset = 0
        rest = line
        for i, tok in enumerate(tokens):
            idx = rest.find(tok)
            if i == bad:
                offset += idx
                break
            offset += idx + len(tok)
            rest = rest[idx + len(tok) :]
        return " " * (len(self.prompt()) + offset) + "^\n% Invalid command at '^' marker."

    def exec_line(self, line: str) -> Reply:
        sw = self.switch
        cmd, filters, as_json = split_pipes(line)
        tokens = cmd.split()
        term = self.terminal(tokens)
        if term is not None:
            return term
        word = tokens[0]
        if word in ("exit", "logout", "quit"):
            return Reply(close=True)
        if tokens[:2] in (["configure", "terminal"], ["conf", "t"], ["config", "t"]) or tokens == ["configure"]:
            self.editor = sw.editor(sw.running)
            return Reply("Enter configuration commands, one per line. End with CNTL/Z.")
        if word == "show":
            return self.show(line, tokens, filters, as_json)
        if tokens[:2] == ["copy", "running-config"] and tokens[2:] in (["startup-config"], []):
            return self._copy_running()
        if tokens[:2] == ["clear", "counters"]:
            sw.counters.clear()
            return Reply()
        reply = self._checkpoint_command(tokens)
        return reply if reply is not None else Reply(self.caret(line, tokens, 0))

    def _copy_running(self) -> Reply:
        sw = self.switch
        if sw.faults.commit_fails:
            return Reply("% Copy failed: the startup configuration could not be written")
        sw.startup = sw.running.copy()
        return Reply("[########################################] 100%\nCopy complete.")

    def _checkpoint_command(self, tokens: list[str]) -> Reply | None:
        """``checkpoint NAME``, ``no checkpoint NAME``, ``clear checkpoint database``, ``rollback running-config
        checkpoint NAME``; None for any other line."""
        sw = self.switch
        if tokens[0] == "checkpoint" and len(tokens) >= 2:
            name = tokens[1]
            if name in sw.checkpoints:
                return Reply(f"ERROR: Checkpoint name {name} is already in use")
            sw.checkpoints[name] = sw.running.copy()
            sw.checkpoint_times[name] = _stamp()
            return Reply("...........Done")
        if tokens[:2] == ["no", "checkpoint"] and len(tokens) == 3:
            if sw.checkpoints.pop(tokens[2], None) is None:
                return Reply(f"ERROR: Checkpoint {tokens[2]} does not exist")
            return Reply()
        if tokens[:3] == ["clear", "checkpoint", "database"]:
            sw.checkpoints.clear()
            return Reply()
        if tokens[:3] == ["rollback", "running-config", "checkpoint"] and len(tokens) >= 4:
            return self._rollback(tokens[3])
        return None

    def _rollback(self, name: str) -> Reply:
        sw = self.switch
        saved = sw.checkpoints.get(name)
        if saved is None:
            return Reply(f"ERROR: Checkpoint {name} does not exist")
        sw.set_running(saved.copy())
        return Reply(
            "Note: Applying config parallelly may fail Rollback verification\n"
            "Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n"
            "Generating Running-config for verification\nGenerating Patch for verification\n"
            "Verification is Successful.\n\nRollback completed successfully."
        )

    def show(self, line: str, tokens: list[str], filters: list[str], as_json: bool) -> Reply:
        sw = self.switch
        args = tokens[1:]
        text: str
        if args[:1] == ["running-config"]:
            text = sw.running_config()
            if len(args) >= 2 and args[1] == "section":
                filters = [f"section {' '.join(args[2:])}", *filters]
        elif args == ["startup-config"]:
            text = sw.render_text(sw.startup, "show startup-config")
        elif args[:2] == ["checkpoint", "summary"]:
            text = (
                "\n".join(
                    f"{i}) {name}:\nCreated by admin\nCreated at {sw.checkpoint_times.get(name, '')}\n"
                    f"Size is {len(sw.render_body(tree))} lines"
                    for i, (name, tree) in enumerate(sw.checkpoints.items(), 1)
                )
                or "No checkpoints"
            )
        elif args[:2] == ["diff", "rollback-patch"]:
            return self.rollback_patch(line, tokens)
        elif args == ["interface", "priority-flow-control"]:
            text = sw.pfc_table(as_json)
        elif args[:2] == ["queuing", "pfc-queue"]:
            rest = [a for a in args[2:] if a != "detail"]
            wd_port = canonical_interface(rest[1]) if rest[:1] == ["interface"] and len(rest) == 2 else None
            if rest and wd_port is None:
                return Reply(self.caret(line, tokens, len(tokens) - 1))
            text = sw.pfc_queue(as_json, wd_port)
        elif args[:2] == ["queuing", "interface"] and len(args) == 3:
            name = canonical_interface(args[2])
            if name not in sw.counters.ports:
                return Reply(f"ERROR: Invalid interface {args[2]}")
            text = sw.queuing(name, as_json)
        elif args in (["queuing"], ["queuing", "interface"]):
            text = sw.queuing(None, as_json)
        elif args == ["lldp", "neighbors", "detail"]:
            text = nxos_lldp_detail(sw.spec.neighbors)
        elif args == ["interface", "transceiver", "details"] and not as_json:
            text = nxos_transceiver_details(sw.link, sw.clock())
        elif args == ["version"]:
            text = "Cisco Nexus Operating System (NX-OS) Software\n  NXOS: version 10.3(4a) (fabricd lab simulator)"
        else:
            bad = 1 if len(tokens) > 1 else -1
            return Reply(self.caret(line, tokens, bad))
        return Reply(self.filtered(text, filters))

    def _named(self, words: list[str]) -> tuple[Node | None, list[str], str]:
        sw = self.switch
        if words[:1] == ["running-config"]:
            return sw.running, words[1:], ""
        if words[:1] == ["startup-config"]:
            return sw.startup, words[1:], ""
        if words[:1] == ["checkpoint"] and len(words) >= 2:
            tree = sw.checkpoints.get(words[1])
            return tree, words[2:], "" if tree is not None else f"ERROR: Checkpoint {words[1]} does not exist"
        return None, words, "bad"

    def rollback_patch(self, line: str, tokens: list[str]) -> Reply:
        src, rest, err = self._named(tokens[3:])
        if err:
            return Reply(err if err != "bad" else self.caret(line, tokens, 3 if len(tokens) > 3 else -1))
        dst, rest, err = self._named(rest)
        if err or rest or src is None or dst is None:
            return Reply(err if err and err != "bad" else self.caret(line, tokens, len(tokens) - len(rest) - 1))
        body = patch_commands(src, dst)
        return Reply(
            "\n".join(
                ["Collecting Running-Config", "#Generating Rollback Patch", "Rollback Patch is Empty"]
                if not body
                else ["Collecting Running-Config", "#Generating Rollback Patch", "!!", *body]
            )
        )

    def config_line(self, line: str) -> Reply:
        assert self.editor is not None
        sw = self.switch
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
        if word == "show":
            return self.show(line, tokens, filters, as_json)
        if sw.faults.rejects(cmd):
            return Reply(self.caret(line, tokens, 0))
        error = self.editor.apply(cmd)
        if error is not None:
            return Reply(self.caret(line, tokens, error.bad_token))
        sw.config_changed()
        return Reply()
