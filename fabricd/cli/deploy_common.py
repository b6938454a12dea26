"""Options and output shared by the commands that reach switches over SSH (``push``, ``diff``, ``rollback``,
``capture``, ``audit switch|cabling``): their SSH flags as one :class:`SshFlags`, the switches ``diff`` and ``push``
work on, the progress bar (also ``render``'s and ``--hosts``'), the results table and the diff printer."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fabricd.deploy.diffstat import diff_signs
from fabricd.deploy.result import TargetResult, TargetState

from .common import FlagGroup, inventory_path, stderr, with_fixes

if TYPE_CHECKING:  # imported where used: the pipeline pulls in every NOS and netmiko, which the commands that
    # only share this module's options (export, watch, serve, audit) do not need to start
    from fabricd.deploy.pipeline import PushOptions
    from fabricd.model import Switch
    from fabricd.platforms.registry import SwitchReach

_Reach = TypeVar("_Reach", bound="SwitchReach")

DeviceOpt = Annotated[
    list[str] | None,
    typer.Option("--device", "-d", help="Only this switch (repeatable).", show_default=False),
]
GroupOpt = Annotated[
    list[str] | None,
    typer.Option("--group", "-g", help="Only switches of this inventory group (repeatable).", show_default=False),
]
ConcurrencyOpt = Annotated[
    int,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        max=1024,
        envvar="FABRICD_CONCURRENCY",
        help="Switches worked on at the same time.",
    ),
]
KnownHostsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--known-hosts",
        envvar="FABRICD_KNOWN_HOSTS",
        help="Extra known_hosts file (repeatable). Also read: the lab's and ~/.ssh/known_hosts.",
        show_default=False,
    ),
]
INSECURE_WARNING = (
    "warning: --insecure-no-host-key-check: SSH host keys are NOT checked on this run, so an impostor on the path "
    "can read the switch password and every config; nothing is written to any known_hosts file. Prefer "
    "--accept-new-host-keys FILE (trust on first use) or verified keys in ~/.ssh/known_hosts."
)


def _warn_insecure(value: bool) -> bool:
    if value:
        stderr().print(f"[yellow]{escape(INSECURE_WARNING)}[/]")
    return value


InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure-no-host-key-check",
        "--no-verify-host-key",
        envvar="FABRICD_INSECURE_NO_HOST_KEY_CHECK",
        callback=_warn_insecure,
        help="Check no SSH host key (not recommended: opens the door to impostors; lab use only). Prints a "
        "warning on every run and writes no key anywhere.",
    ),
]
AcceptNewHostKeysOpt = Annotated[
    Path | None,
    typer.Option(
        "--accept-new-host-keys",
        envvar="FABRICD_ACCEPT_NEW_HOST_KEYS",
        metavar="FILE",
        help="Trust on first use: a device that no known_hosts file knows is accepted and its key appended "
        "to FILE (created 0600; existing lines are never rewritten). A changed key still fails.",
        show_default=False,
    ),
]
ReadTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--read-timeout",
        min=1.0,
        envvar="FABRICD_READ_TIMEOUT",
        help="Seconds to wait for a device prompt before giving up on it.",
    ),
]
SessionLogOpt = Annotated[
    Path | None,
    typer.Option(
        "--session-log",
        envvar="FABRICD_SESSION_LOG",
        help="Write one SSH session log per device into this directory (passwords are masked).",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class SshFlags(FlagGroup):
    """The SSH flags of a command that reaches switches, under the parameter names every such command gives them
    (``SshFlags.of(locals())``): --known-hosts, --insecure-no-host-key-check, --read-timeout,
    --session-log and, where the command takes it, --accept-new-host-keys."""

    known_hosts: list[Path] | None
    insecure: bool
    read_timeout: float
    session_log: Path | None
    accept_new_host_keys: Path | None = None


def switch_reach(cls: type[_Reach], ssh: SshFlags, **how: Any) -> _Reach:
    """The options of a command that reaches switches over SSH (``cls``: push, audit or capture options) from its
    SSH flags; ``how`` holds the fields of the command's own (push: dry_run, concurrency, confirm_timeout_s)."""
    from fabricd.platforms.base import DriverOptions

    driver = DriverOptions(
        read_timeout_s=ssh.read_timeout, session_log_dir=ssh.session_log, accept_new_host_keys=ssh.accept_new_host_keys
    )
    return cls(driver=driver, verify_host_key=not ssh.insecure, known_hosts=tuple(ssh.known_hosts or ()), **how)


