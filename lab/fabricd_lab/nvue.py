"""Simulated NVIDIA Cumulus Linux with NVUE: ``nv set``/``nv unset`` into a pending revision, ``nv config diff``,
``nv config apply [-y] [--confirm TIME]``, ``--confirm-yes|--confirm-no|--confirm-status``, ``nv config history``,
``nv config apply REV`` (revert to a revision), ``nv config detach``, ``nv config show -o commands|json|yaml``.

Behaviour follows NVIDIA's NVUE command reference (Config Commands: apply waits for ``[y/N]`` unless ``-y``;
``--confirm`` rolls back by itself unless confirmed, 10 minutes by default, time in s/m/h, a bare number meaning
minutes; Cumulus Linux 5.x NVUE guide). Paths are validated against the ``nv set`` schema of
:mod:`fabricd.nos.cumulus_nvue.patterns`. NVUE's exact error wording has no capture here; errors start with
``Error:`` and name the offending token and the valid choices, as NVUE's ``?`` help lists them.

Counters: ``nv show interface IF counters qos``, ``nv show interface IF qos roce counters`` and ``nv show interface
IF qos pfc-watchdog`` follow the captures (fixtures/cumulus/nv-show-interface-counters-qos-cl514-docs.txt,
...-qos-roce-counters-cl514-docs.txt, the CL 5.11 guide's pfc-watchdog output in tests/golden/readers/switch/
cumulus_nvue/). The ``-o json`` forms of ``counters qos`` and ``qos roce counters`` have no public capture and use the
text's field names (unverified); the pfc-watchdog ``-o json`` form is refused.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from fabricd.model import Platform
from fabricd.nos.cumulus_nvue import schema
from fabricd.nos.cumulus_nvue.grammar import CL_RELEASE

from . import tables
from .cabling import nvue_interface_counters, nvue_link_phy_detail, nvue_lldp_neighbor, nvue_transceiver
from .counters import WatchdogSettings
from .device import Cancellable, DeviceSpec, Reply, Shell, SimSwitch

Tree = dict[str, Any]


def tree_set(tree: Tree, path: tuple[str, ...], value: str | None) -> None:
    node = tree
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    if value is None:
        if not isinstance(node.get(path[-1]), dict):
            node[path[-1]] = {}
    else:
        node[path[-1]] = value


def tree_unset(tree: Tree, path: tuple[str, ...]) -> None:
    node = tree
    chain = []
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            return
        chain.append((node, part))
        node = child
    node.pop(path[-1], None)
    for parent, part in reversed(chain):  # prune the containers this unset emptied
        if parent[part] == {}:
            del parent[part]
        else:
            break


def tree_leaves(tree: Tree, prefix: tuple[str, ...] = ()) -> list[schema.Leaf]:
    out: list[schema.Leaf] = []
    for key in sorted(tree, key=_natural):
        value = tree[key]
        if isinstance(value, dict):
            if value:
                out.extend(tree_leaves(value, (*prefix, key)))
            else:
                out.append(((*prefix, key), None))
        else:
            out.append(((*prefix, key), str(value)))
    return out


_NUM = re.compile(r"(\d+)")


def _natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in _NUM.split(name)]


def parse_duration(text: str) -> int | None:
    """``60s`` / ``10m`` / ``1h`` -> seconds; a bare number means minutes (NVUE docs). None when malformed."""
    m = re.fullmatch(r"(\d+)([smh]?)", text)
    if not m:
        return None
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "": 60}[m.group(2)]


@dataclass
class Revision:
    """One applied (or tried) revision: its config, parent, state and times."""

    rev: int
    tree: Tree
    parent: int | None
    state: str  # applied | confirm | confirm_failed | confirm_no | apply_fail | superseded
    date: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()))
    message: str = "Config update by admin"
    timer: Cancellable | None = None
    deadline: float | None = None


class NvueSwitch(SimSwitch):
    platform = Platform.CUMULUS_NVUE

    def __init__(self, spec: DeviceSpec, **kwargs: float | Callable[[], float]) -> None:
        super().__init__(spec, **kwargs)  # type: ignore[arg-type]
        base: Tree = {}
        tree_set(base, ("system", "hostname"), self.name)
        for port in self.port_names:
            tree_set(base, ("interface", port, "link", "state"), "up")
        self.applied: Tree = base
        self.pending: Tree | None = None
        self.revisions: dict[int, Revision] = {
            1: Revision(1, copy.deepcopy(base), None, "applied", message="Initial configuration")
        }
        self.current = 1
        self.config_changed()

    def running_config(self) -> str:
        return "\n".join(schema.leaf_line(leaf) for leaf in tree_leaves(self.applied))

    def set_applied(self, tree: Tree) -> None:
        self.applied = tree
        self.config_changed()

    def config_changed(self) -> None:
        """Watchdog from the applied config: ports with ``qos pfc-watchdog`` (and no ``state disable``) watch their PFC
        profile's switch-priorities; detection = polling-interval × robustness, restoration = one polling interval."""
        qos = self.applied.get("qos", {})
        wd = qos.get("pfc-watchdog", {}) if isinstance(qos, dict) else {}
        poll = int(wd.get("polling-interval", 100)) if isinstance(wd, dict) else 100
        robust = int(wd.get("robustness", 3)) if isinstance(wd, dict) else 3
        profiles = qos.get("pfc", {}) if isinstance(qos, dict) else {}
        ports: set[str] = set()
        prios: set[int] = set()
        for name, iface in self.applied.get("interface", {}).items():
            iq = iface.get("qos", {}) if isinstance(iface, dict) else {}
            if not isinstance(iq, dict) or "pfc-watchdog" not in iq:
                continue
            iwd = iq["pfc-watchdog"]
            if isinstance(iwd, dict) and iwd.get("state") == "disable":
                continue
            prof = iq.get("pfc", {}).get("profile") if isinstance(iq.get("pfc"), dict) else None
            sp = profiles.get(prof, {}).get("switch-priority", {}) if isinstance(profiles, dict) and prof else {}
            found = {int(p) for p in sp if str(p).isdigit()} if isinstance(sp, dict) else set()
            if found:
                ports.add(name)
                prios |= found
        settings = None
        if ports:
            settings = WatchdogSettings(frozenset(prios), poll * robust, poll, "drop", frozenset(ports))
        self.counters.set_watchdog(settings)

    def open_shell(self) -> NvueShell:
        return NvueShell(self)

    # -- revisions -----------------------------------------------------------------------------------------------

    def apply(self, tree: Tree, confirm_s: int | None, message: str) -> tuple[int, str | None]:
        """Apply ``tree`` as a new revision; returns (rev, error)."""
        rev = max(self.revisions) + 1
        if self.faults.commit_fails:
            self.revisions[rev] = Revision(rev, copy.deepcopy(tree), self.current, "apply_fail", message=message)
            return rev, f"Error: Config apply failed for revision {rev}: the switchd reload did not complete"
        parent = self.current
        before = copy.deepcopy(self.applied)
        entry = Revision(rev, copy.deepcopy(tree), parent, "confirm" if confirm_s else "applied", message=message)
        self.revisions[rev] = entry
        self.set_applied(copy.deepcopy(tree))
        self.current = rev
        if confirm_s:
            entry.deadline = time.monotonic() + confirm_s

            def expire() -> None:
                if entry.state == "confirm":
                    entry.state = "confirm_failed"
                    self.set_applied(before)
                    self.current = parent

            entry.timer = self.schedule(confirm_s, expire)
        return rev, None

    def pending_confirm(self) -> Revision | None:
        return next((r for r in self.revisions.values() if r.state == "confirm"), None)

    # -- counters ------------------------------------------------------------------------------------------------

    def roce_priority(self, port: str) -> int:
        prios = self.counters.watchdog.priorities if self.counters.watchdog else frozenset({3})
        return min(prios) if prios else 3

    def counters_qos(self, port: str, as_json: bool) -> str:
        p = self.counters.read()[port]
        if as_json:
            return json.dumps(
                {
                    "ingress-buffer-stats": {
                        str(i): {"rx-frames": 0, "rx-buffer-discards": 0, "rx-shared-buffer-discards": 0}
                        for i in range(8)
                    },
                    "egress-queue-stats": {
                        str(i): {
                            "tx-frames": q.tx_packets,
                            "tx-bytes": q.tx_bytes,
                            "tx-uc-buffer-discards": q.dropped_bytes,
                            "wred-discards": q.wred_dropped_packets,
                        }
                        for i, q in enumerate(p.queues)
                    },
                    "pfc-stats": {
                        str(i): {
                            "rx-pause-frames": c.rx_frames,
                            "rx-pause-duration": c.rx_pause_us,
                            "tx-pause-frames": c.tx_frames,
                            "tx-pause-duration": c.tx_pause_us,
                        }
                        for i, c in enumerate(p.pfc)
                    },
                    "port-stats": {
                        "ecn-marked-packets": {
                            "receive": None,
                            "transmit": sum(q.ecn_marked_packets for q in p.queues),
                        },
                        "pause-frames": {
                            "receive": sum(c.rx_frames for c in p.pfc),
                            "transmit": sum(c.tx_frames for c in p.pfc),
                        },
                    },
                },
                indent=2,
            )
        ing = tables.left(
            ["priority-group", "rx-frames", "rx-buffer-discards", "rx-shared-buffer-discards"],
            [[str(i), "0", "0 Bytes", "0 Bytes"] for i in range(8)],
            indent="    ",
        )
        eg = tables.left(
            ["traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"],
            [
                [
                    str(i),
                    str(q.tx_packets),
                    f"{q.tx_bytes} Bytes",
                    f"{q.dropped_bytes} Bytes",
                    str(q.wred_dropped_packets),
                ]
                for i, q in enumerate(p.queues)
            ],
            indent="    ",
        )
        pfc = tables.left(
            ["switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames", "tx-pause-duration"],
            [
                [str(i), str(c.rx_frames), str(c.rx_pause_us), str(c.tx_frames), str(c.tx_pause_us)]
                for i, c in enumerate(p.pfc)
            ],
            indent="    ",
        )
        port = tables.left(
            ["Counter", "Receive", "Transmit"],
            [
                ["ecn-marked-packets", "n/a", str(sum(q.ecn_marked_packets for q in p.queues))],
                ["mc-buffer-discards", "n/a", "0"],
                ["pause-frames", str(sum(c.rx_frames for c in p.pfc)), str(sum(c.tx_frames for c in p.pfc))],
            ],
            indent="    ",
        )
        return "\n".join(
            [
                "Ingress Buffer Statistics",
                "============================",
                ing,
                "",
                "Egress Queue Statistics",
                "==========================",
                eg,
                "",
                "PFC Statistics",
                "=================",
                pfc,
                "",
                "Qos Port Statistics",
                "======================",
                port,
            ]
        )

    def roce_counters(self, port: str, as_json: bool) -> str:
        p = self.counters.read()[port]
        prio = self.roce_priority(port)
        roce_q = p.queues[prio]
        other_pkts = sum(q.tx_packets for i, q in enumerate(p.queues) if i != prio)
        other_bytes = sum(q.tx_bytes for i, q in enumerate(p.queues) if i != prio)
        other_drops = sum(q.dropped_packets for i, q in enumerate(p.queues) if i != prio)
        cnp = p.queues[6]
        data: dict[str, dict[str, dict[str, int]]] = {
            "rx-stats": {
                "rx-non-roce-stats": {
                    "no-buffer-discard": other_drops,
                    "non-roce-bytes": other_bytes,
                    "non-roce-packets": other_pkts,
                },
                "rx-pfc-stats": {"pause-duration": p.pfc[prio].rx_pause_us, "pause-packets": p.pfc[prio].rx_frames},
                "rx-roce-stats": {
                    "no-buffer-discard": 0,
                    "roce-bytes": roce_q.tx_bytes,
                    "roce-packets": roce_q.tx_packets,
                },
            },
            "tx-stats": {
                "tx-cnp-stats": {
                    "cnp-bytes": cnp.tx_bytes,
                    "cnp-packets": cnp.tx_packets,
                    "unicast-no-buffer-discard": cnp.dropped_packets,
                },
                "tx-ecn-stats": {"ecn-marked-packets": roce_q.ecn_marked_packets},
                "tx-pfc-stats": {"pause-duration": p.pfc[prio].tx_pause_us, "pause-packets": p.pfc[prio].tx_frames},
                "tx-roce-stats": {
                    "roce-bytes": roce_q.tx_bytes,
                    "roce-packets": roce_q.tx_packets,
                    "unicast-no-buffer-discard": roce_q.dropped_packets,
                },
            },
        }
        if as_json:
            return json.dumps(data, indent=2)
        shown = {
            name: f"{value} Bytes" if name.endswith("bytes") else str(value)
            for sections in data.values()
            for values in sections.values()
            for name, value in values.items()
        }
        width = max(12, *(len(v) for v in shown.values()))
        lines = [
            f"{'':<31}{'operational':<{width + 2}}{'applied':<9}description",
            f"{'-' * 29}  {'-' * width}  {'-' * 7}  {'-' * 54}",
        ]
        for group, sections in data.items():
            lines.append(group)
            for section, values in sections.items():
                lines.append(f"  {section}")
                for name, value in values.items():
                    text = f"{value} Bytes" if name.endswith("bytes") else str(value)
                    lines.append(f"    {name:<27}{text:<{width + 2}}")
        return "\n".join(lines)

    def show_system(self, as_json: bool) -> str:
        """``nv show system`` in the shape of NVIDIA's command reference example (CumulusNetworks/docs
        content/nvue-reference/Show-Commands/System.md: hostname, build, uptime, timezone rows). The build is the
        release fabricd's NVUE output targets. The ``-o json`` form has no public capture (unverified): its keys are
        the text's rows."""
        build = f"Cumulus Linux {CL_RELEASE}.0"
        uptime = "0:00:00"
        if as_json:
            return json.dumps(
                {"hostname": self.name, "build": build, "uptime": uptime, "timezone": "Etc/UTC"}, indent=2
            )
        width = max(19, len(self.name), len(build))
        return "\n".join(
            [
                f"          {'operational':<{width}}  applied",
                f"--------  {'-' * width}  -------",
                f"hostname  {self.name:<{width}}  {self.name} ",
                f"build     {build:<{width}}         ",
                f"uptime    {uptime:<{width}}         ",
                "timezone  Etc/UTC",
            ]
        )

    def watchdog_status(self, port: str, as_json: bool) -> str:
        """``nv show interface IF qos pfc-watchdog`` as the Cumulus Linux 5.11 guide prints it: the ``state`` row,
        then ``PFC WD Status`` with every traffic class (the blank line under the rule and the trailing spaces are
        NVUE's). The ``-o json`` form has no public capture, so the lab refuses it rather than invent one."""
        if as_json:
            return (
                "Error: fabricd lab: `nv show interface <if> qos pfc-watchdog -o json` has no public capture to "
                "follow; use the text form"
            )
        p = self.counters.read()[port]
        wd_cfg = self.counters.watchdog
        watched = wd_cfg is not None and (wd_cfg.ports is None or port in wd_cfg.ports)
        state = "enabled" if watched else "disabled"
        lines = [
            "                 operational  applied ",
            "---------------  -----------  ------- ",
            f"state            {state:<11}  {state:<7} ",
        ]
        if not watched:
            return "\n".join(lines)
        lines += [
            "",
            "PFC WD Status ",
            "=========================== ",
            "    traffic-class  status    deadlock-count ",
            "    -------------  --------  -------------- ",
            "",
        ]
        for tc in range(8):
            wd = p.watchdog.get(tc)
            status, count = ("DEADLOCK" if wd.stormed else "OK", wd.detected) if wd is not None else ("OK", 0)
            lines.append(f"    {tc:<13}  {status:<8}  {count} ")
        return "\n".join(lines)


