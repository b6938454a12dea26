"""Shared CLI pieces: the output option, consoles, inventory loading with located errors, and exit codes."""

from __future__ import annotations

import inspect
import json
import os
import shlex
import signal
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from enum import IntEnum, StrEnum
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol, Self

import typer
from rich.console import Console
from rich.markup import escape

from fabricd import settings
from fabricd.errors import FabricdError, Fix, UsageError

if TYPE_CHECKING:
    from fabricd.service.api import ApiServer


class ExitCode(IntEnum):
    """Exit codes, the same for every command (docs/contracts.md)."""

    OK = 0
    FINDINGS = 1
    INVALID = 2
    TARGETS_FAILED = 3


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


OutputOpt = Annotated[
    OutputFormat,
    typer.Option("--output", "-o", envvar="FABRICD_OUTPUT", help="text (tables) or json (for scripts)."),
]
InventoryArg = Annotated[
    Path | None,
    typer.Argument(
        envvar="FABRICD_INVENTORY",
        help="Inventory file or directory. Default: ./ when it holds fabric.yml, else the built-in lab fabric, said "
        "on stderr. Commands that write to devices (push, rollback, host apply, agent --mode enforce) need it "
        "named.",
        show_default=False,
    ),
]
TemplatesDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--templates-dir",
        envvar="FABRICD_TEMPLATES_DIR",
        show_default=False,
        help="Templates searched before the shipped ones (same layout: <platform>/<section>.j2).",
    ),
]

DOCS_HINT = "`fabricd docs` lists the guides; `fabricd COMMAND --help` gives every option, exit code and example"


PIPE_WIDTH = 1000
"""Console width when the output is piped or redirected and ``COLUMNS`` is unset: wide enough that no table cell
(a rendered file's path, a doctor hint) is wrapped or cut, where rich would otherwise assume 80 columns."""
RULE_WIDTH = 100
"""Width of a section rule (the demo's stage titles), so that a piped run does not draw a PIPE_WIDTH-long line."""


def _width(stream: Any) -> int | None:
    """None (rich decides: the terminal's size, or COLUMNS) on a terminal or when COLUMNS is set; PIPE_WIDTH
    otherwise."""
    if os.environ.get("COLUMNS"):
        return None
    try:
        return None if stream.isatty() else PIPE_WIDTH
    except (AttributeError, ValueError):  # a closed or replaced stream
        return PIPE_WIDTH


def stdout() -> Console:
    """Data goes to stdout."""
    return Console(soft_wrap=True, width=_width(sys.stdout))


def stderr() -> Console:
    """Diagnostics go to stderr."""
    return Console(stderr=True, soft_wrap=True, width=_width(sys.stderr))


class FlagGroup:
    """Flags that several commands declare alike, as one value: a dataclass whose fields are named as the commands'
    parameters, built with ``Group.of(locals())`` in the command (its parameters as typer converted them). A field
    the command does not declare takes the field's default; one without a default is a TypeError, which
    tests/unit/test_cli_flag_groups.py rules out for every command."""

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> Self:
        names = inspect.signature(cls).parameters
        return cls(**{name: params[name] for name in names if name in params})


def inventory_path(path: Path | None, *, writes: str | None = None) -> Path:
    """The inventory a command uses: INVENTORY (or ``FABRICD_INVENTORY``) when given; else ``./`` when it holds an
    inventory (:func:`fabricd.inventory.inventory_marker`); else the built-in lab fabric. The last two are said on
    stderr, so a user can never mistake the lab for their own fabric. A command that writes to devices (``writes``
    is its name, e.g. ``push``) never guesses: with no INVENTORY it stops with exit 2 and says how to name one."""
    if path is not None:
        return path
    if writes is not None:
        raise UsageError(
            f"fabricd {writes}: no INVENTORY argument; {writes} writes to devices, so it never picks an inventory "
            "by itself (not ./, not the built-in lab)",
            hint=f"name it as the first argument, e.g. `fabricd {writes} ./fabric ...`, or set "
            "FABRICD_INVENTORY=./fabric; the lab is `fabricd init --example lab DIR` away",
        )
    from fabricd.inventory import inventory_marker

    here = Path(".")
    marker = inventory_marker(here)
    if marker is not None:
        _note(f"inventory: ./ (it holds {marker.name}); pass INVENTORY to use another")
        return here
    lab = settings.lab_inventory()
    _note(f"inventory: the built-in lab fabric ({lab}), as ./ holds no fabric.yml; pass INVENTORY to use yours")
    return lab


def _note(text: str) -> None:
    stderr().print(f"[dim]{escape(text)}[/]", highlight=False, markup=True)


def check_root(root: Path, hint: str = "give the directory that holds sys/ (default /)") -> None:
    """A ``--root`` that is not a directory is bad input (exit 2), said before any reader runs."""
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory", hint=hint)


def webhook_urls(urls: list[str] | None) -> list[str]:
    """``--webhook`` values, each an http(s) URL with a host; anything else is bad input (exit 2) rather than a
    notification that fails later, in the background, while the watchdog runs."""
    for url in urls or []:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"--webhook {url!r}: not an http(s) URL",
                hint="e.g. --webhook http://127.0.0.1:5001/ (any Alertmanager webhook receiver)",
            )
    return list(urls or [])


