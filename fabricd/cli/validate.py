"""``fabricd validate``: load an inventory and run every semantic check, PFC deadlock analysis included."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fabricd.errors import InventoryError, Problem, ProblemGroup, group_problems
from fabricd.intent.checks import CheckOptions, Validation
from fabricd.intent.checks.catalogue import LOAD_CHECKS
from fabricd.intent.deadlock import Cycle
from fabricd.inventory import load_inventory
from fabricd.model.checks import report_of
from fabricd.nos.validate import validate

from .common import ExitCode, InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stderr, stdout
from .report import exit_code, write_junit

_STYLE = {"error": "bold red", "warning": "yellow"}
JUNIT_LABEL = "fabricd validate"


def problem_json(p: Problem, group: int | None = None) -> dict[str, Any]:
    """One problem; ``group`` is the index of its entry in the report's ``groups`` (problems one line causes)."""
    return {
        "severity": p.severity,
        "code": p.code,
        "file": str(p.location.file) if p.location else None,
        "line": p.location.line if p.location and p.location.line else None,
        "path": p.path or None,
        "message": p.message,
        "expected": p.expected,
        "got": p.got,
        "hint": p.hint,
        "text": p.render(),
        "group": group,
    }


def problems_json(problems: list[Problem]) -> dict[str, Any]:
    """Every problem (``problems``, each with its ``group``) and the groups as the text output prints them: one
    per mistake, with how many objects it touches and their names, so a script loses nothing."""
    groups = group_problems(problems)
    index = {id(p): i for i, g in enumerate(groups) for p in g.problems}
    return {
        "problems": [problem_json(p, index[id(p)]) for p in problems],
        "groups": [_group_json(g) for g in groups],
    }


def _group_json(g: ProblemGroup) -> dict[str, Any]:
    loc = g.first.location
    return {
        "severity": g.first.severity,
        "code": g.first.code,
        "file": str(loc.file) if loc else None,
        "line": loc.line if loc and loc.line else None,
        "path": g.pattern if g.count > 1 else g.first.path,
        "count": g.count,
        "objects": g.names if g.count > 1 else [],
        "text": g.render(),
    }


def _print_groups(console: Any, groups: list[ProblemGroup]) -> None:
    for g in groups:
        sev = g.first.severity
        console.print(
            f"[{_STYLE.get(sev, 'bold')}]{sev}:[/] {escape(f'{g.render()} [{g.first.code}]')}", highlight=False
        )


def _count(groups: list[ProblemGroup], word: str) -> str:
    """``2 errors``, or ``2 errors (136 objects)`` when some are inherited by many objects."""
    objects = sum(g.count for g in groups)
    return _plural(len(groups), word) + (f" ({objects} objects)" if objects != len(groups) else "")


def _cycle_json(c: Cycle) -> dict[str, Any]:
    return {
        "text": c.describe(),
        "links": list(c.links),
        "hops": [{"switch": h.switch, "ingress": h.ingress, "egress": h.egress} for h in c.hops],
    }


_PLURALS = {"switch": "switches", "dependency": "dependencies", "twin class": "twin classes"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else _PLURALS.get(word, word + 's')}"


def _not_analysed(v: Validation) -> str | None:
    """Why the deadlock analysis has nothing to say (no verdict on an empty fabric), or None."""
    fabric = v.context.fabric
    if not fabric.switches:
        return "no switches"
    if v.context.deadlock_applies and v.context.deadlock.endpoints == 0:
        return "no switch has an RDMA host"
    return None


def _deadlock_lines(v: Validation) -> list[str]:
    ctx = v.context
    empty = _not_analysed(v)
    if empty is not None:
        return [f"PFC deadlock: not analysed ({empty})"]
    if not ctx.deadlock_applies:
        why = f"transport {ctx.policy.transport.value}" if not ctx.lossless else "no PFC priority"
        lines = [f"PFC deadlock: not applicable ({why}: no lossless traffic)"]
        if ctx.options.fail_links:
            lines.append(f"--fail-links {ctx.options.fail_links}: not applicable")
        return lines
    d = ctx.deadlock
    stats = (
        f"{_plural(d.endpoints, 'switch')} with RDMA hosts in {_plural(d.classes, 'twin class')}, "
        f"{d.transit_switches} transit, {_plural(d.dependencies, 'dependency')} between transit buffers"
    )
    lines = [
        f"PFC deadlock: {_plural(len(d.cycles), 'cycle')} found ({stats})"
        if d.cycles
        else f"PFC deadlock: no cyclic buffer dependency ({stats})"
    ]
    n = ctx.options.fail_links
    if n:
        f = ctx.failures
        if f is None:
            lines.append(f"--fail-links {n}: skipped, the intact fabric already has a cycle")
        elif f.total_scenarios == 0:
            lines.append(f"--fail-links {n}: no {n}-link failure possible ({_plural(f.candidate_links, 'link')})")
        elif f.failing:
            stopped = " (stopped early)" if f.tried < min(f.total_scenarios, ctx.options.max_failure_scenarios) else ""
            lines.append(f"--fail-links {n}: tried {f.method}{stopped}: {len(f.failing)} create a cycle")
        else:
            lines.append(f"--fail-links {n}: tried {f.method}: none creates a cycle")
    return lines


