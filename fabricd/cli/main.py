"""The ``fabricd`` entry point. Each command lives in its own module and registers itself on the app."""

from __future__ import annotations

import importlib
import os
import sys

import typer

from fabricd import __version__
from fabricd.errors import FabricdError

from .common import fail

# One module per command (or command group). Each defines ``register(app: typer.Typer) -> None``.
COMMAND_MODULES: tuple[str, ...] = (
    "schema",
    "validate",
    "show",
    "headroom",
    "doctor",
    "report",
    "demo",
    "render",
    "host",
    "audit",
    "gids",
    "watch",
    "serve",
    "export",
    "lab",
    "push",
    "diff",
    "rollback",
    "traffic",
    "validate_fabric",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fabricd {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="fabricd",
        help="Declarative lossless RoCEv2 fabrics: validate, render, push, export, watch, audit, prove.",
        epilog="[bold]Start here[/]: fabricd demo (the whole loop on the embedded lab fabric), fabricd doctor (what "
        "this machine can do). Every command's --help ends with examples; the guides are in docs/ "
        "(docs/quickstart.md first). Shell completion: fabricd --install-completion.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=True,
        rich_markup_mode="rich",
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print version."),
    ) -> None:
        """fabricd: one inventory, the whole RoCEv2 loop.

        Exit codes: 0 ok, 1 findings, 2 bad input, 3 targets failed.
        """

    for name in COMMAND_MODULES:
        module = importlib.import_module(f"fabricd.cli.{name}")
        module.register(app)
    return app


def main() -> None:
    """Console-script entry: run the app; turn fabricd errors into located messages and exit codes."""
    app = build_app()
    owner = os.getpid()
    try:
        try:
            app()
        except BaseException:
            if os.getpid() != owner:
                # A library's forked helper unwinding the frames it inherited (pyroute2 opens netlink sockets
                # inside a network namespace from a child it then stops with a signal): leave at once, without
                # printing, flushing the parent's buffered output a second time, or exit handlers.
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