class NvueShell(Shell):
    """bash with the ``nv`` CLI on a Cumulus switch (``user@host:mgmt:~$``)."""

    def __init__(self, switch: NvueSwitch) -> None:
        self.switch = switch
        self.asking: tuple[Tree, int | None] | None = None

    def greeting(self) -> str:
        return (
            f"Linux {self.switch.name} 6.1.0-cl-1-amd64 #1 SMP PREEMPT_DYNAMIC x86_64\n"
            "Welcome to NVIDIA Cumulus (R) Linux (R) (fabricd lab simulator)\n\n"
        )

    def prompt(self) -> str:
        if self.asking is not None:
            return "Are you sure? [y/N] "
        return f"{self.switch.spec.username}@{self.switch.name}:mgmt:~$ "

    def handle(self, line: str) -> Reply:
        if self.asking is not None:
            return self._answer(line)
        line = line.strip()
        if not line:
            return Reply()
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            return Reply(f"-bash: syntax error: {exc}")
        if argv[0] in ("exit", "logout"):
            return Reply(close=True)
        if argv[0] == "sudo" and len(argv) > 1:
            argv = argv[1:]
        if argv[0] != "nv":
            return Reply(f"-bash: {argv[0]}: command not found")
        verb = argv[1] if len(argv) > 1 else ""
        verbs: dict[str, Callable[[], Reply]] = {
            "set": lambda: self.set(argv[2:], line),
            "unset": lambda: self.unset(argv[2:], line),
            "config": lambda: self.config(argv[2:]),
            "show": lambda: self.show(argv[2:]),
        }
        command = verbs.get(verb)
        if command is None:
            return Reply(f"Error: Invalid Command: '{verb}'; expected one of: action, config, set, show, unset")
        return command()

    def _answer(self, line: str) -> Reply:
        """The answer to ``nv config apply``'s "Are you sure?"."""
        assert self.asking is not None
        tree, confirm = self.asking
        self.asking = None
        if line.strip().lower() in ("y", "yes"):
            return self._apply(tree, confirm)
        return Reply("Declined apply.")

    def _pending(self) -> Tree:
        sw = self.switch
        if sw.pending is None:
            sw.pending = copy.deepcopy(sw.applied)
        return sw.pending

    def set(self, tokens: list[str], line: str) -> Reply:
        if self.switch.faults.rejects(line):
            return Reply(f"Error: Invalid value: '{tokens[-1] if tokens else ''}' is not accepted here")
        parsed = schema.parse_set(tokens)
        if isinstance(parsed, schema.PathError):
            return Reply(parsed.message("set", tokens))
        pending = self._pending()
        for path, value in parsed:
            tree_set(pending, path, value)
        return Reply()

    def unset(self, tokens: list[str], line: str) -> Reply:
        if self.switch.faults.rejects(line):
            return Reply(f"Error: Invalid value: '{tokens[-1] if tokens else ''}' is not accepted here")
        parsed = schema.parse_unset(tokens)
        if isinstance(parsed, schema.PathError):
            return Reply(parsed.message("unset", tokens))
        pending = self._pending()
        for path in parsed:
            tree_unset(pending, path)
        return Reply()

    # -- nv config -----------------------------------------------------------------------------------------------

    def config(self, args: list[str]) -> Reply:
        sw = self.switch
        sub = args[0] if args else ""
        rest = args[1:]
        subs: dict[str, Callable[[], Reply]] = {
            "diff": lambda: Reply(self.diff(sw.applied, sw.pending if sw.pending is not None else sw.applied)),
            "detach": self._detach,
            "apply": lambda: self.apply(rest),
            "history": self._history,
            "revision": self._revisions,
            "show": lambda: self._config_show(rest),
            "save": lambda: Reply(f"saved [rev_id: {sw.current}]"),
        }
        command = subs.get(sub)
        if command is None:
            return Reply(
                f"Error: Invalid Command: 'nv config {sub}'; expected one of: apply, detach, diff, "
                "history, revision, save, show"
            )
        return command()

    def _detach(self) -> Reply:
        self.switch.pending = None
        return Reply()

    def _history(self) -> Reply:
        sw = self.switch
        out = []
        for r in sorted(sw.revisions.values(), key=lambda r: -r.rev):
            out.append(
                yaml.safe_dump(
                    [
                        {
                            "apply-date": r.date,
                            "date": r.date,
                            "message": r.message,
                            "ref": str(r.rev),
                            "state": r.state,
                            "type": "apply",
                            "user": sw.spec.username,
                        }
                    ],
                    sort_keys=False,
                ).rstrip()
            )
        return Reply("\n".join(out))

    def _revisions(self) -> Reply:
        sw = self.switch
        data = {
            str(r.rev): {"state": r.state, "parent-revision-id": str(r.parent) if r.parent else None}
            for r in sw.revisions.values()
        }
        if sw.pending is not None:
            data["pending"] = {"state": "pending", "parent-revision-id": str(sw.current)}
        return Reply(json.dumps(data, indent=2))

    def _config_show(self, rest: list[str]) -> Reply:
        """``nv config show [--pending] [-o commands|json|yaml]``."""
        sw = self.switch
        tree = sw.pending if "--pending" in rest and sw.pending is not None else sw.applied
        fmt = rest[rest.index("-o") + 1] if "-o" in rest and rest.index("-o") + 1 < len(rest) else "yaml"
        if fmt == "commands":
            return Reply("\n".join(schema.leaf_line(leaf) for leaf in tree_leaves(tree)))
        if fmt == "json":
            return Reply(json.dumps(tree, indent=2, sort_keys=True))
        return Reply(yaml.safe_dump([{"set": tree}], sort_keys=True).rstrip())

    @staticmethod
    def diff(before: Tree, after: Tree) -> str:
        old = dict(tree_leaves(before))
        new = dict(tree_leaves(after))
        set_tree: Tree = {}
        unset_tree: Tree = {}
        for path, value in new.items():
            if path not in old or old[path] != value:
                tree_set(set_tree, path, value)
        for path in old:
            if path not in new:
                tree_set(unset_tree, path, None)
        doc = []
        if set_tree:
            doc.append({"set": set_tree})
        if unset_tree:
            doc.append({"unset": unset_tree})
        return yaml.safe_dump(doc, sort_keys=True).rstrip() if doc else ""

    def apply(self, args: list[str]) -> Reply:
        sw = self.switch
        if "--confirm-status" in args:
            return self._confirm_status()
        if "--confirm-yes" in args or "--confirm-no" in args:
            return self._confirm("--confirm-yes" in args)
        parsed = _apply_args(args)
        if isinstance(parsed, Reply):
            return parsed
        confirm, positional = parsed
        tree = self._apply_target(positional)
        if isinstance(tree, Reply):
            return tree
        if sw.pending_confirm() is not None:
            return Reply("Error: a previous apply is waiting for confirmation; confirm or revert it first")
        if not any(a in ("-y", "--y", "--assume-yes") for a in args):
            self.asking = (tree, confirm)
            return Reply("Warning: The following configuration will be applied to the switch.")
        return self._apply(tree, confirm)

    def _confirm_status(self) -> Reply:
        rev = self.switch.pending_confirm()
        if rev is None or rev.deadline is None:
            return Reply("No pending confirm.")
        return Reply(f"Remaining time for revision {rev.rev}: {max(0, int(rev.deadline - time.monotonic()))}s")

    def _confirm(self, yes: bool) -> Reply:
        """``--confirm-yes`` keeps the revision waiting for confirmation; ``--confirm-no`` reverts to its parent."""
        sw = self.switch
        rev = sw.pending_confirm()
        if rev is None:
            return Reply("Error: no configuration is pending confirmation")
        if rev.timer is not None:
            rev.timer.cancel()
        if yes:
            rev.state = "applied"
            return Reply(f"applied [rev_id: {rev.rev}]")
        rev.state = "confirm_no"
        parent = sw.revisions.get(rev.parent or 0)
        if parent is not None:
            sw.set_applied(copy.deepcopy(parent.tree))
            sw.current = parent.rev
        return Reply(f"Reverted to revision {sw.current}")

    def _apply_target(self, positional: list[str]) -> Tree | Reply:
        """The tree to apply: the named revision, else the pending changes (a Reply when there is none)."""
        sw = self.switch
        if positional:
            rev = sw.revisions.get(int(positional[0])) if positional[0].isdigit() else None
            if rev is None:
                return Reply(f"Error: Revision {positional[0]} does not exist")
            return copy.deepcopy(rev.tree)
        if sw.pending is None or tree_leaves(sw.pending) == tree_leaves(sw.applied):
            sw.pending = None
            return Reply("Warning: There are no pending changes to apply.")
        return sw.pending

    def _apply(self, tree: Tree, confirm: int | None) -> Reply:
        sw = self.switch
        rev, error = sw.apply(tree, confirm, f"Config update by {sw.spec.username}")
        if error:
            return Reply(error)
        sw.pending = None
        text = f"applied [rev_id: {rev}]"
        if confirm:
            text += f"\nConfirm within {confirm}s with `nv config apply --confirm-yes`, or the switch reverts."
        return Reply(text)

    # -- nv show -------------------------------------------------------------------------------------------------

    def show(self, args: list[str]) -> Reply:
        sw = self.switch
        as_json = "-o" in args and args[args.index("-o") + 1 : args.index("-o") + 2] == ["json"]
        if "-o" in args:
            i = args.index("-o")
            args = args[:i] + args[i + 2 :]
        if len(args) >= 3 and args[0] == "interface":
            text = self._show_interface(args[1], tuple(args[2:]), as_json)
            if text is not None:
                return Reply(text)
        if args == ["system"]:
            return Reply(sw.show_system(as_json))
        return Reply(f"Error: The requested item does not exist: {' '.join(args)}")

    def _show_interface(self, port: str, what: tuple[str, ...], as_json: bool) -> str | None:
        """``nv show interface PORT WHAT``; None for a WHAT this image does not have (in this output form)."""
        sw = self.switch
        if port not in sw.counters.ports:
            return f"Error: The requested item does not exist: interface {port}"
        text_only: dict[tuple[str, ...], Callable[[], str]] = {
            ("counters",): lambda: nvue_interface_counters(sw.link, port, sw.clock()),
            ("link", "phy-detail"): lambda: nvue_link_phy_detail(sw.link, port, sw.clock()),
            ("transceiver",): lambda: nvue_transceiver(sw.link, port, sw.clock()),
            ("lldp", "neighbor"): lambda: nvue_lldp_neighbor(sw.spec.neighbors, port),
        }
        both: dict[tuple[str, ...], Callable[[str, bool], str]] = {
            ("counters", "qos"): sw.counters_qos,
            ("qos", "roce", "counters"): sw.roce_counters,
            ("qos", "pfc-watchdog"): sw.watchdog_status,
        }
        if what in text_only and not as_json:
            return text_only[what]()
        if what in both:
            return both[what](port, as_json)
        return None


def _apply_args(args: list[str]) -> tuple[int | None, list[str]] | Reply:
    """``nv config apply``'s ``--confirm [DURATION]`` (seconds; 600 without a value) and its positional words
    (a revision); a Reply for a bad duration."""
    confirm: int | None = None
    positional = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--confirm":
            value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else None
            confirm = parse_duration(value) if value else 600
            if value and confirm is None:
                return Reply(f"Error: Invalid value '{value}' for --confirm; expected a time such as 60s, 10m, 1h")
            i += 2 if value else 1
            continue
        if not a.startswith("-"):
            positional.append(a)
        i += 1
    return confirm, positional
