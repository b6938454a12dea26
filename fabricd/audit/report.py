"""Audit results: checks with codes and fix hints, rendered to text, JSON or JUnit XML (one testcase per check).

JUnit follows the de-facto schema CI systems read (GitHub test reporters, GitLab ``artifacts:reports:junit``):
``<testsuites><testsuite name tests failures errors skipped><testcase classname name><failure message>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from enum import StrEnum

from pydantic import Field, JsonValue

from fabricd.errors import Fix
from fabricd.model.types import Model


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class Finding(Model):
    """One way live state differs from intent: which check, on what, expected vs got, how to fix."""

    code: str = Field(description="check code, e.g. HOST-PFC")
    object: str = Field(description="interface, RDMA device or switch the finding is about")
    path: str = Field(description="sysfs path, link attribute or DCB object")
    message: str
    expected: JsonValue = None
    got: JsonValue = None
    hint: str = Field(default="", description="how to fix it, in words")
    fixes: list[Fix] = Field(default_factory=list, description="fabricd commands that fix it, as data (the CLI "
                             "renders them as command lines into the hint)")

    def render(self) -> str:
        text = f"{self.code} {self.object} {self.path}: {self.message} (expected {_show(self.expected)}, " \
               f"got {_show(self.got)})"
        hint = "; ".join([*([self.hint] if self.hint else []), *(f.describe() for f in self.fixes)])
        return f"{text}; {hint}" if hint else text


class CheckResult(Model):
    code: str
    title: str
    status: Status
    findings: list[Finding] = Field(default_factory=list)
    note: str | None = Field(default=None, description="why a check was skipped, or what it looked at")


class AuditReport(Model):
    """All checks of one target (a host or a switch)."""

    kind: str = Field(description="host or switch")
    target: str
    checks: list[CheckResult] = Field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for c in self.checks for f in c.findings]

    @property
    def compliant(self) -> bool:
        return all(c.status != Status.FAIL for c in self.checks)

    def to_dict(self) -> dict[str, JsonValue]:
        data = self.model_dump(mode="json")
        data["compliant"] = self.compliant
        data["summary"] = {s.value: sum(1 for c in self.checks if c.status == s) for s in Status}
        return data


def _show(value: JsonValue) -> str:
    if value is None:
        return "nothing (unset or missing)"
    return str(value)


def render_text(report: AuditReport) -> str:
    """Plain text: one line per check, then its findings indented."""
    lines = [f"audit {report.kind} {report.target}: " + ("compliant" if report.compliant else
                                                         f"{len(report.findings)} finding(s)")]
    for c in report.checks:
        mark = {Status.PASS: "ok  ", Status.FAIL: "FAIL", Status.SKIP: "skip"}[c.status]
        lines.append(f"  {mark} {c.code:<18} {c.title}" + (f"  ({c.note})" if c.note else ""))
        lines += [f"         {f.render()}" for f in c.findings]
    return "\n".join(lines) + "\n"


def render_junit(reports: list[AuditReport]) -> str:
    """JUnit XML: a testsuite per target, a testcase per check (failure = findings, skipped = not checked)."""
    suites = ET.Element("testsuites", name="fabricd audit")
    total = fails = skips = 0
    for report in reports:
        failures = sum(1 for c in report.checks if c.status == Status.FAIL)
        skipped = sum(1 for c in report.checks if c.status == Status.SKIP)
        suite = ET.SubElement(suites, "testsuite", name=f"fabricd audit {report.kind} {report.target}",
                              tests=str(len(report.checks)), failures=str(failures), errors="0",
                              skipped=str(skipped))
        for c in report.checks:
            case = ET.SubElement(suite, "testcase", classname=f"fabricd.audit.{report.kind}.{report.target}",
                                 name=f"{c.code} {c.title}")
            if c.status == Status.FAIL:
                fail = ET.SubElement(case, "failure", message=c.findings[0].render() if c.findings else c.title,
                                     type=c.code)
                fail.text = "\n".join(f.render() for f in c.findings)
            elif c.status == Status.SKIP:
                ET.SubElement(case, "skipped", message=c.note or "not checked")
        total += len(report.checks)
        fails += failures
        skips += skipped
    suites.set("tests", str(total))
    suites.set("failures", str(fails))
    suites.set("errors", "0")
    suites.set("skipped", str(skips))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
