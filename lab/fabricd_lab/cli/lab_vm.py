"""``fabricd lab vm build | up | down | status | exec``: the Soft-RoCE lab (two Debian VMs with rdma_rxe).

This module provides the Typer sub-app ``vm_app``; the ``lab`` group (lab/fabricd_lab/cli/lab.py) mounts it with
``lab_app.add_typer(vm_app, name="vm")``.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

import typer
from rich.table import Table

from fabricd.cli.common import InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stderr, stdout
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd_lab.vm import image as vm_image
from fabricd_lab.vm import instance as vm_instance

vm_app = typer.Typer(
    name="vm",
    help="Soft-RoCE lab: two Debian VMs (qemu) with rdma_rxe on one virtual wire, playing two inventory hosts.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

NameOpt = Annotated[str, typer.Option("--name", envvar="FABRICD_VM_NAME", help="Lab instance name.")]
MirrorOpt = Annotated[
    str | None,
    typer.Option(
        "--mirror",
        envvar="FABRICD_VM_MIRROR",
        help="Debian mirror URL. Default: the one this machine's apt sources use.",
    ),
]


def _progress() -> Any:
    t0 = time.monotonic()
    err = stderr()

    def say(msg: str) -> None:
        err.print(f"[dim]\\[{time.monotonic() - t0:6.1f}s][/] {msg}", highlight=False)

    return say


@vm_app.command("build")
def build_cmd(
    output: OutputOpt = OutputFormat.TEXT,
    mirror: MirrorOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when the image is cached.")] = False,
) -> None:
    """Build (or reuse) the cached lab image: Debian's kernel, rdma-core, perftest, pyverbs and fabricd.

    The first build takes about 4.5 min and prints progress; later ones reuse the cached image (or the cached
    .debs, ~100 s). Needs root (debootstrap, chroot). The cache lives in $FABRICD_STATE_DIR/vm.

    [bold]Example[/]: sudo fabricd lab vm build
    """
    recipe = vm_image.default_recipe(mirror=mirror)
    img = vm_image.build_image(recipe, progress=_progress(), force=force)
    data = {
        "image": str(img.dir),
        **{k: img.manifest.get(k) for k in ("key", "kernel", "built_at", "timings")},
        "packages": img.manifest.get("packages"),
    }
    if output == OutputFormat.JSON:
        emit_json(data)
    else:
        stdout().print(f"image {data['key']} ready: {img.dir} (kernel {data['kernel']}, built {data['built_at']})")


@vm_app.command("up")
def up_cmd(
    inventory: InventoryArg = None,
    host: Annotated[
        list[str] | None,
        typer.Option(
            "--host",
            help="Inventory host a VM plays (give twice). Default: the first RDMA host and one on another leaf.",
        ),
    ] = None,
    name: NameOpt = vm_instance.DEFAULT_NAME,
    accel: Annotated[
        str | None,
        typer.Option(
            "--accel", envvar="FABRICD_VM_ACCEL", help="kvm or tcg. Default: KVM if it really boots the kernel here."
        ),
    ] = None,
    memory: Annotated[int, typer.Option("--memory", min=512, max=8192, help="MiB per VM.")] = 1024,
    cpus: Annotated[int, typer.Option("--cpus", min=1, max=8, help="vCPUs per VM (1 is fastest on 2 cores).")] = 1,
    wire: Annotated[
        str,
        typer.Option(
            "--wire",
            help="stream: unix socketpair, lossless (back-pressure like a PFC link); udp: datagrams on "
            "127.0.0.1 that drop under load (rxe's go-back-N counters then move).",
        ),
    ] = "stream",
    mirror: MirrorOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Boot the two endpoints: rxe on each NIC, the RDMA VLAN and addresses from the inventory.

    Builds the image first when it is not cached. A second 'up' while running is a no-op.

    [bold]Example[/]: fabricd lab vm up
    [bold]Example[/]: fabricd init --example softroce ./vms && fabricd lab vm up ./vms
    [bold]Example[/]: fabricd lab vm up --host gpu1 --host gpu5
    """
    inv = load_inventory(inventory_path(inventory))
    recipe = vm_image.default_recipe(mirror=mirror)
    if wire not in ("stream", "udp"):
        raise UsageError(f"unknown --wire {wire!r}", hint="use --wire stream or --wire udp")
    vm = vm_instance.VmOptions(accel=accel, memory_mib=memory, cpus=cpus, wire=wire)
    vm_instance.up(inv, recipe=recipe, hosts=host or (), name=name, vm=vm, progress=_progress())
    _print_status(vm_instance.status(name), output)


