"""The ``fabricd`` entry point. Each command lives in its own module, imported the first time it is used.

``fabricd --help`` lists every command from the table below without importing any command module, so that it
(and ``fabricd validate``, which imports only the inventory and intent layers) starts without loading netmiko,
paramiko, pyroute2 or asyncssh. A command's module is imported when the command runs, when its own ``--help``
is asked for, or when a shell completes its options. tests/unit/test_cli_lazy.py checks that every entry's help
line is the command's own (its docstring's first paragraph) and which modules each start imports;
bench/cli.py times it.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click as click  # typer >= 0.24 carries its own click
from typer.core import TyperCommand, TyperGroup

from fabricd import __version__

from .common import run_guarded
from .plugins import ELSEWHERE, missing_plugin_message, plugin_commands

# name -> (module under fabricd.cli, the one-line help `fabricd --help` shows). The module defines
# ``register(app: typer.Typer) -> None`` and registers the command (or command group) of that name on ``app``.
# Other distributions add rows through entry points (fabricd.cli.plugins): fabricd-lab's lab, demo and report.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "init",
        "Write a starting inventory into an empty directory: the lab fabric, or one of the shipped "
        "examples (--example).",
    ),
    "docs": ("docs", "Read the guides that ship with fabricd: list them, or print one as Markdown."),
    "schema": ("schema", "Print the JSON Schema of the inventory (draft 2020-12)."),
    "validate": (
        "validate",
        "Check an inventory: every problem at once, errors and warnings, each with file:line, "
        "a dotted path, expected vs got and a fix. Includes the PFC deadlock analysis (cycles "
        "of lossless buffer dependencies over the ECMP shortest paths); --fail-links N repeats "
        "it for N-link failures.",
    ),
    "show": (
        "show",
        "Show the inventory after inheritance: the policy, switches, hosts (one row per NIC) and links. "
        "JSON is the merged model, every default filled in. Exit 2 if the inventory does not load.",
    ),
    "headroom": (
        "headroom",
        "PFC headroom of one lossless priority on one port (SONiC's formula): what the switch "
        "must absorb after it sends XOFF. Shows every term in bytes.",
    ),
    "doctor": (
        "doctor",
        "One table: each capability fabricd can use, the features that need it, whether this "
        "machine has it, and how to get it.",
    ),
    "render": (
        "render",
        "Render RoCE-ready configs for every switch (SONiC, Arista EOS, Cisco NX-OS, Cumulus NVUE) and host.",
    ),
    "gids": (
        "gids",
        "List the GID table of every RDMA port: device, port, index, GID, IPv4, RoCE version and netdev "
        "(the show_gids equivalent). Pick the RoCE v2 GID of your RDMA address for perftest -x / "
        "NCCL_IB_GID_INDEX.",
    ),
    "watch": (
        "watch",
        "Watch for PFC storms, lossless drops and stuck switch watchdogs; print each event as it happens.",
    ),
    "serve": (
        "serve",
        "Run fabricd as a service: host exporter, switch poller, PFC storm watchdog, drift audit, and "
        "/metrics, /healthz, /status, /events on one loopback port. Stops cleanly on SIGTERM.",
    ),
    "agent": (
        "agent",
        "Keep this host's RoCE settings as the intent says. Reconciles at start, when a NIC or RDMA "
        "device appears again (driver reload, hot-plug), and every --interval seconds. --mode audit "
        "reports only; --mode enforce applies (snapshot, restore on failure) under the host's apply "
        "lock, which `fabricd host apply` takes too. Exports compliance per NIC and check, reconciles, "
        "applies and failures on /metrics.",
    ),
    "push": (
        "push",
        "Push the rendered intent to switches: checkpoint, load, diff, commit(-confirm), verify, confirm or roll back.",
    ),
    "diff": (
        "diff",
        "Show drift: what differs between each switch's running config and the intent, on what fabricd owns.",
    ),
    "rollback": ("rollback", "Roll switches back to the config saved before fabricd's last push on them."),
    "capture": (
        "capture",
        "Capture switches for replay and bug reports: run every read-only command fabricd reads "
        "(the exporter's show commands, optional ones included, the audit's running-config read, "
        "a version command), scrub passwords, hashes, keys and SNMP communities, and write one "
        "file per command with a manifest (NOS version, capture time). Without --device, every "
        "switch of the inventory, in parallel. Nothing is changed on the devices; host keys are "
        "verified. `fabricd export switches --replay DIR` and `fabricd audit switch --replay DIR` "
        "read the folder. Exit 0 all captured, 3 some devices failed.",
    ),
    "validate-fabric": (
        "validate_fabric",
        "Run RDMA WRITEs between host pairs with the intent's ToS, snapshot "
        "counters before and after, and assert the deltas: bytes ~ payload, no "
        "out-of-sequence, no drops, the intent's DSCP on the wire, bytes on the "
        "intended priority. Checks a NIC cannot support (rxe: PFC, ECN, "
        "per-priority counters) are reported as not checkable, with what they "
        "need. Exit 0 ok, 1 findings, 2 bad input, 3 some pairs did not run.",
    ),
    "host": ("host", "Apply, plan and restore a host's RoCE settings (run on the host itself)."),
    "audit": ("audit", "Audit hosts and switches against the inventory (for CI)."),
    "export": ("export", "Prometheus exporters: this host's NIC/RDMA counters, or the fabric's switches."),
    "monitoring": ("monitoring", "What Prometheus, Alertmanager and Grafana need beside fabricd's exporters."),
    "traffic": (
        "traffic",
        "RC verbs traffic (pyverbs): WRITE, WRITE_WITH_IMM, SEND/RECV, READ, atomics; bandwidth and latency.",
    ),
}

_ROOT_SETTINGS: dict[str, Any] = {"pretty_exceptions_enable": False, "rich_markup_mode": "rich"}


def command_table() -> dict[str, tuple[str, str]]:
    """Every command: name -> (module path, one-line help); fabricd's own first, then the plugins' (which never
    replace one of fabricd's)."""
    table = {name: (f"fabricd.cli.{module}", help_) for name, (module, help_) in COMMANDS.items()}
    for name, row in plugin_commands().items():
        table.setdefault(name, row)
    return table


def load_command(name: str) -> click.Command:
    """Import the module of command ``name`` and return its click command (or group)."""
    # fabricd's own commands are looked up without reading the installed entry points (a start stays cheap)
    path = f"fabricd.cli.{COMMANDS[name][0]}" if name in COMMANDS else plugin_commands()[name][0]
    module = importlib.import_module(path)
    holder = typer.Typer(**_ROOT_SETTINGS)

    @holder.callback()
    def _holder() -> None:  # a callback keeps typer from collapsing a one-command app into that command
        """(holder)"""

    module.register(holder)
    group = typer.main.get_command(holder)
    assert isinstance(group, TyperGroup)
    command = group.commands.get(name)
    if command is None:
        raise RuntimeError(f"{module.__name__}.register() did not register {name!r}")
    return command


class LazyGroup(TyperGroup):
    """The root group: lists every command from :data:`COMMANDS` and imports one only when it is used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = 0

    def list_commands(self, ctx: click.Context) -> list[str]:
        table = command_table()
        return [*table, *(n for n in self.commands if n not in table)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS and cmd_name not in plugin_commands():
            if cmd_name in ELSEWHERE:  # a command another distribution adds, not installed here
                raise click.exceptions.UsageError(missing_plugin_message(cmd_name), ctx)
            return None
        if self._listing:  # a row of the command list: its name and help line, nothing imported
            return TyperCommand(cmd_name, help=command_table()[cmd_name][1])
        command = load_command(cmd_name)
        self.commands[cmd_name] = command
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:  # typer suggests from loaded commands only: suggest from all
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing += 1
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing -= 1

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        self._listing += 1
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self._listing -= 1


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fabricd {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="fabricd",
        cls=LazyGroup,
        help="Declarative lossless RoCEv2 fabrics: validate, render, push, export, watch, audit, prove.",
        epilog="[bold]Start here[/]: fabricd init DIR (a starting inventory to edit), fabricd validate DIR, fabricd "
        "doctor (what this machine can do); with fabricd-lab installed, fabricd demo runs the whole loop on the "
        "embedded lab fabric. Every command's --help ends with examples. Shell completion: fabricd "
        "--install-completion.",
        no_args_is_help=True,
        add_completion=True,
        **_ROOT_SETTINGS,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print version."),
    ) -> None:
        """fabricd: one inventory, the whole RoCEv2 loop.

        Exit codes: 0 ok, 1 findings, 2 bad input, 3 targets failed.
        """

    return app


def main() -> None:
    """Console-script entry: run the app; turn fabricd errors into located messages and exit codes."""
    run_guarded(build_app())
