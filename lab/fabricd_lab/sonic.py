"""Simulated SONiC: a bash login with sonic-utilities' ``show`` and ``config`` commands over a CONFIG_DB.

Behaviour follows sonic-net/sonic-utilities (``config/main.py``, ``generic_config_updater``, ``scripts/pfcstat``,
``scripts/queuestat``, ``scripts/wredstat``, ``pfcwd/main.py``):

- ``admin@host:~$``; ``sudo -s`` gives ``root@host:/home/admin#``; ``config`` without root answers
  ``Root privileges are required for this operation``; unknown commands ``-bash: X: command not found``;
- the Generic Config Updater: ``config checkpoint NAME``, ``config rollback NAME``, ``config list-checkpoints``,
  ``config delete-checkpoint NAME``, ``config apply-patch [--dry-run] FILE`` (RFC 6902 JSON patch, with GCU's
  checks: known tables, field ranges, min <= max, no empty tables) and ``config replace FILE``, printing GCU's
  ``Patch Applier: ...`` progress lines and ``Patch applied successfully.`` / ``Failed to apply patch due to: ...``;
- ``show runningconfiguration all`` prints CONFIG_DB as JSON; ``config save -y``; ``config interface mtu``,
  ``config vlan add``, ``config vlan member add``, ``config pfcwd start|stop|interval`` and
  ``sonic-cfggen -a JSON --write-to-db`` edit CONFIG_DB directly (the lines of ``fabricd render``'s ``.cli`` file);
- files for patches are written with ``echo DATA | base64 -d > FILE`` (``>>`` appends), read with ``cat``.

CONFIG_DB's checks and JSON patches are :mod:`fabricd_lab.sonic_db`.

Counter tables follow the captures in fixtures/sonic: ``show pfc counters`` (Rx and Tx tables),
``show queue counters [PORT] [--json]``, ``show queue wredcounters``, ``show pfcwd stats``, ``show pfcwd config``
and ``show interfaces counters``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import shlex
from collections.abc import Callable

from fabricd.model import Platform

from . import tables
from .cabling import sonic_fec_stats, sonic_interfaces_flap, sonic_lldp_table, sonic_transceiver_dom
from .counters import WatchdogSettings
from .device import DeviceSpec, Reply, Shell, SimSwitch
from .sonic_db import CLI_EDITS, ConfigDb, EditError, apply_patch, natural, validate


class SonicSwitch(SimSwitch):
    platform = Platform.SONIC

    def __init__(self, spec: DeviceSpec, **kwargs: float | Callable[[], float]) -> None:
        super().__init__(spec, **kwargs)  # type: ignore[arg-type]
        self.db: ConfigDb = self.base_config()
        self.saved: ConfigDb = copy.deepcopy(self.db)
        self.checkpoints: dict[str, ConfigDb] = {}
        self.files: dict[str, bytes] = {}
        self.config_changed()

    def base_config(self) -> ConfigDb:
        ports = {}
        for i, (name, speed) in enumerate(self.spec.ports):
            ports[name] = {
                "admin_status": "up",
                "alias": f"etp{i + 1}",
                "index": str(i + 1),
                "lanes": ",".join(str(8 * i + n) for n in range(8)),
                "mtu": "9100",
                "speed": str(speed // 1_000_000),
            }
        return {
            "DEVICE_METADATA": {
                "localhost": {
                    "hostname": self.name,
                    "hwsku": "Mellanox-SN4700-O8C48",
                    "platform": "x86_64-mlnx_msn4700-r0",
                    "mac": "1c:34:da:00:00:01",
                    "type": "LeafRouter",
                    "buffer_model": "traditional",
                    "default_pfcwd_status": "disable",
                }
            },
            "PORT": ports,
            "BUFFER_POOL": {
                "ingress_lossless_pool": {"mode": "dynamic", "size": "47218432", "type": "ingress"},
                "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
                "egress_lossy_pool": {"mode": "dynamic", "size": "47218432", "type": "egress"},
            },
            "FLEX_COUNTER_TABLE": {
                "PFCWD": {"FLEX_COUNTER_STATUS": "enable"},
                "QUEUE": {"FLEX_COUNTER_STATUS": "enable"},
            },
        }

    def running_config(self) -> str:
        return json.dumps(self.db, indent=4, sort_keys=True)

    def config_changed(self) -> None:
        """PFC watchdog from CONFIG_DB: ports with a ``PFC_WD|<port>`` entry, watching their ``pfcwd_sw_enable``
        (or ``pfc_enable``) priorities with that entry's timers and action."""
        wd = self.db.get("PFC_WD", {})
        qos = self.db.get("PORT_QOS_MAP", {})
        ports: set[str] = set()
        prios: set[int] = set()
        detect, restore, action = 200, 200, "drop"
        for port, entry in wd.items():
            if port == "GLOBAL" or port not in self.counters.ports:
                continue
            enabled = qos.get(port, {}).get("pfcwd_sw_enable") or qos.get(port, {}).get("pfc_enable") or ""
            found = {int(p) for p in enabled.split(",") if p.isdigit()}
            if found:
                ports.add(port)
                prios |= found
                detect = int(entry.get("detection_time", detect))
                restore = int(entry.get("restoration_time", restore))
                action = entry.get("action", action)
        settings = None
        if ports:
            settings = WatchdogSettings(frozenset(prios), detect, restore, action, frozenset(ports))
        self.counters.set_watchdog(settings)

    def set_db(self, db: ConfigDb) -> None:
        self.db = db
        self.config_changed()

    def open_shell(self) -> SonicShell:
        return SonicShell(self)

    # -- counters ------------------------------------------------------------------------------------------------

    def sorted_ports(self) -> list[str]:
        return sorted(self.counters.ports, key=natural)

    def pfc_counters(self) -> str:
        ports = self.counters.read()
        titles = [f"PFC{i}" for i in range(8)]
        rx = [[n, *(tables.comma(c.rx_frames) for c in ports[n].pfc)] for n in self.sorted_ports()]
        tx = [[n, *(tables.comma(c.tx_frames) for c in ports[n].pfc)] for n in self.sorted_ports()]
        return tables.simple(["Port Rx", *titles], rx) + "\n\n" + tables.simple(["Port Tx", *titles], tx)

    def pfc_history(self) -> str:
        """``pfcstat --history`` as sonic-utilities prints it (tests/pfcstat_input/assert_show_output.py): every
        port's PFC0..PFC7 rows, an empty line after each port. The total columns come from the SAI counters; the
        lab has no pfcwd estimate of the most recent pause, so those two columns are N/A as on such platforms."""
        ports = self.counters.read()
        rows = []
        for n in self.sorted_ports():
            for prio, c in enumerate(ports[n].pfc):
                rows.append(
                    [n, f"PFC{prio}", tables.comma(c.rx_transitions), tables.comma(c.rx_pause_us), "N/A", "N/A"]
                )
        headers = [
            "Port",
            "Priority",
            "RX Pause Transitions",
            "Total RX Pause Time US",
            "Recent RX Pause Time US",
            "Recent RX Pause Timestamp",
        ]
        lines = tables.simple(headers, rows).split("\n")
        out = lines[:2]
        for i, line in enumerate(lines[2:], 1):
            out.append(line)
            if i % 8 == 0:
                out.append("")
        return "\n".join(out)

    def queue_counters(self, port: str | None, as_json: bool, wred: bool) -> str:
        ports = self.counters.read()
        names = [port] if port else self.sorted_ports()
        if as_json:
            data: dict[str, dict[str, dict[str, str]]] = {}
            for n in names:
                entry = {}
                for i, q in enumerate(ports[n].queues):
                    if wred:
                        entry[f"UC{i}"] = {
                            "wreddroppacket": str(q.wred_dropped_packets),
                            "wreddropbytes": str(q.wred_dropped_bytes),
                            "ecnmarkedpacket": str(q.ecn_marked_packets),
                            "ecnmarkedbytes": str(q.ecn_marked_bytes),
                        }
                    else:
                        entry[f"UC{i}"] = {
                            "totalpacket": str(q.tx_packets),
                            "totalbytes": str(q.tx_bytes),
                            "droppacket": str(q.dropped_packets),
                            "dropbytes": str(q.dropped_bytes),
                        }
                data[n] = entry
            return json.dumps(data, indent=4)
        blocks = []
        for n in names:
            rows = []
            for i, q in enumerate(ports[n].queues):
                if wred:
                    rows.append(
                        [
                            n,
                            f"UC{i}",
                            str(q.wred_dropped_packets),
                            str(q.wred_dropped_bytes),
                            str(q.ecn_marked_packets),
                            str(q.ecn_marked_bytes),
                        ]
                    )
                else:
                    rows.append(
                        [n, f"UC{i}", str(q.tx_packets), str(q.tx_bytes), str(q.dropped_packets), str(q.dropped_bytes)]
                    )
            for i in range(8, 16):
                rows.append([n, f"MC{i}", "0", "0", "0", "0"])
            headers = (
                ["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"]
                if wred
                else ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
            )
            # the shape of the issue captures (older releases); newer queuestat prints "For namespace <ns>:" above
            # each port's table (sonic-utilities tests/queue_counter_test.py): the parser reads both
            blocks.append(tables.simple(headers, rows))
        return "\n\n".join(blocks)

    def pfcwd_stats(self) -> str:
        ports = self.counters.read()
        rows = []
        for n in self.sorted_ports():
            for prio, wd in sorted(ports[n].watchdog.items()):
                rows.append(
                    [
                        f"{n}:{prio}",
                        "stormed" if wd.stormed else "operational",
                        f"{wd.detected}/{wd.restored}",
                        f"{wd.tx_ok}/{wd.tx_drop}",
                        f"{wd.rx_ok}/{wd.rx_drop}",
                        f"{wd.last_tx_ok}/{wd.last_tx_drop}",
                        f"{wd.last_rx_ok}/{wd.last_rx_drop}",
                    ]
                )
        headers = [
            "QUEUE",
            "STATUS",
            "STORM DETECTED/RESTORED",
            "TX OK/DROP",
            "RX OK/DROP",
            "TX LAST OK/DROP",
            "RX LAST OK/DROP",
        ]
        return tables.simple(headers, rows)

    def pfcwd_config(self) -> str:
        wd = self.db.get("PFC_WD", {})
        # the shape of releases before the HISTORY column (sonic-buildimage issue #9193); newer ones add HISTORY
        # (sonic-utilities tests/pfcwd_input/pfcwd_test_vectors.py): the parser reads both
        rows = [
            [p, e.get("action", "drop"), e.get("detection_time", "N/A"), e.get("restoration_time", "N/A")]
            for p, e in sorted(wd.items(), key=lambda kv: natural(kv[0]))
            if p != "GLOBAL"
        ]
        text = tables.simple(["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME"], rows)
        poll = wd.get("GLOBAL", {}).get("POLL_INTERVAL")
        return (f"Changed polling interval to {poll}ms\n" if poll else "") + text

    def watermarks(self, group: str, kind: str) -> str:
        """``watermarkstat`` as sonic-utilities prints it (tests/wm_input/wm_test_vectors.py): a title, then one row
        per port of PG0..PG7 or UC0..UC7 / MC8..MC15 in bytes, from the counter model's peaks. The lab keeps one
        peak per buffer, so the persistent watermark prints the same values."""
        ports = self.counters.read()
        if group == "priority-group":
            title = "Ingress shared pool occupancy per PG:" if kind == "shared" else "Ingress headroom per PG:"
            key, names = f"pg_{kind}", [f"PG{i}" for i in range(8)]
        else:
            title = f"Egress shared pool occupancy per {kind} queue:"
            key, names = (
                "queue",
                [f"UC{i}" for i in range(8)] if kind == "unicast" else [f"MC{i}" for i in range(8, 16)],
            )
        rows = [
            [n, *(str(v) if kind != "multicast" else "0" for v in ports[n].watermarks[key])]
            for n in self.sorted_ports()
        ]
        return title + "\n" + tables.simple(["Port", *names], rows)

    def interface_counters(self) -> str:
        ports = self.counters.read()
        rows = [
            [
                n,
                "U",
                tables.comma(p.rx_packets),
                "0.00 B/s",
                "0.00%",
                "0",
                tables.comma(p.rx_drops),
                "0",
                tables.comma(p.tx_packets),
                "0.00 B/s",
                "0.00%",
                "0",
                tables.comma(p.tx_drops),
                "0",
            ]
            for n in self.sorted_ports()
            for p in [ports[n]]
        ]
        headers = [
            "IFACE",
            "STATE",
            "RX_OK",
            "RX_BPS",
            "RX_UTIL",
            "RX_ERR",
            "RX_DRP",
            "RX_OVR",
            "TX_OK",
            "TX_BPS",
            "TX_UTIL",
            "TX_ERR",
            "TX_DRP",
            "TX_OVR",
        ]
        return tables.simple(headers, rows)