def _report_json(path: Path, v: Validation, code: int) -> dict[str, Any]:
    ctx = v.context
    fabric = ctx.fabric
    out: dict[str, Any] = {
        "inventory": str(path),
        "fabric": fabric.name,
        "ok": code == ExitCode.OK,
        "exit_code": code,
        "stage": "checks",
        "counts": {"switches": len(fabric.switches), "hosts": len(fabric.hosts), "links": len(fabric.links)},
        "summary": {"errors": len(v.errors), "warnings": len(v.warnings)},
        **problems_json(v.problems),
    }
    empty = _not_analysed(v)
    if empty is not None:
        out["deadlock"] = {"applicable": False, "reason": empty}
    elif ctx.deadlock_applies:
        d = ctx.deadlock
        out["deadlock"] = {
            "applicable": True,
            "endpoint_switches": d.endpoints,
            "twin_classes": d.classes,
            "transit_switches": d.transit_switches,
            "dependencies": d.dependencies,
            "islands": len(d.components),
            "cycles": [_cycle_json(c) for c in d.cycles],
        }
    else:
        out["deadlock"] = {"applicable": False}
    f = ctx.failures
    out["fail_links"] = (
        None
        if f is None
        else {
            "n": f.n,
            "method": f.method,
            "candidate_links": f.candidate_links,
            "total_scenarios": f.total_scenarios,
            "tried": f.tried,
            "sampled": f.sampled,
            "seed": f.seed,
            "failing": [{"links": list(s), "cycle": _cycle_json(c)} for s, c in f.failing],
        }
    )
    return out


def validate_cmd(
    inventory: InventoryArg = None,
    fail_links: Annotated[
        int,
        typer.Option(
            "--fail-links",
            min=0,
            max=8,
            envvar="FABRICD_FAIL_LINKS",
            help="Also try every N-link failure (switch-to-switch links) for PFC deadlock; above --max-scenarios "
            "combinations a seeded random sample is tried.",
        ),
    ] = 0,
    max_scenarios: Annotated[
        int, typer.Option("--max-scenarios", min=1, help="Most failure combinations to try before sampling.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the failure sample (printed with the result).")] = 0,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            show_default=False,
            help="Also write JUnit XML here: a testcase per check (warnings pass, with their findings as output).",
        ),
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Check an inventory: every problem at once, errors and warnings, each with file:line, a dotted path,
    expected vs got and a fix. Includes the PFC deadlock analysis (cycles of lossless buffer dependencies over
    the ECMP shortest paths); --fail-links N repeats it for N-link failures.

    Exit codes: [bold]0[/] no errors (warnings allowed), [bold]1[/] semantic errors found (FABnnn),
    [bold]2[/] the inventory could not be loaded (YAML syntax, unknown keys, wrong types or ranges: INVnnn,
    printed to stderr).

    [bold]Example[/]: fabricd validate

    [bold]Example[/]: fabricd init --example sonic-only ./fabric

    [bold]Example[/]: fabricd validate ./fabric --fail-links 1 --output json

    [bold]Example[/]: fabricd validate ./fabric --junit validate.xml
    """
    path = inventory_path(inventory)
    try:
        inv = load_inventory(path)
    except InventoryError as exc:
        if junit is not None:
            codes = {p.code for p in exc.problems}
            write_junit(
                junit,
                [report_of("inventory", str(path), [c for c in LOAD_CHECKS if c.code in codes], exc.problems)],
                label=JUNIT_LABEL,
            )
        if output == OutputFormat.JSON:
            emit_json(
                {
                    "inventory": str(path),
                    "ok": False,
                    "exit_code": int(ExitCode.INVALID),
                    "stage": "load",
                    "summary": {"errors": len(exc.problems), "warnings": 0},
                    **problems_json(exc.problems),
                }
            )
        else:
            _print_groups(stderr(), group_problems(exc.problems))
        raise typer.Exit(ExitCode.INVALID) from None

    options = CheckOptions(fail_links=fail_links, max_failure_scenarios=max_scenarios, seed=seed)
    if fail_links and output == OutputFormat.TEXT and sys.stderr.isatty():
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=stderr(),
            transient=True,
        ) as bar:
            task = bar.add_task(f"--fail-links {fail_links}", total=None)
            v = validate(
                inv, replace(options, progress=lambda done, total: bar.update(task, completed=done, total=total))
            )
    else:
        v = validate(inv, options)
    report = v.report()
    code = exit_code([report])
    if junit is not None:
        write_junit(junit, [report], label=JUNIT_LABEL)
    if output == OutputFormat.JSON:
        emit_json(_report_json(path, v, code))
        raise typer.Exit(code)
    out = stdout()
    groups = group_problems(v.problems)
    _print_groups(out, groups)
    for line in _deadlock_lines(v):
        out.print(escape(line), highlight=False)
    fabric = inv.fabric
    verdict = "[bold green]ok[/]" if code == ExitCode.OK else "[bold red]failed[/]"
    out.print(
        f"{escape(fabric.name)}: {_plural(len(fabric.switches), 'switch')}, "
        f"{_plural(len(fabric.hosts), 'host')}, {_plural(len(fabric.links), 'link')}: "
        f"{_count([g for g in groups if g.first.severity == 'error'], 'error')}, "
        f"{_count([g for g in groups if g.first.severity == 'warning'], 'warning')}: {verdict}",
        highlight=False,
    )
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)
