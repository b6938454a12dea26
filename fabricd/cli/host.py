"""``fabricd host plan|apply|restore|install-unit``: apply a host's RoCE intent on the host itself.

Backends (fabricd.hosts): netlink (links, MTU, VLAN, address, pause), dcb (trust, PFC, ETS, DSCP map) and
sysfs (RoCE ToS/mode, traffic_class, CNP, DCQCN). ``apply`` saves a snapshot of everything it will touch under
the state directory first; any failure restores it, and ``fabricd host restore`` brings it back later.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.table import Table

from fabricd.errors import HostBackendError, UsageError
from fabricd.hosts.base import HostApplyReport, Snapshot
from fabricd.hosts.factory import close_backends, open_backends
from fabricd.hosts.netns import NETNS_RUN_DIR
from fabricd.intent.host import HostIntent, HostPlan, host_intent
from fabricd.inventory import load_inventory
from fabricd.safepath import write_inside
from fabricd.usecases import host as host_use
from fabricd.usecases.host import HostTarget

from .common import (
    ExitCode,
    InventoryArg,
    OutputFormat,
    OutputOpt,
    check_root,
    emit_json,
    inventory_path,
    stderr,
    stdout,
)
from .host_fanout import (
    ConnectTimeoutOpt,
    FanConcurrencyOpt,
    FanoutFlags,
    HostInsecureOpt,
    HostKnownHostsOpt,
    HostsOpt,
    IdentityOpt,
    MaxFailuresOpt,
    RemoteFabricdOpt,
    RemoteInventoryOpt,
    SshUserOpt,
    run_fanout,
)

SKIP_NAMES = ("vlan", "pause", "netlink", "dcb", "sysfs")

HostOpt = Annotated[str, typer.Option("--host", envvar="FABRICD_HOST", help="Host name as in the inventory.")]
RootOpt = Annotated[
    Path,
    typer.Option("--root", envvar="FABRICD_ROOT", help="Root of /sys (a fake or replay tree in tests). Default /."),
]
NetnsOpt = Annotated[
    str | None,
    typer.Option("--netns", envvar="FABRICD_NETNS", help="Apply netlink and DCB inside this network namespace."),
]
SkipOpt = Annotated[
    str,
    typer.Option(
        "--skip",
        help=f"Comma list of parts to leave alone: {', '.join(SKIP_NAMES)}."
        " --skip vlan puts the address on the untagged netdev.",
    ),
]


def parse_skip(text: str) -> frozenset[str]:
    names = frozenset(s.strip() for s in text.split(",") if s.strip())
    bad = sorted(names - set(SKIP_NAMES))
    if bad:
        raise UsageError(f"--skip: unknown part {bad[0]!r}", hint=f"expected a comma list of {', '.join(SKIP_NAMES)}")
    return names


def load_host_intent(inventory: Path | None, host: str, writes: str | None = None) -> HostIntent:
    path = inventory_path(inventory, writes=writes)
    fabric = load_inventory(path).fabric
    try:
        return host_intent(fabric, host)
    except KeyError:
        known = ", ".join(h.name for h in fabric.hosts) or "none"
        raise UsageError(
            f"--host: no host {host!r} in the inventory {path}", hint=f"expected one of: {known}"
        ) from None


def print_plan(plan: HostPlan, title: str) -> None:
    table = Table(title=title)
    for col in ("backend", "object", "path", "current", "desired", "check"):
        table.add_column(col, overflow="fold")
    for s in plan.steps:
        table.add_row(s.backend.value, s.object, s.path, json.dumps(s.current), json.dumps(s.desired), s.check)
    out = stdout()
    out.print(table)
    for pre in plan.prerequisites:
        out.print(
            f"{pre.object}: needs {pre.what} (not changed by `host apply`; check: {pre.check or 'manual'}; "
            f"set with: {pre.command})",
            markup=False,
        )
    if not plan.steps:
        out.print(f"{plan.host}: nothing to do, the host matches its intent")


def host_target(
    inventory: Path | None, host: str, root: Path, skip: str, netns: str | None = None, writes: str | None = None
) -> HostTarget:
    """The use-case target from the command line: checks --host, --root, --netns and --skip, loads the intent."""
    if not host:
        no_host()
    check_root(root)
    if netns is not None and not (Path(NETNS_RUN_DIR) / netns).exists():
        raise UsageError(
            f"--netns {netns}: no such network namespace ({NETNS_RUN_DIR}/{netns})",
            hint=f"create it with `ip netns add {netns}` or drop --netns",
        )
    skips = parse_skip(skip)
    return HostTarget(load_host_intent(inventory, host, writes), root=root, netns=netns, skip=skips)


def no_host() -> NoReturn:
    raise UsageError("--host is required", hint="name the host as in the inventory, e.g. --host gpu1")


def plan_cmd(
    inventory: InventoryArg = None,
    host: HostOpt = "",
    root: RootOpt = Path("/"),
    netns: NetnsOpt = None,
    skip: SkipOpt = "",
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Show what `host apply` would change: each step with backend, object, path, current and desired value.

    [bold]Example[/]: fabricd host plan --host gpu1
    [bold]Example[/]: fabricd host plan inventory/lab --host gpu1 --netns gpu1 --root /tmp/fake --output json
    """
    target = host_target(inventory, host, root, skip, netns)
    plan = host_use.plan_host(target)
    if output == OutputFormat.JSON:
        emit_json(plan.model_dump(mode="json"))
    else:
        print_plan(plan, f"fabricd host plan {target.intent.host}")


