"""``fabricd push``: render the intent and push it safely to switches (checkpoint, diff, commit-confirm, verify)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from fabricd.deploy.pipeline import drift, push
from fabricd.deploy.result import PushReport
from fabricd.deploy.targets import BATCH_KEYS
from fabricd.errors import UsageError

from .common import (
    ExitCode,
    InventoryArg,
    OutputFormat,
    OutputOpt,
    TemplatesDirOpt,
    emit_json,
    stderr,
    stdout,
)
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
    results_table,
    switch_candidates,
)


def _summary(report: PushReport) -> str:
    n = len(report.results)
    failed = len(report.failed)
    skipped = sum(1 for r in report.results if r.state.value == "skipped")
    if report.dry_run:
        would = sum(1 for r in report.results if r.diff and not r.failed)
        return f"dry run: {would} of {n} switches would change, {failed} failed; nothing was committed"
    changed = len(report.changed)
    same = n - changed - failed - skipped
    text = f"pushed: {changed} changed, {same} already matched the intent, {failed} failed"
    if skipped:
        text += f", {skipped} skipped (rollout stopped after batch {report.stopped_after!r})"
    if changed == 0 and failed == 0 and not skipped:
        text = f"nothing to change: all {n} switches already match the intent"
    return text


def push_cmd(
    inventory: InventoryArg = None,
    device: DeviceOpt = None,
    group: GroupOpt = None,
    batch: Annotated[
        str | None,
        typer.Option(
            "--batch",
            help=f"Roll out in batches by {' or '.join(BATCH_KEYS)} (role: leaves, then "
            "spines); a batch with a failure stops the rollout.",
            show_default=False,
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 32,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Load and diff on each device, then discard.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Push without asking.")] = False,
    confirm_timeout: Annotated[
        int,
        typer.Option(
            "--confirm-timeout",
            min=0,
            max=3600,
            envvar="FABRICD_CONFIRM_TIMEOUT",
            help="Commit-confirm timer (s) where the platform has one (EOS, NVUE): the device reverts "
            "by itself unless fabricd confirms after verifying. 0 = plain commit.",
        ),
    ] = 120,
    templates_dir: TemplatesDirOpt = None,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    accept_new_host_keys: AcceptNewHostKeysOpt = None,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Push the rendered intent to switches: checkpoint, load, diff, commit(-confirm), verify, confirm or roll back.

    Shows the plan and the diff of every switch that would change, then asks (or takes --yes). A switch that
    already matches is not touched, so a second push of an unchanged intent changes nothing and says so.
    Exit 0 when every switch is fine, 3 when some failed (the others were done; failed ones are rolled back).

    INVENTORY must be named (or FABRICD_INVENTORY set): push never picks one by itself (exit 2).

    [bold]Example[/]: fabricd init ./lab && fabricd lab up ./lab && fabricd push ./lab --yes
    [bold]Example[/]: fabricd push ./fabric --dry-run --device leaf2-eos
    [bold]Example[/]: fabricd push ./fabric --batch role --concurrency 8 --yes --output json
    """
    targets, candidates = switch_candidates(inventory, device, group, templates_dir, work="push to", writes="push")
    opts = push_options(
        SshFlags.of(locals()), concurrency=concurrency, dry_run=dry_run, confirm_timeout_s=confirm_timeout
    )
    text = output == OutputFormat.TEXT
    console = stdout()
    err = stderr()
    if not dry_run and not yes:
        if not text or not sys.stdin.isatty():
            raise UsageError(
                "push changes switches and needs confirmation",
                hint="pass --yes to push without asking, or --dry-run to only see the diff",
            )
        with progress_bar("planning", len(targets), enabled=True) as tick:
            plan = drift(targets, candidates, opts, on_result=tick)
        to_change = [p for p in plan if p.drift]
        for p in to_change:
            print_diff(console, p.target, p.diff, p.platform)
        for p in plan:
            if p.failed:
                err.print(f"[red]{p.target}:[/] {p.error}", highlight=False)
        if not to_change:
            console.print(
                f"nothing to change: all {len(plan) - sum(p.failed for p in plan)} reachable switches "
                "already match the intent"
            )
            raise typer.Exit(ExitCode.TARGETS_FAILED if any(p.failed for p in plan) else ExitCode.OK)
        if not typer.confirm(f"Push to {len(to_change)} switch(es): {', '.join(p.target for p in to_change)}?"):
            err.print("aborted; nothing was pushed")
            raise typer.Exit(ExitCode.OK)
        targets = [t for t in targets if t.name in {p.target for p in to_change}]
    with progress_bar("dry run" if dry_run else "pushing", len(targets), enabled=text) as tick:
        report = push(targets, candidates, opts, batch_key=batch, on_result=tick)
    if not text:
        emit_json(report.model_dump(mode="json") | {"summary": _summary(report)})
    else:
        for r in report.results:
            if r.diff and (r.changed or r.dry_run):
                print_diff(console, r.target, r.diff, r.platform)
        console.print(results_table(report.results, "fabricd push (dry run)" if dry_run else "fabricd push"))
        console.print(_summary(report))
    if report.failed:
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def register(app: typer.Typer) -> None:
    app.command("push")(push_cmd)
