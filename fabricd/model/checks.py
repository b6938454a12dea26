"""The one check vocabulary of fabricd: how a check is declared and what a run of checks reports.

Every kind of check (``fabricd validate``'s inventory checks, ``audit host|switch|cabling|fleet``, ``doctor`` and
``validate-fabric``) is declared once as a :class:`CheckSpec` (code, severity, subject, title, fix hint in words and
as :class:`~fabricd.errors.Fix` data) and reports :class:`Finding` objects in :class:`CheckResult` objects in one
:class:`Report` per target. Only ``fabricd.cli`` renders them (text, JSON, JUnit; ``fabricd.cli.report``) and turns
a report into an exit code. Codes are unique across every command (tests/unit/test_check_vocabulary.py;
the whole catalogue is :data:`fabricd.audit.catalogue.DECLARED` and docs/checks.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from pydantic import Field, JsonValue

from fabricd.errors import Fix, Problem

from .types import Model


class Severity(StrEnum):
    """``error``: a finding makes the command exit 1; ``warning``: reported, the command still succeeds."""

    ERROR = "error"
    WARNING = "warning"


class Status(StrEnum):
    """The outcome of one check on one target: ``warn`` is a check whose findings are all warnings."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


@dataclass(frozen=True, kw_only=True)
class CheckSpec:
    """The declaration of a check: its stable code, what it is about (``subject``: inventory, host, switch,
    cabling, fleet, machine, pair), the one-line message of what it asserts (``title``), its severity, and how to
    fix what it finds: ``hint`` in words and ``fixes`` as fabricd commands (data; the CLI renders them). ``why`` is
    the rationale, where the catalogue gives one."""

    code: str
    title: str
    subject: str
    severity: Severity = Severity.ERROR
    hint: str = ""
    fixes: tuple[Fix, ...] = ()
    why: str = ""

    def finding(
        self,
        *,
        obj: str,
        path: str = "",
        message: str,
        expected: JsonValue = None,
        got: JsonValue = None,
        hint: str | None = None,
        fixes: Iterable[Fix] | None = None,
    ) -> Finding:
        """A finding of this check: the spec's severity, hint and fixes unless given."""
        return Finding(
            code=self.code,
            severity=self.severity,
            object=obj,
            path=path,
            message=message,
            expected=expected,
            got=got,
            hint=self.hint if hint is None else hint,
            fixes=list(self.fixes if fixes is None else fixes),
        )


S = TypeVar("S", bound=CheckSpec)


def by_code(*groups: Iterable[S]) -> dict[str, S]:
    """Code -> declaration over ``groups``; a code declared twice is a ``ValueError`` naming it."""
    out: dict[str, S] = {}
    for spec in (s for g in groups for s in g):
        if spec.code in out:
            raise ValueError(f"check code {spec.code} is declared twice ({out[spec.code].title!r} and {spec.title!r})")
        out[spec.code] = spec
    return out


def _show(value: JsonValue) -> str:
    return "nothing (unset or missing)" if value is None else str(value)


class Finding(Model):
    """One thing a check found on its target: which check, on what, where, expected vs got, how to fix it.

    ``file``/``line`` locate it in the inventory (``fabricd validate``'s findings); the audits locate it on the
    device instead (``object`` and ``path``)."""

    code: str = Field(description="check code, e.g. HOST-PFC or FAB013")
    severity: Severity = Severity.ERROR
    object: str = Field(
        default="",
        description="interface, RDMA device, switch, cable, capability or dotted inventory path the finding is about",
    )
    path: str = Field(default="", description="sysfs path, link attribute, DCB object, LLDP, or the inventory field")
    message: str
    expected: JsonValue = None
    got: JsonValue = None
    hint: str = Field(default="", description="how to fix it, in words")
    fixes: list[Fix] = Field(
        default_factory=list,
        description="fabricd commands that fix it, as data (the CLI renders them as command lines into the hint)",
    )
    file: str | None = Field(default=None, description="inventory file of the value (validate)")
    line: int | None = Field(default=None, description="1-based line in ``file``")

    @classmethod
    def of_problem(cls, problem: Problem) -> Finding:
        """A located inventory problem (``fabricd validate``) as a finding: ``object`` is its dotted path, and
        ``file``/``line`` where the value is written."""
        loc = problem.location
        return cls(
            code=problem.code,
            severity=Severity(problem.severity),
            object=problem.path,
            message=problem.message,
            expected=problem.expected,
            got=problem.got,
            hint=problem.hint or "",
            file=str(loc.file) if loc is not None else None,
            line=loc.line if loc and loc.line else None,
        )

    def render(self) -> str:
        """``CODE object path: message (expected X, got Y); hint; fixes`` (fixes in their plain form: the CLI
        renders them as command lines into ``hint`` first)."""
        where = f"{self.file}:{self.line}: " if self.file and self.line else f"{self.file}: " if self.file else ""
        text = (
            f"{self.code} {where}{self.object} {self.path}".rstrip()
            + f": {self.message} (expected {_show(self.expected)}, got {_show(self.got)})"
        )
        hint = "; ".join([*([self.hint] if self.hint else []), *(f.describe() for f in self.fixes)])
        return f"{text}; {hint}" if hint else text