@vm_app.command("down")
def down_cmd(name: NameOpt = vm_instance.DEFAULT_NAME, output: OutputOpt = OutputFormat.TEXT) -> None:
    """Power both lab VMs off (they are CPU-heavy under TCG: do not leave them running).

    [bold]Example[/]: fabricd lab vm down
    """
    ended = vm_instance.down(name)
    if output == OutputFormat.JSON:
        emit_json({"name": name, "stopped": ended})
    elif not ended:
        stdout().print(f"lab VMs '{name}' were never started")
    else:
        stdout().print("; ".join(f"{role}: {how}" for role, how in ended.items()))


@vm_app.command("status")
def status_cmd(name: NameOpt = vm_instance.DEFAULT_NAME, output: OutputOpt = OutputFormat.TEXT) -> None:
    """Show the lab VMs: accelerator, endpoints, rxe port state, timings and log paths. Exit 1 when not running.

    [bold]Example[/]: fabricd lab vm status --output json
    """
    st = vm_instance.status(name)
    _print_status(st, output)
    if st["state"] != "running":
        raise typer.Exit(1)


@vm_app.command(
    "exec",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def exec_cmd(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="Endpoint: a, b, or the inventory host name it plays.")],
    name: NameOpt = vm_instance.DEFAULT_NAME,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds before the command is killed.")] = 300.0,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Run a command in a lab VM as root (through qemu-guest-agent: no login). Exits with the command's exit code.

    [bold]Example[/]: fabricd lab vm exec a -- rdma link show
    [bold]Example[/]: fabricd lab vm exec gpu3 -- sh -c 'cat /sys/class/infiniband/*/ports/1/hw_counters/rcvd_pkts'
    """
    argv = [a for a in ctx.args if a != "--"] if ctx.args[:1] == ["--"] else list(ctx.args)
    r = vm_instance.exec_in(target, argv, name=name, timeout_s=timeout)
    if output == OutputFormat.JSON:
        emit_json(
            {
                "target": target,
                "argv": list(r.argv),
                "rc": r.rc,
                "stdout": r.stdout,
                "stderr": r.stderr,
                "seconds": r.seconds,
            }
        )
    else:
        sys.stdout.write(r.stdout)
        sys.stdout.flush()
        sys.stderr.write(r.stderr)
    raise typer.Exit(r.rc)


def _print_status(st: dict[str, Any], output: OutputFormat) -> None:
    if output == OutputFormat.JSON:
        emit_json(st)
        return
    out = stdout()
    if st["state"] == "never started":
        out.print(f"lab VMs '{st['name']}': never started (run 'fabricd lab vm up')")
        return
    out.print(f"lab VMs '{st['name']}': [bold]{st['state']}[/], {st['accel'].upper()} ({st['accel_reason']})")
    table = Table(show_lines=False)
    for col in ("", "host", "address", "on", "rxe", "port", "qemu", "agent"):
        table.add_column(col, overflow="fold")
    for ep in st["endpoints"]:
        port = str(ep.get("rdma_port_state", "-")).split(": ")[-1]
        table.add_row(
            ep["role"],
            ep["host"],
            ep["ip"],
            ep["ip_netdev"],
            ep["rdma_device"],
            port,
            f"{ep['pid']}{'' if ep['qemu_alive'] else ' (dead)'}",
            str(ep.get("agent", "-")),
        )
    out.print(table)
    timings = ", ".join(f"{k} {v}" for k, v in st.get("timings", {}).items())
    out.print(f"wire: {st['wire']}; timings: {timings or '-'}")
    out.print(f"run dir: {st['run_dir']}; image: {st['image']}")


def register_under(lab_app: typer.Typer) -> None:
    """Mount ``vm`` under the ``lab`` group (one line in lab/fabricd_lab/cli/lab.py)."""
    lab_app.add_typer(vm_app, name="vm")