_B64_WRITE = re.compile(r"^echo\s+'?([A-Za-z0-9+/=]*)'?\s*\|\s*base64\s+(?:-d|--decode)\s*(>>?)\s*(\S+)$")


class SonicShell(Shell):
    """bash as ``admin`` (or root after ``sudo -s``) on a SONiC switch."""

    def __init__(self, switch: SonicSwitch) -> None:
        self.switch = switch
        self.root = False
        self.rc = 0

    def greeting(self) -> str:
        return (
            f"Linux {self.switch.name} 6.1.0-29-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.123-1 x86_64\n"
            "You are on\n  SONiC (fabricd lab simulator)\n\n"
            "Unauthorized access and/or use are prohibited.\n"
            "All access and/or use are subject to monitoring.\n\n"
        )

    def prompt(self) -> str:
        if self.root:
            return f"root@{self.switch.name}:/home/{self.switch.spec.username}# "
        return f"{self.switch.spec.username}@{self.switch.name}:~$ "

    def _done(self, text: str, rc: int = 0) -> Reply:
        self.rc = rc
        return Reply(text)

    def handle(self, line: str) -> Reply:
        line = line.strip()
        special = self._special(line)
        if special is not None:
            return special
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            return self._done(f"-bash: syntax error: {exc}", 2)
        if not argv:
            return Reply()
        if argv[0] in ("exit", "logout"):
            return self._exit()
        if argv[0] == "sudo":
            if argv[1:] in (["-s"], ["-i"], ["su"]):
                self.root = True
                return self._done("")
            if len(argv) == 1:
                return self._done("usage: sudo -h | -K | -k | -V", 1)
            return self._run(argv[1:], root=True)
        return self._run(argv, root=self.root)

    def _special(self, line: str) -> Reply | None:
        """An empty line, ``echo $?`` and the base64 file writes, which are not parsed as commands."""
        if not line:
            return Reply()
        if line == "echo $?":
            return Reply(str(self.rc))
        m = _B64_WRITE.match(line)
        if m:
            return self._write_file(m.group(1), m.group(2) == ">>", m.group(3))
        return None

    def _exit(self) -> Reply:
        """``exit`` leaves the root shell of ``sudo -s``, else hangs up."""
        if self.root:
            self.root = False
            return self._done("exit")
        return Reply(close=True)

    def _run(self, argv: list[str], *, root: bool) -> Reply:
        command = self._commands().get(argv[0])
        reply = command(argv, root) if command is not None else None
        return reply if reply is not None else self._done(f"-bash: {argv[0]}: command not found", 127)

    def _commands(self) -> dict[str, Callable[[list[str], bool], Reply | None]]:
        """The shell's commands: each takes argv and whether it runs as root; None is ``command not found``."""
        return {
            "show": lambda argv, _root: self.show(argv[1:]),
            "config": self._config_as,
            "sonic-cfggen": lambda argv, root: self.cfggen(argv[1:], root),
            "cat": self._cat,
            "rm": self._rm,
            "pfcstat": lambda _argv, _root: self._done(self.switch.pfc_counters()),
            "pfcwd": lambda argv, _root: (
                self._done(self.switch.pfcwd_stats()) if argv[1:] == ["show", "stats"] else None
            ),
            "hostname": lambda _argv, _root: self._done(self.switch.name),
        }

    def _config_as(self, argv: list[str], root: bool) -> Reply:
        if not root:
            return self._done("Root privileges are required for this operation", 1)
        return self.config(argv[1:])

    def _cat(self, argv: list[str], _root: bool) -> Reply | None:
        if len(argv) != 2:
            return None
        data = self.switch.files.get(argv[1])
        if data is None:
            return self._done(f"cat: {argv[1]}: No such file or directory", 1)
        return self._done(data.decode(errors="replace").rstrip("\n"))

    def _rm(self, argv: list[str], _root: bool) -> Reply:
        for path in argv[1:]:
            if not path.startswith("-"):
                self.switch.files.pop(path, None)
        return self._done("")

    def _write_file(self, data: str, append: bool, path: str) -> Reply:
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return self._done("base64: invalid input", 1)
        files = self.switch.files
        files[path] = (files.get(path, b"") + raw) if append else raw
        return self._done("")

    # -- show ----------------------------------------------------------------------------------------------------

    def show(self, args: list[str]) -> Reply:
        sw = self.switch
        as_json = "--json" in args or "-j" in args
        args = [a for a in args if a not in ("--json", "-j")]
        command = self._show_commands().get(tuple(args))
        if command is not None:
            return self._done(command())
        if args[:2] == ["runningconfiguration", "all"]:
            return self._done(sw.running_config())
        if args[:2] in (["queue", "counters"], ["queue", "counter"], ["queue", "wredcounters"]):
            port = args[2] if len(args) > 2 else None
            if port is not None and port not in sw.counters.ports:
                return self._done(f"Port doesn't exist! {port}", 1)
            return self._done(sw.queue_counters(port, as_json, wred=args[1] == "wredcounters"))
        if _is_watermark(args):
            return self._done(sw.watermarks(args[0], args[2]))
        what = args[0] if args else ""
        return self._done(
            'Usage: show [OPTIONS] COMMAND [ARGS]...\nTry "show -h" for help.\n\n'
            + (f'Error: No such command "{what}".' if what else "Error: Missing command."),
            2,
        )

    def _show_commands(self) -> dict[tuple[str, ...], Callable[[], str]]:
        """``show`` commands without arguments of their own (``--json`` removed), by their words."""
        sw = self.switch
        return {
            ("pfc", "counters"): sw.pfc_counters,
            ("pfc", "counters", "--history"): sw.pfc_history,
            ("pfcwd", "stats"): sw.pfcwd_stats,
            ("pfcwd", "config"): sw.pfcwd_config,
            ("interfaces", "counters"): sw.interface_counters,
            ("interface", "counters"): sw.interface_counters,
            ("interfaces", "flap"): lambda: sonic_interfaces_flap(sw.link, sw.clock()),
            ("interfaces", "counters", "fec-stats"): lambda: sonic_fec_stats(sw.link, sw.clock()),
            ("interfaces", "transceiver", "eeprom", "--dom"): lambda: sonic_transceiver_dom(sw.link, sw.clock()),
            ("lldp", "table"): lambda: sonic_lldp_table(sw.spec.neighbors),
            ("version",): lambda: "SONiC Software Version: SONiC.202411.fabricd-lab\nDistribution: Debian 12.8",
        }

    # -- config --------------------------------------------------------------------------------------------------

    def _fail(self, usage: str, message: str) -> Reply:
        head = usage.split(maxsplit=1)[0]
        return self._done(f'Usage: config {usage}\nTry "config {head} -h" for help.\n\nError: {message}', 2)

    def config(self, args: list[str]) -> Reply:
        sub = args[0] if args else ""
        command = self._config_commands().get(sub)
        reply = command(args[1:]) if command is not None else None
        if reply is not None:
            return reply
        return self._done(
            f'Usage: config [OPTIONS] COMMAND [ARGS]...\nTry "config -h" for help.\n\nError: No such command "{sub}".',
            2,
        )

    def _config_commands(self) -> dict[str, Callable[[list[str]], Reply | None]]:
        """``config`` subcommands: each takes the words after its name; None is ``No such command``."""
        return {
            "checkpoint": self._checkpoint,
            "rollback": self._rollback,
            "list-checkpoints": lambda _rest: self._done(json.dumps(sorted(self.switch.checkpoints), indent=4)),
            "delete-checkpoint": self._delete_checkpoint,
            "apply-patch": self.apply_patch,
            "replace": self.replace,
            "save": self._save,
            "interface": lambda rest: self.cli_edit("interface", rest),
            "vlan": lambda rest: self.cli_edit("vlan", rest),
            "pfcwd": lambda rest: self.cli_edit("pfcwd", rest),
        }

    def _checkpoint(self, rest: list[str]) -> Reply | None:
        if len(rest) != 1:
            return None
        self.switch.checkpoints[rest[0]] = copy.deepcopy(self.switch.db)
        return self._done(
            "\n".join(
                [
                    *self._gcu(
                        "Config Rollbacker",
                        [
                            "Config checkpoint starting.",
                            f"Checkpoint name: {rest[0]}.",
                            "Getting current config db.",
                            "Getting checkpoint full-path.",
                            "Ensuring checkpoint directory exist.",
                            f"Saving config db content to /etc/sonic/checkpoints/{rest[0]}.cp.json.",
                            "Config checkpoint completed.",
                        ],
                    ),
                    "Checkpoint created successfully.",
                ]
            )
        )

    def _rollback(self, rest: list[str]) -> Reply | None:
        names = [a for a in rest if not a.startswith("-")]
        if len(names) != 1:
            return None
        name = names[0]
        lines = self._gcu(
            "Config Rollbacker",
            ["Config rollbacking starting.", f"Checkpoint name: {name}.", f"Verifying '{name}' exists."],
        )
        saved = self.switch.checkpoints.get(name)
        if saved is None:
            return self._done(
                "\n".join(
                    [
                        *lines,
                        "Failed to rollback config",
                        "Usage: config rollback [OPTIONS] CHECKPOINT_NAME",
                        "",
                        f"Error: Checkpoint '{name}' does not exist",
                    ]
                ),
                1,
            )
        if "-d" not in rest and "--dry-run" not in rest:
            self.switch.set_db(copy.deepcopy(saved))
        lines += self._gcu(
            "Config Rollbacker",
            [
                "Loading checkpoint into memory.",
                "Replacing config using 'Config Replacer'.",
                "Config rollbacking completed.",
            ],
        )
        return self._done("\n".join([*lines, "Config rolled back successfully."]))

    def _delete_checkpoint(self, rest: list[str]) -> Reply | None:
        if len(rest) != 1:
            return None
        if self.switch.checkpoints.pop(rest[0], None) is None:
            return self._done(f"Failed to delete config checkpoint\nError: Checkpoint '{rest[0]}' does not exist", 1)
        return self._done("Checkpoint deleted successfully.")

    def _save(self, _rest: list[str]) -> Reply:
        self.switch.saved = copy.deepcopy(self.switch.db)
        return self._done("Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json")

    @staticmethod
    def _gcu(title: str, messages: list[str]) -> list[str]:
        return [f"{title}: {m}" for m in messages]

    def apply_patch(self, args: list[str]) -> Reply:
        sw = self.switch
        dry = any(a in ("-d", "--dry-run") for a in args)
        files = [a for a in args if not a.startswith("-") and a not in ("CONFIGDB", "SONICYANG")]
        if len(files) != 1:
            return self._fail("apply-patch [OPTIONS] PATCH_FILE_PATH", "Missing argument 'PATCH_FILE_PATH'.")
        raw = sw.files.get(files[0])
        head = ["** DRY RUN EXECUTION **"] if dry else []
        if raw is None:
            return self._done(
                "\n".join(
                    [
                        *head,
                        f"Failed to apply patch due to: [Errno 2] No such file or directory: '{files[0]}'",
                        "Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH",
                        f"Error: [Errno 2] No such file or directory: '{files[0]}'",
                    ]
                ),
                1,
            )
        try:
            ops = json.loads(raw)
            if not isinstance(ops, list):
                raise ValueError("a JSON patch is a list of operations")
        except ValueError as exc:
            return self._done("\n".join([*head, f"Failed to apply patch due to: {exc}", f"Error: {exc}"]), 1)
        title = "Patch Applier"
        lines = head + self._gcu(
            title,
            [
                "localhost: Patch application starting.",
                f"localhost: Patch: {json.dumps(ops)}",
                "localhost getting current config db.",
                "localhost: simulating the target full config after applying the patch.",
                "localhost: validating all JsonPatch operations are permitted on the specified fields",
                "localhost: validating target config does not have empty tables, "
                "since they do not show up in ConfigDb.",
            ],
        )
        for op in ops:
            unit = f"{op.get('op')} {op.get('path')} {json.dumps(op.get('value'), sort_keys=True)}"
            if sw.faults.rejects(unit):
                return self._failed(
                    lines,
                    f"Given patch will produce invalid config. Error: operation {unit} "
                    "is not permitted by the YANG model",
                )
        try:
            target = apply_patch(sw.db, ops)
        except ValueError as exc:
            return self._failed(lines, str(exc))
        problem = validate(target)
        if problem:
            return self._failed(lines, f"Given patch will produce invalid config. Error: {problem}")
        lines += self._gcu(
            title,
            [
                "localhost: sorting patch updates.",
                f"The localhost patch was converted into {len(ops)} changes:",
                f"localhost: applying {len(ops)} change{'s' if len(ops) != 1 else ''} in order:",
                *[f"  * [{json.dumps(op)}]" for op in ops],
            ],
        )
        if not dry:
            if sw.faults.commit_fails:
                half = apply_patch(sw.db, ops[: len(ops) // 2])
                sw.set_db(half)
                return self._failed(
                    lines, "Failed to apply change: orchagent did not acknowledge the update (swss timeout)"
                )
            sw.set_db(target)
        lines += self._gcu(
            title,
            ["localhost: verifying patch updates are reflected on ConfigDB.", "localhost patch application completed."],
        )
        return self._done("\n".join([*lines, "Patch applied successfully."]))

    def _failed(self, lines: list[str], message: str) -> Reply:
        return self._done(
            "\n".join(
                [
                    *lines,
                    f"Failed to apply patch due to: {message}",
                    "Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH",
                    'Try "config apply-patch -h" for help.',
                    "",
                    f"Error: {message}",
                ]
            ),
            1,
        )

    def replace(self, args: list[str]) -> Reply:
        sw = self.switch
        files = [a for a in args if not a.startswith("-")]
        raw = sw.files.get(files[0]) if len(files) == 1 else None
        if raw is None:
            return self._done("Failed to replace config\nError: target file not found", 1)
        try:
            target = json.loads(raw)
        except ValueError as exc:
            return self._done(f"Failed to replace config\nError: {exc}", 1)
        problem = validate(target)
        if problem:
            return self._done(f"Failed to replace config\nError: {problem}", 1)
        if "-d" not in args and "--dry-run" not in args:
            sw.set_db(target)
        return self._done("Config replaced successfully.")

    def cli_edit(self, sub: str, rest: list[str]) -> Reply:
        """``config interface mtu``, ``config vlan add``, ``config vlan member add``, ``config pfcwd ...``: each
        edits a copy of CONFIG_DB (:data:`CLI_EDITS`), which is validated, then committed."""
        sw = self.switch
        line = " ".join([sub, *rest])
        if sw.faults.rejects("config " + line):
            return self._done(f"Error: {line!r} is not permitted", 1)
        edit = next((fn for matches, fn in CLI_EDITS if matches(sub, rest)), None)
        if edit is None:
            return self._done(f"Usage: config {sub} [OPTIONS] COMMAND [ARGS]...\n\nError: No such command.", 2)
        db = copy.deepcopy(sw.db)
        try:
            edit(db, rest)
        except EditError as exc:
            return self._done(str(exc), exc.rc)
        problem = validate(db)
        if problem:
            return self._done(f"Error: {problem}", 1)
        sw.set_db(db)
        return self._done("")

    def cfggen(self, args: list[str], root: bool) -> Reply:
        """``sonic-cfggen -a JSON --write-to-db``: merge tables into CONFIG_DB (fields replace, keys add)."""
        if "--write-to-db" in args and not root:
            return self._done("Root privileges are required for this operation", 1)
        if "-a" not in args or "--write-to-db" not in args:
            return self._done("sonic-cfggen: the lab supports only `-a JSON --write-to-db`", 2)
        sw = self.switch
        text = args[args.index("-a") + 1]
        if sw.faults.rejects(text):
            return self._done("Error: the data is not permitted by the YANG model", 1)
        try:
            data = json.loads(text)
        except ValueError as exc:
            return self._done(f"sonic-cfggen: error: invalid JSON: {exc}", 2)
        db = copy.deepcopy(sw.db)
        for table, entries in data.items():
            for key, fields in entries.items():
                db.setdefault(table, {}).setdefault(key, {}).update(fields)
        problem = validate(db)
        if problem:
            return self._done(f"Error: {problem}", 1)
        sw.set_db(db)
        return self._done("")


def _is_watermark(args: list[str]) -> bool:
    """``show priority-group|queue watermark|persistent-watermark KIND``."""
    if len(args) != 3 or args[0] not in ("priority-group", "queue"):
        return False
    kinds = ("shared", "headroom") if args[0] == "priority-group" else ("unicast", "multicast")
    return args[1] in ("watermark", "persistent-watermark") and args[2] in kinds