def emit_json(data: Any) -> None:
    """Write one JSON document to stdout (no rich markup, stable key order as given)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def docs_for(error: FabricdError | str) -> str:
    """Where to read more about an error: the command that explains its area, then the general pointer (DOCS_HINT).
    Commands, never file paths: the guides ship inside the package and ``fabricd docs PAGE`` prints them."""
    from fabricd.errors import DriverError, HostBackendError, InventoryError, RenderError

    topics: tuple[tuple[type[FabricdError], str], ...] = (
        (InventoryError, "`fabricd docs inventory` (every field) and `fabricd docs checks` (every check)"),
        (RenderError, "`fabricd docs platforms` (what each switch OS gets)"),
        (DriverError, "`fabricd docs switch-lab` (push, diff and rollback, and a lab to rehearse them)"),
        (HostBackendError, "`fabricd doctor` (what this machine has) and `fabricd docs ci-audit`"),
    )
    topic = next((doc for cls, doc in topics if isinstance(error, cls)), None)
    return f"{topic}; {DOCS_HINT}" if topic else DOCS_HINT


def fail(error: FabricdError | str, code: int = ExitCode.INVALID) -> NoReturn:
    """Print a located error to stderr, with no traceback, and exit. An error that carries no fix hint of its own
    gets a pointer to the docs of its area instead."""
    text = render_error(error) if isinstance(error, FabricdError) else error
    err = stderr()
    for line in text.splitlines() or [text]:
        err.print(f"[bold red]error:[/] {escape(line)}", highlight=False, markup=True)
    if not _has_fix(error):
        err.print(f"[dim]hint: {escape(docs_for(error))}[/]", highlight=False, markup=True)
    raise typer.Exit(code)


def run_guarded(run: Callable[[], object]) -> None:
    """Run a CLI app as a console script: a fabricd error becomes its located message and exit code, Ctrl-C exits
    130, and any other exception is reported as a fabricd bug (exit 70), with its traceback only under
    ``FABRICD_DEBUG=1``. A library's forked helper that unwinds into here (pyroute2 opens netlink sockets inside a
    network namespace from a child it then stops with a signal) leaves at once, without printing, flushing the
    parent's buffered output a second time, or exit handlers."""
    owner = os.getpid()
    try:
        try:
            run()
        except BaseException:
            if os.getpid() != owner:
                os._exit(0)
            raise
    except FabricdError as exc:
        try:
            fail(exc, exc.exit_code)
        except typer.Exit as ex:
            sys.exit(ex.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:  # an internal bug: say so plainly; traceback only when debugging
        if os.environ.get("FABRICD_DEBUG"):
            raise
        sys.stderr.write(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "this is a fabricd bug; rerun with FABRICD_DEBUG=1 for a traceback and report it\n"
        )
        sys.exit(70)  # EX_SOFTWARE


def _has_fix(error: FabricdError | str) -> bool:
    """Whether the error already says how to fix it (its hint, or a hint on every inventory problem)."""
    if not isinstance(error, FabricdError):
        return False
    problems = getattr(error, "problems", None)
    if problems:
        return all(getattr(p, "hint", None) for p in problems)
    return bool(error.hint or error.fixes)


def run_until_stopped(stop: Callable[[], None], duration: float | None = None) -> None:
    """Block until SIGTERM or SIGINT (or ``duration`` seconds, when given), then call ``stop``; the previous signal
    handlers are restored. The foreground loop of the long-running commands (``serve``, ``agent``)."""
    done = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    old = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    deadline = None if duration is None else time.monotonic() + duration
    try:
        while not done.wait(0.5):
            if deadline is not None and time.monotonic() >= deadline:
                break
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        stop()


class ForegroundService(Protocol):
    """What :func:`serve_in_foreground` runs: ``fabricd serve``'s Service and ``fabricd agent``'s Agent."""

    server: ApiServer | None

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def status(self) -> dict[str, Any]: ...


def serve_in_foreground(
    service: ForegroundService,
    *,
    name: str,
    listen: str,
    bind_host: str,
    banner: Callable[[str], str],
    duration: float | None,
    output: OutputFormat,
) -> None:
    """Start a long-running command's service (a ``--listen`` that cannot be bound is a usage error), warn when it
    serves a non-loopback address in the clear, print its banner (given the base URL), run it until SIGTERM/SIGINT
    or ``duration``, then print the final status (``--output json``) and that it stopped."""
    from fabricd.collectors.server import bind_error

    try:
        service.start()
    except OSError as exc:
        raise bind_error(listen, exc) from exc
    assert service.server is not None
    err = stderr()
    if service.server.exposed:
        err.print(
            f"[yellow]warning:[/] serving on {bind_host} without TLS or authentication; give --web-config",
            highlight=False,
        )
    err.print(banner(service.server.base_url), highlight=False)
    run_until_stopped(service.stop, duration)
    if output == OutputFormat.JSON:
        emit_json(service.status())
    err.print(f"fabricd {name} stopped", highlight=False)


def fix_line(fix: Fix) -> str:
    """A :class:`~fabricd.errors.Fix` as the command line a user types: ```fabricd push --device leaf1```, then what
    it does in brackets. Option names take dashes (``max_failures`` -> ``--max-failures``); ``True`` is a bare flag."""
    argv = ["fabricd", *fix.command, *(shlex.quote(o) for o in fix.operands)]
    for name, value in fix.args.items():
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [flag, shlex.quote(str(value))]
    line = f"`{' '.join(argv)}`"
    return f"{line} ({fix.text})" if fix.text else line


def with_fixes(hint: str | None, fixes: Iterable[Fix], *, joiner: str = "; ") -> str:
    """A hint in words followed by its fixes as command lines (``hint; `fabricd push ...` (restores ...)``)."""
    return joiner.join([*([hint] if hint else []), *(fix_line(f) for f in fixes)])


def render_error(error: FabricdError) -> str:
    """``error.render()`` with its option as a flag (``--device leaf9: ...``) and its fixes as command lines."""
    if not error.fixes and not error.option:
        return error.render()
    rest = with_fixes(error.hint, error.fixes)
    return f"{error.head('--')}; {rest}" if rest else error.head("--")
