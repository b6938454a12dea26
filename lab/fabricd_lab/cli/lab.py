"""``fabricd lab up | down | status | drive``: SSH simulators of the inventory's switches on 127.0.0.1.

``lab vm ...`` (the Soft-RoCE VMs) is mounted from :mod:`fabricd_lab.cli.lab_vm` (its ``register_under(lab_app)``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from fabricd.cli.common import InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stderr, stdout
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd_lab import daemon
from fabricd_lab.faults import parse_fault
from fabricd_lab.latency import parse_latency

FaultOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fault",
        "-f",
        show_default=False,
        help="Inject a fault: DEVICE:KIND[=ARG], KIND one of disconnect-after-lines=N, reject-line=REGEX, "
        "commit-fails, slow-ms=N, auth-fail, swap-cables=PORT,PORT (a miswire), degrade-optic=PORT (repeatable).",
    ),
]

LatencyOpt = Annotated[
    str,
    typer.Option(
        "--latency",
        show_default=False,
        help="Make every switch answer like a real one: rtt_ms=N,command_ms=N,show_ms=N,commit_ms=N (any subset), "
        "or datacenter-unverified / remote-site-unverified (figures not measured on devices). Default: none.",
    ),
]


def _status_table(st: dict[str, Any]) -> Table:
    table = Table(title=f"fabricd lab ({'running, pid ' + str(st['pid']) if st['running'] else 'not running'})")
    for col in ("device", "platform", "address", "gNMI", "user", "password file", "faults"):
        table.add_column(col, overflow="fold")
    for dev in st["devices"]:
        gnmi = dev.get("gnmi_port")
        table.add_row(
            dev["name"],
            dev["platform"],
            f"{dev['host']}:{dev['port']}",
            str(gnmi) if gnmi else "-",
            dev["username"],
            dev["password_file"],
            ", ".join(dev.get("faults", [])),
        )
    return table


def build_lab_app() -> typer.Typer:
    lab_app = typer.Typer(
        name="lab",
        help="The switch lab: SSH simulators of SONiC, EOS, NX-OS and NVUE that fabricd drives for real.",
        no_args_is_help=True,
        rich_markup_mode="rich",
    )

    @lab_app.command("up")
    def up_cmd(
        inventory: InventoryArg = None,
        fault: FaultOpt = None,
        latency: LatencyOpt = "",
        output: OutputOpt = OutputFormat.TEXT,
    ) -> None:
        """Start one simulated switch per inventory switch on its mgmt address, in the background.

        Writes a random password and the lab's known_hosts lines into the files the inventory names
        (credentials.password_file and credentials.known_hosts; the lab inventory names them under
        ${FABRICD_STATE_DIR}/lab), so fabricd's commands log in with host keys verified. `fabricd lab down` stops
        it and removes them.

        [bold]Example[/]: fabricd lab up
        [bold]Example[/]: fabricd lab up inventory/lab --fault leaf2-eos:reject-line='^mtu' --fault spine1:slow-ms=200
        """
        faults = [parse_fault(f) for f in fault or ()]
        if latency:
            parse_latency(latency)  # a bad value is a usage error before anything starts
        fabric = load_inventory(inventory_path(inventory)).fabric
        if not fabric.switches:
            raise UsageError(
                "the inventory has no switches to simulate", hint="add switches, or pick another inventory"
            )
        st = daemon.up(fabric, faults, latency=latency)
        if output == OutputFormat.JSON:
            emit_json(st)
            return
        stdout().print(_status_table(st))
        devices = st["devices"]
        files = sorted({d["password_file"] for d in devices} | {d["known_hosts"] for d in devices})
        stdout().print(
            f"lab up: {len(devices)} switches; password and known_hosts in {', '.join(files)}", highlight=False
        )
        for env, pw in sorted({(d["password_env"], d["password_file"]) for d in devices if d.get("password_env")}):
            stdout().print(
                f'  the inventory reads the password from ${env}: export {env}="$(cat {pw})"', highlight=False
            )

    @lab_app.command("down")
    def down_cmd(output: OutputOpt = OutputFormat.TEXT) -> None:
        """Stop the lab started by `fabricd lab up` (only that process) and remove its state files.

        [bold]Example[/]: fabricd lab down
        """
        res = daemon.down()
        if output == OutputFormat.JSON:
            emit_json(res)
        elif res["stopped"]:
            stdout().print(f"lab stopped (pid {res['pid']})")
        else:
            stderr().print("no lab was running")

    @lab_app.command("status")
    def status_cmd(output: OutputOpt = OutputFormat.TEXT) -> None:
        """Show the running lab: each switch's platform, address, user and password file.

        [bold]Example[/]: fabricd lab status --output json
        """
        st = daemon.status()
        if output == OutputFormat.JSON:
            emit_json(st)
            return
        stdout().print(_status_table(st))

    @lab_app.command("drive")
    def drive_cmd(
        device: Annotated[str, typer.Argument(help="Lab switch name.")],
        action: Annotated[str, typer.Argument(help=f"One of: {', '.join(daemon.DRIVE_ACTIONS)}.")],
        port: Annotated[str, typer.Option("--port", "-p", help="Switch port, e.g. Ethernet0.")] = "",
        priority: Annotated[int, typer.Option("--priority", min=0, max=7, help="Priority / queue.")] = 3,
        packets: Annotated[int, typer.Option("--packets", min=0, help="Packets or pause frames to count.")] = 1000,
        direction: Annotated[str, typer.Option("--direction", help="rx or tx (pause, storms).")] = "rx",
        fraction: Annotated[
            float, typer.Option("--fraction", min=0.01, max=1.0, help="Share of time paused during a storm.")
        ] = 1.0,
        size: Annotated[
            int, typer.Option("--bytes", min=0, help="Buffer bytes in use (buffer, headroom: the watermarks).")
        ] = 0,
        output: OutputOpt = OutputFormat.TEXT,
    ) -> None:
        """Drive a lab switch's counters: traffic, pause, drops, ECN marks, PFC storms (watchdog runs on them).

        [bold]Example[/]: fabricd lab drive leaf1-sonic storm-start --port Ethernet0 --priority 3
        [bold]Example[/]: fabricd lab drive leaf2-eos traffic --port Ethernet1 --priority 3 --packets 50000
        [bold]Example[/]: fabricd lab drive leaf1-sonic headroom --port Ethernet0 --priority 3 --bytes 75000
        """
        if action not in daemon.DRIVE_ACTIONS:
            raise UsageError(f"unknown action {action!r}", hint=f"use one of: {', '.join(daemon.DRIVE_ACTIONS)}")
        if direction not in ("rx", "tx"):
            raise UsageError(f"--direction {direction!r}: expected rx or tx")
        res = daemon.control(
            {
                "op": "drive",
                "device": device,
                "action": action,
                "port": port,
                "priority": priority,
                "packets": packets,
                "direction": direction,
                "fraction": fraction,
                "bytes": size,
            }
        )
        if output == OutputFormat.JSON:
            emit_json(res)
        else:
            stdout().print(f"{device}: {action} done")

    from fabricd_lab.cli import lab_vm

    lab_vm.register_under(lab_app)
    return lab_app


def register(app: typer.Typer) -> None:
    app.add_typer(build_lab_app(), name="lab")
