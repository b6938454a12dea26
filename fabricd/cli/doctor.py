"""``fabricd doctor [--for FEATURE]...``: one table of what this machine has, what needs it, and how to get it."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.audit.doctor import DOCTOR, FEATURES, doctor_report, parser_role_checks, run_checks
from fabricd.errors import UsageError
from fabricd.model.checks import CheckResult, Report, Status

from .common import OutputFormat, OutputOpt, check_root, emit_json, fail, stdout, with_fixes
from .report import command_hints, exit_code, write_junit


def _selected(features: list[str] | None) -> list[str]:
    chosen = ["core"]
    for f in features or []:
        names = list(FEATURES) if f == "all" else [f]
        for name in names:
            if name not in FEATURES:
                fail(UsageError(f"--for {f!r}: no such feature", hint=f"choose from {', '.join(FEATURES)}, or all"))
            if name not in chosen:
                chosen.append(name)
    return chosen


def _missing(report: Report, feature: str) -> list[str]:
    """The capabilities ``feature`` needs that this machine lacks (optional ones never count)."""
    return [
        c.title
        for c in report.checks
        if c.status != Status.PASS and not DOCTOR[c.code].optional and feature in DOCTOR[c.code].features
    ]


def doctor(
    for_: Annotated[
        list[str] | None,
        typer.Option(
            "--for",
            show_default=False,
            help="Also require what this feature needs (repeatable; all = every feature): "
            + "; ".join(f"{k}: {v}" for k, v in FEATURES.items())
            + ".",
        ),
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
    root: Annotated[
        Path,
        typer.Option("--root", envvar="FABRICD_ROOT", help="Inspect this root instead of / (for support bundles)."),
    ] = Path("/"),
    junit: Annotated[
        Path | None,
        typer.Option("--junit", show_default=False, help="Also write JUnit XML here (a testcase per capability)."),
    ] = None,
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
    unverified = parser_role_checks()
    report = doctor_report(checks, unverified, target=str(root))
    code = exit_code([report])
    if junit is not None:
        write_junit(junit, [command_hints(report, keep_fixes=False)], label="fabricd doctor")
    if output == OutputFormat.JSON:
        emit_json(
            {
                "selected": chosen,
                "ok": not any(_missing(report, f) for f in chosen),
                "missing_for": {f: _missing(report, f) for f in FEATURES if _missing(report, f)},
                "features": FEATURES,
                "capabilities": [asdict(c) for c in checks],
                "unverified_parser_roles": [c.name for c in unverified],
                "checks": command_hints(report, keep_fixes=True).to_dict()["checks"],
            }
        )
    else:
        _print_text(report, chosen)
    raise typer.Exit(code)


_HERE = {
    Status.PASS: "[green]yes[/]",
    Status.FAIL: "[red]MISSING[/]",
    Status.SKIP: "[yellow]no[/]",
    Status.WARN: "[yellow]warn[/]",
}


def _row(c: CheckResult) -> tuple[str, str, str, str]:
    """A check of the report as (capability, needed for, here, how to get it): what was seen from the result,
    the features and how to get it from the check's declaration."""
    spec = DOCTOR[c.code]
    needed = "every feature" if set(spec.features) == set(FEATURES) else ", ".join(spec.features) or spec.feature
    needed += " (optional)" if spec.optional else ""
    if c.findings and c.status == Status.WARN:
        seen = f"{len(c.findings)} not proven"
    else:
        seen = c.note or "; ".join(str(f.got) for f in c.findings)
    how = "" if c.status == Status.PASS else with_fixes(spec.hint, spec.fixes)
    return escape(c.title), escape(needed), _HERE[c.status] + (f": {escape(seen)}" if seen else ""), escape(how)


def _print_text(report: Report, chosen: list[str]) -> None:
    """The report as one table, a line per feature (what it serves, ready or what it misses), and the verdict."""
    out = stdout()
    table = Table(title="fabricd doctor", show_lines=False)
    for col in ("capability", "needed for", "here", "how to get it"):
        table.add_column(col, overflow="fold")
    for c in report.checks:
        table.add_row(*_row(c))
    out.print(table)
    for name, commands in FEATURES.items():
        state = "selected, " if name in chosen else ""
        gaps = _missing(report, name)
        verdict = "ready" if not gaps else "missing " + ", ".join(gaps)
        out.print(f"  {name:<10} {escape(commands)} [dim]({state}{escape(verdict)})[/]", highlight=False)
    failing = [f for f in chosen if _missing(report, f)]
    others = [f for f in FEATURES if f not in chosen and _missing(report, f)]
    if failing:
        out.print(f"[bold red]missing for {', '.join(failing)}[/]: exit 1", highlight=False)
    else:
        out.print(f"[green]ready for {', '.join(chosen)}[/]", highlight=False)
    if others:
        out.print(
            f"not ready for {', '.join(others)}; `fabricd doctor --for {others[0]}` exits 1 until it is",
            highlight=False,
        )
    roles = [f for c in report.checks if c.code == "DOC-PARSER-ROLES" for f in c.findings]
    if roles:
        out.print(
            f"{len(roles)} parser roles have no real capture yet (they run, unproven on a device): "
            "`fabricd docs platforms`, section 'Parser roles and what proves them', lists them and why",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
