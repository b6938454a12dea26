"""``fabricd doctor``: what this machine can run, and what to install for the rest."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.audit.doctor import run_checks

from .common import ExitCode, OutputFormat, OutputOpt, check_root, emit_json, stdout


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(
        output: OutputOpt = OutputFormat.TEXT,
        root: Annotated[Path, typer.Option("--root", envvar="FABRICD_ROOT",
                                           help="Inspect this root instead of / (for support bundles).")] = Path("/"),
    ) -> None:
        """Check the local machine for what each feature needs: kernel modules, RDMA devices, Prometheus,
        qemu/KVM, permissions. Says what to install. Exit 0 when every required check passes, 1 otherwise.

        [bold]Example[/]: fabricd doctor
        """
        check_root(root)
        checks = run_checks(root)
        if output == OutputFormat.JSON:
            emit_json([asdict(c) for c in checks])
        else:
            table = Table(title="fabricd doctor", show_lines=False)
            for col in ("feature", "check", "", "seen", "to fix"):
                table.add_column(col)
            parsers = [c for c in checks if c.feature == "parsers"]
            for c in checks:
                if c.feature == "parsers":
                    continue
                mark = "[green]ok[/]" if c.ok else ("[red]MISSING[/]" if c.required else "[yellow]no[/]")
                table.add_row(c.feature, c.name, mark, c.detail, "" if c.ok else c.fix)
            stdout().print(table)
            if parsers:
                stdout().print(f"{len(parsers)} parser role(s) unverified (no real capture; `fabricd docs platforms`):",
                               highlight=False)
            for c in parsers:  # one line each: platform/role, command, why
                stdout().print(f"  unverified {escape(c.name)}: `{escape(c.detail)}`: {escape(c.fix)}", soft_wrap=True,
                               highlight=False)
        if any(c.required and not c.ok for c in checks):
            raise typer.Exit(ExitCode.FINDINGS)
