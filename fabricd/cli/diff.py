"""``fabricd diff``: drift between each switch's running config and the rendered intent (read-only)."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.deploy.pipeline import drift
from fabricd.deploy.result import DriftResult

from .common import ExitCode, InventoryArg, OutputFormat, OutputOpt, TemplatesDirOpt, emit_json, stdout
from .deploy_common import (
    AcceptNewHostKeysOpt,
    ConcurrencyOpt,
    DeviceOpt,
    GroupOpt,
    InsecureOpt,
    KnownHostsOpt,
    ReadTimeoutOpt,
    SessionLogOpt,
    SshFlags,
    print_diff,
    progress_bar,
    push_options,
    switch_candidates,
)


def diff_summary(results: Sequence[DriftResult]) -> str:
    """One line that tells the truth about every switch: how many were read, drifted or could not be read."""
    failed = sum(r.failed for r in results)
    drifted = sum(r.drift for r in results)
    read = len(results) - failed
    unread = f"; {failed} of {len(results)} could not be read (see the error column)" if failed else ""
    if read == 0:
        return f"no switch could be read: {failed} of {len(results)} failed (see the error column)"
    if drifted:
        return f"{drifted} of {read} switches read drifted from the intent{unread}"
    if failed:
        return f"the {read} switches read match the intent{unread}"
    return f"all {read} switches read match the intent"


def diff_cmd(
    inventory: InventoryArg = None,
    device: DeviceOpt = None,
    group: GroupOpt = None,
    concurrency: ConcurrencyOpt = 32,
    templates_dir: TemplatesDirOpt = None,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    accept_new_host_keys: AcceptNewHostKeysOpt = None,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Show drift: what differs between each switch's running config and the intent, on what fabricd owns.

    Read-only (nothing is staged on the devices). Exit 0 when every switch matches, 1 on drift, 3 when some
    switches could not be read.

    [bold]Example[/]: fabricd diff
    [bold]Example[/]: fabricd diff inventory/lab --device leaf3-nxos --output json
    """
    targets, candidates = switch_candidates(inventory, device, group, templates_dir, work="compare")
    opts = push_options(SshFlags.of(locals()), concurrency=concurrency)
    text = output == OutputFormat.TEXT
    with progress_bar("reading", len(targets), enabled=text) as tick:
        results = drift(targets, candidates, opts, on_result=tick)
    if not text:
        emit_json(
            {
                "results": [r.model_dump(mode="json") for r in results],
                "drift": sum(r.drift for r in results),
                "failed": sum(r.failed for r in results),
            }
        )
    else:
        console = stdout()
        for r in results:
            if r.drift:
                print_diff(console, r.target, r.diff, r.platform)
        table = Table(title="fabricd diff")
        for col in ("device", "platform", "status", "differences", "error"):
            table.add_column(col, overflow="fold")
        for r in results:
            status = "[red]failed[/]" if r.failed else "[yellow]drift[/]" if r.drift else "[green]in sync[/]"
            table.add_row(r.target, r.platform, status, str(len(r.changes)), escape(r.error or ""))
        console.print(table)
        console.print(diff_summary(results))
    if any(r.failed for r in results):
        raise typer.Exit(ExitCode.TARGETS_FAILED)
    if any(r.drift for r in results):
        raise typer.Exit(ExitCode.FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_cmd)