class CheckResult(Model):
    """One check on one target: its status, its findings, and a note (why it was skipped, or what it read)."""

    code: str
    title: str
    status: Status
    findings: list[Finding] = Field(default_factory=list)
    note: str | None = Field(default=None, description="why a check was skipped, or what it looked at")


class Report(Model):
    """Every check of one target (a host, a switch, the cabling, an inventory, this machine, a traffic pair)."""

    kind: str = Field(description="what the target is: host, switch, cabling, inventory, machine, fabric")
    target: str
    checks: list[CheckResult] = Field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for c in self.checks for f in c.findings]

    @property
    def compliant(self) -> bool:
        """No check failed (warnings and skips allowed)."""
        return all(c.status != Status.FAIL for c in self.checks)

    def to_dict(self) -> dict[str, JsonValue]:
        data = self.model_dump(mode="json")
        data["compliant"] = self.compliant
        data["summary"] = {s.value: sum(1 for c in self.checks if c.status == s) for s in Status}
        return data


def status_of(spec: CheckSpec, findings: list[Finding]) -> Status:
    """FAIL when a finding is an error, WARN when every finding is a warning, PASS when there is none."""
    if not findings:
        return Status.PASS
    return Status.WARN if all(f.severity == Severity.WARNING for f in findings) else Status.FAIL


class Results:
    """Findings, skips and notes per declared check, gathered in any order and reported in declaration order.

    ``skip`` keeps the first reason; a check with findings is never skipped; ``notes`` go with a passed check
    (and with a failed one when ``note_failures``)."""

    def __init__(self, specs: Iterable[CheckSpec]) -> None:
        self.specs = tuple(specs)
        self.found: dict[str, list[Finding]] = {s.code: [] for s in self.specs}
        self.skipped: dict[str, str] = {}
        self.notes: dict[str, str] = {}

    def add(self, finding: Finding) -> None:
        self.found[finding.code].append(finding)

    def skip(self, code: str, why: str) -> None:
        self.skipped.setdefault(code, why)

    def results(self, *, note_failures: bool = False) -> list[CheckResult]:
        return [self._result(s, note_failures) for s in self.specs]

    def _result(self, spec: CheckSpec, note_failures: bool) -> CheckResult:
        found = self.found[spec.code]
        if found:
            return CheckResult(
                code=spec.code,
                title=spec.title,
                status=status_of(spec, found),
                findings=found,
                note=self.notes.get(spec.code) if note_failures else None,
            )
        if spec.code in self.skipped:
            return CheckResult(code=spec.code, title=spec.title, status=Status.SKIP, note=self.skipped[spec.code])
        return CheckResult(code=spec.code, title=spec.title, status=Status.PASS, note=self.notes.get(spec.code))

    def report(self, kind: str, target: str, *, note_failures: bool = False) -> Report:
        return Report(kind=kind, target=target, checks=self.results(note_failures=note_failures))


def report_of(kind: str, target: str, specs: Iterable[CheckSpec], problems: Iterable[Problem]) -> Report:
    """The report of checks that locate what they find in the inventory (``fabricd validate``): one result per
    check in ``specs``, its problems as findings."""
    res = Results(specs)
    for p in problems:
        res.add(Finding.of_problem(p))
    return res.report(kind, target)


def result_of(
    spec: CheckSpec, status: Status, findings: Iterable[Finding] = (), note: str | None = None
) -> CheckResult:
    """One check's result, titled from its declaration."""
    return CheckResult(code=spec.code, title=spec.title, status=status, findings=list(findings), note=note)
