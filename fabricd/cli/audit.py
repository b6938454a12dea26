"""``fabricd audit host|switch|cabling``: live state against intent, as checks with codes and fix hints (text,
JSON, JUnit).

Exit codes: 0 compliant, 1 findings, 2 bad input, 3 switch unreachable (a NIC or file the intent names but the host
lacks is a finding, not bad input).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from fabricd.audit.cabling import evaluate as evaluate_cabling
from fabricd.audit.cabling import read_all, read_host_lldp, unreadable
from fabricd.audit.switch import (
    AuditOptions,
    ReadBackFactory,
    audit_switch,
    driver_factory,
    reachable,
    replay_factory,
)
from fabricd.deploy.targets import select_targets
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd.model.checks import Report
from fabricd.usecases import host as host_use

from .common import (
    ExitCode,
    InventoryArg,
    OutputFormat,
    OutputOpt,
    TemplatesDirOpt,
    inventory_path,
    stderr,
)
from .deploy_common import (
    AcceptNewHostKeysOpt,
    InsecureOpt,
    KnownHostsOpt,
    ReadTimeoutOpt,
    SessionLogOpt,
    SshFlags,
    switch_reach,
)
from .host import HostOpt, NetnsOpt, RootOpt, SkipOpt, host_target
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
from .report import finish

JunitOpt = Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here (one testcase per check).")]
ReplayOpt = Annotated[
    Path | None,
    typer.Option(
        "--replay",
        envvar="FABRICD_SWITCH_REPLAY",
        show_default=False,
        help="Read the switch from a `fabricd capture` folder instead of over SSH (pass the inventory it was taken "
        "with).",
    ),
]
SwitchOpt = Annotated[
    list[str] | None, typer.Option("--device", "-d", show_default=False, help="Switch to audit (repeatable).")
]

HostLldpOpt = Annotated[
    Path | None,
    typer.Option(
        "--host-lldp",
        show_default=False,
        help="A folder of hosts' `lldpctl -f json` outputs, one <host>.json per host: their ends are checked too "
        "(without it, host cables are checked from the switch side).",
    ),
]
CabConcurrencyOpt = Annotated[
    int, typer.Option("--concurrency", min=1, max=256, help="Switches read at once (one SSH session each).")
]


def _switch_reader(replay: Path | None, ssh: SshFlags) -> ReadBackFactory:
    """How the audit reads switches: from a `fabricd capture` folder (--replay), else over SSH."""
    opts = switch_reach(AuditOptions, ssh)
    return replay_factory(replay) if replay is not None else driver_factory(opts)


def _finish(reports: Sequence[Report], output: OutputFormat, junit: Path | None, unread: list[str]) -> None:
    """Say why each device that could not be read was not (``unread``), then report; exit 3 when there was one
    (over the findings' exit 1), else as :func:`finish` does."""
    for line in unread:
        stderr().print(f"[bold red]error:[/] {escape(line)}", highlight=False)
    try:
        finish(list(reports), output, junit)
    except typer.Exit:
        if not unread:
            raise
    if unread:
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def audit_host_cmd(
    inventory: InventoryArg = None,
    host: HostOpt = "",
    root: RootOpt = Path("/"),
    netns: NetnsOpt = None,
    skip: SkipOpt = "",
    junit: JunitOpt = None,
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
    """Compare this host with its intent: trust, PFC, ETS, DSCP map, RoCE ToS/mode, CNP, DCQCN enables and
    parameters, MTU (and vs the switch port), VLAN, address, global pause, link, RoCEv2 GID.
    Exit 0 compliant, 1 findings, 2 bad input.

    [bold]Example[/]: fabricd audit host --host gpu1 --junit audit.xml
    [bold]Example[/]: fabricd audit host inventory/lab --host gpu1 --root /tmp/replay --output json
    [bold]Example[/]: fabricd audit host --hosts group:gpu --junit fleet.xml   (over SSH)

    With --hosts, runs `fabricd audit host` on each selected host over SSH (host keys verified): one JUnit
    testsuite per host; exit 1 findings, 3 when a host failed (unreachable, key refused).
    """
    if hosts is not None:
        run_fanout("audit", inventory, hosts, FanoutFlags.of(locals()), skip=skip, output=output, junit=junit)
        return
    report = host_use.audit_host(host_target(inventory, host, root, skip, netns))
    finish([report], output, junit)


def audit_switch_cmd(
    inventory: InventoryArg = None,
    device: SwitchOpt = None,
    junit: JunitOpt = None,
    templates_dir: TemplatesDirOpt = None,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    accept_new_host_keys: AcceptNewHostKeysOpt = None,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    replay: ReplayOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Read a switch back over SSH and check it against its intent: drift from the rendered config, trust,
    DSCP map, PFC per port, ECN on the lossless queue, PFC watchdog on and its timers, MTU, and watchdogs
    stuck (storm detected, never restored). Read-only.
    Exit 0 compliant, 1 findings, 2 bad input, 3 switch unreachable.

    [bold]Example[/]: fabricd audit switch --device leaf1-sonic --junit audit.xml
    [bold]Example[/]: fabricd audit switch inventory/lab --device leaf2-eos --device leaf3-nxos --output json
    [bold]Example[/]: fabricd audit switch inventory/lab --device leaf3-nxos --replay /tmp/cap (a `fabricd
    capture` folder instead of SSH)
    """
    if not device:
        raise UsageError(
            "audit switch: --device is missing",
            hint="name the switch to audit, e.g. `fabricd audit switch --device leaf1-sonic` (repeatable)",
        )
    fabric = load_inventory(inventory_path(inventory)).fabric
    factory = _switch_reader(replay, SshFlags.of(locals()))
    reports = [audit_switch(fabric, sw, factory, templates_dir=templates_dir) for sw in select_targets(fabric, device)]
    down = [f for r in reports if not reachable(r) for c in r.checks for f in c.findings if c.code == "SW-REACH"]
    _finish(reports, output, junit, [str(f.got) for f in down])


def audit_cabling_cmd(
    inventory: InventoryArg = None,
    device: SwitchOpt = None,
    junit: JunitOpt = None,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    accept_new_host_keys: AcceptNewHostKeysOpt = None,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    replay: ReplayOpt = None,
    host_lldp: HostLldpOpt = None,
    concurrency: CabConcurrencyOpt = 8,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Read every switch's LLDP neighbours and check them against the inventory's cables (`links:` and each
    NIC's `peer`): miswired cables with the fix (a swap is one finding), missing and unexpected neighbours.
    Read-only. Exit 0 clean, 1 findings, 2 bad input, 3 a device could not be read.

    [bold]Example[/]: fabricd audit cabling --junit cabling.xml
    [bold]Example[/]: fabricd audit cabling inventory/lab --replay /tmp/cap --output json (a `fabricd capture`
    folder instead of SSH)
    [bold]Example[/]: fabricd audit cabling --host-lldp /tmp/lldp (gpu1.json holds gpu1's `lldpctl -f json`)
    """
    fabric = load_inventory(inventory_path(inventory)).fabric
    if host_lldp is not None and not host_lldp.is_dir():
        raise UsageError(
            f"--host-lldp {host_lldp}: not a folder",
            hint="give a folder holding <host>.json files, each a host's `lldpctl -f json` output",
        )
    factory = _switch_reader(replay, SshFlags.of(locals()))
    observed = read_all(select_targets(fabric, device or ()), factory, concurrency=concurrency)
    if host_lldp is not None:
        observed += [
            read_host_lldp(h.name, host_lldp / f"{h.name}.json")
            for h in fabric.hosts
            if (host_lldp / f"{h.name}.json").exists()
        ]
    report = evaluate_cabling(fabric, observed, hosts_read=host_lldp is not None)
    _finish([report], output, junit, [f"{f.object}: {f.got}" for f in unreadable(report)])


def register(app: typer.Typer) -> None:
    audit_app = typer.Typer(help="Audit hosts and switches against the inventory (for CI).", no_args_is_help=True)
    app.add_typer(audit_app, name="audit")
    from .audit_fleet import register_fleet

    register_fleet(audit_app)
    audit_app.command("host")(audit_host_cmd)
    audit_app.command("cabling")(audit_cabling_cmd)
    audit_app.command("switch")(audit_switch_cmd)