def push_options(
    ssh: SshFlags, *, concurrency: int, dry_run: bool = False, confirm_timeout_s: int = 120
) -> PushOptions:
    from fabricd.deploy.pipeline import PushOptions

    return switch_reach(PushOptions, ssh, dry_run=dry_run, concurrency=concurrency, confirm_timeout_s=confirm_timeout_s)


def switch_candidates(
    inventory: Path | None,
    device: Sequence[str] | None,
    group: Sequence[str] | None,
    templates_dir: Path | None,
    *,
    work: str,
    writes: str | None = None,
) -> tuple[list[Switch], dict[str, str]]:
    """The switches --device and --group select (all when neither is given) and the config rendered for each: what
    ``diff`` compares and ``push`` pushes. No switch selected is bad input (exit 2): "no switches to ``work``".
    ``writes``: the command's name when it writes to devices (it then needs INVENTORY named)."""
    from fabricd.deploy.targets import render_candidates, select_targets
    from fabricd.errors import UsageError
    from fabricd.inventory import load_inventory

    fabric = load_inventory(inventory_path(inventory, writes=writes)).fabric
    targets = select_targets(fabric, device or (), group or ())
    if not targets:
        raise UsageError(f"no switches to {work}", hint="the inventory has no switches, or the filters match none")
    return targets, render_candidates(fabric, targets, templates_dir)


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool) -> Iterator[Callable[[Any], None]]:
    """A rich progress bar on stderr; yields a callback to call once per finished target."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr(),
        transient=True,
        disable=not enabled,
    ) as progress:
        task = progress.add_task(label, total=total)

        def advance(_: Any) -> None:
            progress.advance(task)

        yield advance


_STATE_STYLE = {
    TargetState.CHANGED: "green",
    TargetState.UNCHANGED: "dim",
    TargetState.ROLLED_BACK: "yellow",
    TargetState.UNTOUCHED: "yellow",
    TargetState.UNKNOWN: "bold red",
    TargetState.SKIPPED: "dim",
}


def results_table(results: list[TargetResult], title: str) -> Table:
    table = Table(title=title)
    for col in ("device", "platform", "batch", "result", "state", "time", "error"):
        table.add_column(col, overflow="fold", justify="right" if col == "time" else "left")
    for r in results:
        if r.failed:
            verdict = "[red]failed[/]"
        elif r.state is TargetState.SKIPPED:
            verdict = "skipped"
        elif r.dry_run:
            verdict = "would change" if r.diff else "no change"
        else:
            verdict = "[green]changed[/]" if r.changed else "no change"
        style = _STATE_STYLE.get(r.state, "")
        table.add_row(
            r.target,
            r.platform,
            r.batch or "",
            verdict,
            f"[{style}]{r.state.value}[/]" if style else r.state.value,
            f"{r.duration_s:.2f}s",
            escape(with_fixes(r.error, r.fixes)),
        )
    return table


def print_diff(console: Any, name: str, diff: str, platform: str = "") -> None:
    console.print(f"[bold]--- {escape(name)}[/]")
    for sign, line in diff_signs(platform, diff):
        style = "green" if sign == "+" else "red" if sign == "-" else ""
        console.print(f"[{style}]{escape(line)}[/]" if style else escape(line), highlight=False, soft_wrap=True)
