"""``fabricd doctor [--for FEATURE]...``: one table of what this machine has, what needs it, and how to get it."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.audit.doctor import FEATURES, Capability, doctor_report, parser_role_checks, run_checks
from fabricd.errors import UsageError

from .common import OutputFormat, OutputOpt, check_root, emit_json, fail, stdout
from .report import exit_code, write_junit


def _selected(features: list[str] | None) -> list[str]:
    chosen = ["core"]
    for f in features or []:
        names = list(FEATURES) if f == "all" else [f]
        for name in names:
            if name not in FEATURES:
                fail(UsageError(f"--for {f!r}: no such feature",
                                hint=f"choose from {', '.join(FEATURES)}, or all"))
            if name not in chosen:
                chosen.append(name)
    return chosen


def _missing(checks: list[Capability], feature: str) -> list[Capability]:
    return [c for c in checks if not c.ok and not c.optional and feature in c.features]


def doctor(
    for_: Annotated[list[str] | None, typer.Option(
        "--for", show_default=False,
        help="Also require what this feature needs (repeatable; all = every feature): "
             + "; ".join(f"{k}: {v}" for k, v in FEATURES.items()) + ".")] = None,
    output: OutputOpt = OutputFormat.TEXT,
    root: Annotated[Path, typer.Option("--root", envvar="FABRICD_ROOT",
                                       help="Inspect this root instead of / (for support bundles).")] = Path("/"),
    junit: Annotated[Path | None, typer.Option(
        "--junit", show_default=False, help="Also write JUnit XML here (a testcase per capability).")] = None,
) -> None:
    """One table: each capability fabricd can use, the features that need it, whether this machine has it,
    and how to get it.

    Exit 0 when every capability the selected features need is present, 1 when one is missing. Only core
    (validate, render...) is selected by default; --for FEATURE adds one (hosts, rdma, exporters, lab,
    lab-vm, tests, bench, or all), so that CI can gate on what it uses: `fabricd doctor --for hosts`.

    [bold]Example[/]: fabricd doctor
    [bold]Example[/]: fabricd doctor --for hosts --for rdma --output json
    [bold]Example[/]: fabricd doctor --for hosts --junit doctor.xml
    """
    check_root(root)
    chosen = _selected(for_)
    checks = run_checks(root, chosen)
    failing = [f for f in chosen if _missing(checks, f)]
    unverified = parser_role_checks()
    report = doctor_report(checks, unverified, target=str(root))
    code = exit_code([report])
    if junit is not None:
        write_junit(junit, [report], label="fabricd doctor")
    if output == OutputFormat.JSON:
        emit_json({"selected": chosen, "ok": not failing, "missing_for": {f: [c.name for c in _missing(checks, f)]
                                                                        for f in FEATURES if _missing(checks, f)},
                   "features": FEATURES, "capabilities": [asdict(c) for c in checks],
                   "unverified_parser_roles": [c.name for c in unverified],
                   "checks": report.to_dict()["checks"]})
        raise typer.Exit(code)
    out = stdout()
    table = Table(title="fabricd doctor", show_lines=False)
    for col in ("capability", "needed for", "here", "how to get it"):
        table.add_column(col, overflow="fold")
    for c in checks:
        needed = "every feature" if set(c.features) == set(FEATURES) else ", ".join(c.features)
        if c.optional:
            needed += " (optional)"
        mark = ("[green]yes[/]" if c.ok else "[red]MISSING[/]" if c.required else "[yellow]no[/]")
        seen = escape(c.detail)
        table.add_row(escape(c.name), escape(needed), f"{mark}: {seen}", "" if c.ok else escape(c.fix))
    out.print(table)
    for name, commands in FEATURES.items():
        state = "selected, " if name in chosen else ""
        gaps = _missing(checks, name)
        verdict = "ready" if not gaps else "missing " + ", ".join(c.name for c in gaps)
        out.print(f"  {name:<10} {escape(commands)} [dim]({state}{escape(verdict)})[/]", highlight=False)
    others = [f for f in FEATURES if f not in chosen and _missing(checks, f)]
    if failing:
        out.print(f"[bold red]missing for {', '.join(failing)}[/]: exit 1", highlight=False)
    else:
        out.print(f"[green]ready for {', '.join(chosen)}[/]", highlight=False)
    if others:
        out.print(f"not ready for {', '.join(others)}; `fabricd doctor --for {others[0]}` exits 1 until it is",
                  highlight=False)
    if unverified:
        out.print(f"{len(unverified)} parser roles have no real capture yet (they run, unproven on a device): "
                  "`fabricd docs platforms`, section 'Parser roles and what proves them', lists them and why",
                  highlight=False)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
