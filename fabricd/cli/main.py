"""The ``fabricd`` entry point. Each command lives in its own module and registers itself on the app."""

from __future__ import annotations

import importlib

import typer

from fabricd import __version__

from .common import run_guarded

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
    "agent",
    "export",
    "lab",
    "push",
    "diff",
    "rollback",
    "capture",
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
    run_guarded(build_app())
