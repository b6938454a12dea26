"""Rendering the one check report (:class:`fabricd.model.checks.Report`) for every command that runs checks:
text, JSON, JUnit XML, with each finding's fixes rendered as command lines, and the exit code a set of reports
gives.

JUnit follows the de-facto schema CI systems read (GitHub test reporters, GitLab ``artifacts:reports:junit``):
``<testsuites><testsuite name tests failures errors skipped><testcase classname name><failure message>``. A check
whose findings are all warnings is a passing testcase with the findings in ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import typer

from fabricd.errors import HostBackendError
from fabricd.model.checks import CheckResult, Report, Status

from .common import ExitCode, OutputFormat, emit_json, with_fixes

_MARK = {Status.PASS: "ok  ", Status.FAIL: "FAIL", Status.WARN: "warn", Status.SKIP: "skip"}


def command_hints(report: Report, *, keep_fixes: bool) -> Report:
    """The report with each finding's fixes rendered as command lines into its hint (``keep_fixes``: the
    structured fixes stay too, for JSON)."""
    checks = [
        c.model_copy(
            update={
                "findings": [
                    f.model_copy(update={"hint": with_fixes(f.hint, f.fixes), "fixes": f.fixes if keep_fixes else []})
                    if f.fixes
                    else f
                    for f in c.findings
                ]
            }
        )
        for c in report.checks
    ]
    return report.model_copy(update={"checks": checks})


def render_text(report: Report, *, label: str = "audit") -> str:
    """Plain text: a verdict line, one line per check, then its findings indented."""
    lines = [
        f"{label} {report.kind} {report.target}: "
        + ("compliant" if report.compliant else f"{len(report.findings)} finding(s)")
    ]
    for c in report.checks:
        lines.append(f"  {_MARK[c.status]} {c.code:<18} {c.title}" + (f"  ({c.note})" if c.note else ""))
        lines += [f"         {f.render()}" for f in c.findings]
    return "\n".join(lines) + "\n"


def _testcase(suite: ET.Element, report: Report, c: CheckResult, label: str) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{label.replace(' ', '.')}.{report.kind}.{report.target}",
        name=f"{c.code} {c.title}",
    )
    if c.status == Status.FAIL:
        fail = ET.SubElement(case, "failure", message=c.findings[0].render() if c.findings else c.title, type=c.code)
        fail.text = "\n".join(f.render() for f in c.findings)
    elif c.status == Status.SKIP:
        ET.SubElement(case, "skipped", message=c.note or "not checked")
    elif c.status == Status.WARN:
        ET.SubElement(case, "system-out").text = "\n".join(f.render() for f in c.findings)


def render_junit(reports: list[Report], *, label: str = "fabricd audit") -> str:
    """JUnit XML: a testsuite per target, a testcase per check (failure = findings, skipped = not checked)."""
    suites = ET.Element("testsuites", name=label)
    total = fails = skips = 0
    for report in reports:
        failures = sum(1 for c in report.checks if c.status == Status.FAIL)
        skipped = sum(1 for c in report.checks if c.status == Status.SKIP)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"{label} {report.kind} {report.target}",
            tests=str(len(report.checks)),
            failures=str(failures),
            errors="0",
            skipped=str(skipped),
        )
        for c in report.checks:
            _testcase(suite, report, c, label)
        total += len(report.checks)
        fails += failures
        skips += skipped
    suites.set("tests", str(total))
    suites.set("failures", str(fails))
    suites.set("errors", "0")
    suites.set("skipped", str(skips))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(path: Path, reports: list[Report], *, label: str = "fabricd audit") -> None:
    """Write :func:`render_junit` to ``path`` (its folder is made); an unwritable path is a located error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_junit(reports, label=label))
    except OSError as exc:
        raise HostBackendError(
            "write", str(path), exc.strerror or str(exc), errno=exc.errno, hint="give a writable --junit path"
        ) from exc


def exit_code(reports: list[Report]) -> ExitCode:
    """FINDINGS when a report has a failed check, else OK."""
    return ExitCode.OK if all(r.compliant for r in reports) else ExitCode.FINDINGS


def finish(reports: list[Report], output: OutputFormat, junit: Path | None) -> None:
    """Print, write JUnit, and exit 0 (compliant) or 1 (findings)."""
    reports = [command_hints(r, keep_fixes=output == OutputFormat.JSON) for r in reports]
    if junit is not None:
        write_junit(junit, reports)
    if output == OutputFormat.JSON:
        emit_json(reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports])
    else:
        for r in reports:
            typer.echo(render_text(r), nl=False)
    code = exit_code(reports)
    if code != ExitCode.OK:
        raise typer.Exit(code)