def apply_cmd(
    inventory: InventoryArg = None,
    host: HostOpt = "",
    root: RootOpt = Path("/"),
    netns: NetnsOpt = None,
    skip: SkipOpt = "",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and stop.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    lock_wait: Annotated[
        float,
        typer.Option(
            "--lock-wait",
            min=0.0,
            help="Seconds to wait for the host's apply lock (held by `fabricd "
            "agent` while it applies) before giving up with exit 3.",
        ),
    ] = 30.0,
    hosts: HostsOpt = None,
    ssh_user: SshUserOpt = None,
    identity: IdentityOpt = None,
    known_hosts: HostKnownHostsOpt = None,
    insecure: HostInsecureOpt = False,
    concurrency: FanConcurrencyOpt = 16,
    max_failures: MaxFailuresOpt = None,
    remote_inventory: RemoteInventoryOpt = "/etc/fabricd/inventory",
    remote_fabricd: RemoteFabricdOpt = "fabricd",
    connect_timeout: ConnectTimeoutOpt = 10.0,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Apply the host intent: netlink, then DCB, then sysfs/configfs. A snapshot is saved first; on any
    failure everything already changed is restored (exit 3). Exit 0 when applied or nothing to do.

    INVENTORY must be named (or FABRICD_INVENTORY set): host apply never picks one by itself (exit 2).

    [bold]Example[/]: fabricd host apply /etc/fabricd/inventory --host gpu1 --yes
    [bold]Example[/]: fabricd host apply ./fabric --host gpu1 --netns gpu1 --skip vlan,dcb --dry-run
    [bold]Example[/]: fabricd host apply ./fabric --hosts 'gpu*' --max-failures 2 --concurrency 32   (over SSH)

    With --hosts, runs `fabricd host apply --yes` on each selected host over SSH (host keys verified, at most
    --concurrency at a time); the first failure (or --max-failures) stops starting new hosts. Exit 3 when a
    host failed or was skipped.
    """
    if hosts is not None:
        if dry_run:
            raise UsageError(
                "--dry-run with --hosts is not supported",
                hint="run `fabricd host plan` on a host, or `fabricd audit host --hosts SEL`",
            )
        run_fanout("apply", inventory, hosts, FanoutFlags.of(locals()), skip=skip, output=output)
        return
    target = host_target(inventory, host, root, skip, netns, writes="host apply")
    if dry_run:
        plan = host_use.plan_host(target)
        if output == OutputFormat.JSON:
            emit_json(plan.model_dump(mode="json"))
        else:
            print_plan(plan, f"fabricd host apply {target.intent.host} (plan)")
        return
    result = host_use.apply_host(
        host_use.HostApplyRequest(
            target,
            holder="fabricd host apply",
            lock_wait_s=lock_wait,
            confirm=None if yes else lambda plan: _confirm(plan, output),
        )
    )
    if not result.confirmed:
        raise typer.Exit(ExitCode.OK)
    if result.report is None:  # nothing to do
        if not yes and output == OutputFormat.TEXT:
            print_plan(result.plan, f"fabricd host apply {target.intent.host} (plan)")
        return
    report = result.report
    if result.snapshot is not None:
        stderr().print(f"snapshot saved: {result.snapshot}")
    if output == OutputFormat.JSON:
        emit_json(report.to_dict() | {"snapshot": str(result.snapshot)})
    else:
        print_apply(report)
    if not report.ok:
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def _confirm(plan: HostPlan, output: OutputFormat) -> bool:
    """Without --yes: show the plan (text) and ask on a terminal; refuse without one."""
    if output == OutputFormat.TEXT:
        print_plan(plan, f"fabricd host apply {plan.host} (plan)")
    if not sys.stdin.isatty():
        raise UsageError(
            "refusing to change the host without confirmation",
            hint="add --yes (non-interactive), or --dry-run to only see the plan",
        )
    return typer.confirm(f"apply {len(plan.steps)} step(s) to {plan.host}?")


def print_apply(report: HostApplyReport) -> None:
    out = stdout()
    for r in report.results:
        out.print(
            f"{r.backend.value}: {len(r.applied)} step(s) applied"
            + ("" if r.ok else f", FAILED at {r.failed.step.object} {r.failed.step.path}" if r.failed else "")
        )
    if not report.ok:
        failed = next(r.failed for r in report.results if r.failed)
        stderr().print(f"[bold red]error:[/] {failed.error}")
        stderr().print(
            "restored the snapshot: "
            + (
                "complete"
                if not report.rollback_errors and all(r.restored or r.ok for r in report.results)
                else "INCOMPLETE: "
                + "; ".join(report.rollback_errors + [e for r in report.results for e in r.restore_errors])
            )
        )


def restore_cmd(
    inventory: InventoryArg = None,
    host: HostOpt = "",
    root: RootOpt = Path("/"),
    netns: NetnsOpt = None,
    snapshot: Annotated[
        Path | None, typer.Option(help="Snapshot file (default: the last one `host apply` saved).")
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Write a saved snapshot back: the host returns to what it was before the last `host apply`.

    [bold]Example[/]: fabricd host restore --host gpu1
    """
    target = host_target(inventory, host, root, "", netns)
    intent = target.intent
    path = snapshot or host_use.snapshot_dir(intent.host) / "last.json"
    try:
        data = json.loads(path.read_text())
        snaps = [Snapshot.model_validate(s) for s in data["snapshots"]]
    except FileNotFoundError:
        raise UsageError(f"no snapshot at {path}", hint="run `fabricd host apply` first, or give --snapshot") from None
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read the snapshot: {exc.strerror or exc}",
            hint="give --snapshot a file written by `fabricd host apply`",
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a fabricd host snapshot ({exc})") from None
    backends = {b.backend: b for b in open_backends(root, netns)}
    errors: list[str] = []
    try:
        for snap in snaps:
            b = backends.get(snap.backend)
            if b is None:
                errors.append(f"{snap.backend.value}: no such backend here (replay root?)")
                continue
            errors += b.restore(snap)
    finally:
        close_backends(list(backends.values()))
    if output == OutputFormat.JSON:
        emit_json({"host": intent.host, "snapshot": str(path), "ok": not errors, "errors": errors})
    else:
        stdout().print(f"{intent.host}: restored {path}" if not errors else f"{intent.host}: restore incomplete")
        for e in errors:
            stderr().print(f"[bold red]error:[/] {e}")
    if errors:
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def install_unit_cmd(
    inventory: InventoryArg = None,
    host: HostOpt = "",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the files here instead of /etc/systemd/system and /etc/udev/rules.d."),
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Write a systemd unit that re-applies the host intent at boot, and a udev rule that re-applies it when
    the NIC driver reloads (these settings are not persistent across reboots or driver restarts).

    [bold]Example[/]: fabricd host install-unit /etc/fabricd/inventory --host gpu1 && systemctl enable fabricd-host
    """
    inv = inventory_path(inventory, writes="host install-unit").resolve()
    intent = load_host_intent(inv, host) if host else no_host()
    files = unit_files(intent, inv)
    unit_dir = out if out is not None else Path("/etc/systemd/system")
    rule_dir = out if out is not None else Path("/etc/udev/rules.d")
    written = []
    for name, text in files.items():
        folder = unit_dir if name.endswith(".service") else rule_dir
        target = folder / name
        try:
            target = write_inside(folder, name, text)
        except OSError as exc:
            hint = "give --out a directory you can write to" if out is not None else "run as root, or use --out DIR"
            raise HostBackendError("write", str(target), exc.strerror or str(exc), errno=exc.errno, hint=hint) from exc
        written.append(str(target))
    if output == OutputFormat.JSON:
        emit_json({"host": intent.host, "written": written})
    else:
        for w in written:
            stdout().print(f"wrote {w}")
        stdout().print(
            "enable with: systemctl daemon-reload && systemctl enable --now fabricd-host.service && "
            "udevadm control --reload"
        )


def register(app: typer.Typer) -> None:
    host_app = typer.Typer(
        help="Apply, plan and restore a host's RoCE settings (run on the host itself).", no_args_is_help=True
    )
    app.add_typer(host_app, name="host")
    host_app.command("plan")(plan_cmd)
    host_app.command("apply")(apply_cmd)
    host_app.command("restore")(restore_cmd)
    host_app.command("install-unit")(install_unit_cmd)


def _unit_arg(text: str) -> str:
    """One ExecStart argument, double-quoted with systemd's escapes: a path with a space stays one argument, and
    ``%`` (specifiers) and ``$`` (environment variables) are written literally (systemd.service(5), "Command
    lines"; systemd.unit(5), "Specifiers")."""
    if not text.isprintable():
        raise UsageError(
            f"cannot write {text!r} into a systemd unit: it holds a control character or line break",
            hint="move the inventory to a path without control characters",
        )
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def unit_files(intent: HostIntent, inventory: Path) -> dict[str, str]:
    """The systemd unit and udev rule that re-apply ``intent`` at boot and on NIC driver (re)load."""
    exe = shutil.which("fabricd") or "/usr/local/bin/fabricd"
    netdevs = " ".join(n.netdev for n in intent.nics)
    unit = f"""# Written by `fabricd host install-unit --host {intent.host}`.
# RoCE NIC settings (trust, PFC, ETS, DSCP map, RoCE ToS, DCQCN) are not persistent: re-apply them at boot,
# after the NIC driver and RDMA stack are up, as the NVIDIA nic-configuration-operator does.
[Unit]
Description=fabricd: apply the RoCE host intent of {intent.host} ({netdevs})
Wants=network-online.target
After=network-online.target openibd.service rdma-load-modules@rdma.service sys-kernel-config.mount

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart={_unit_arg(exe)} host apply {_unit_arg(str(inventory))} --host {intent.host} --yes
# a udev-triggered restart re-applies after a driver reload
Restart=no

[Install]
WantedBy=multi-user.target
"""
    rules = [f"# Written by `fabricd host install-unit --host {intent.host}`: re-apply after a NIC driver reload."]
    for n in intent.nics:
        rules.append(
            f'ACTION=="add", SUBSYSTEM=="net", KERNEL=="{n.netdev}", '
            'RUN+="/usr/bin/systemctl --no-block restart fabricd-host.service"'
        )
        if n.rdma_device:
            rules.append(
                f'ACTION=="add", SUBSYSTEM=="infiniband", KERNEL=="{n.rdma_device}", '
                'RUN+="/usr/bin/systemctl --no-block restart fabricd-host.service"'
            )
    return {"fabricd-host.service": unit, "90-fabricd-host.rules": "\n".join(rules) + "\n"}
