"""One check vocabulary (issue 24 part 2): every command that runs checks (validate, audit host|switch|cabling|fleet,
doctor, validate-fabric) declares its checks as :class:`fabricd.model.checks.CheckSpec` and reports
:class:`fabricd.model.checks.Finding` objects in one :class:`~fabricd.model.checks.Report` shape; every code is
declared once across all of them.

The commands' check engines run here on real inputs: the lab inventory (and a variant with a mistake), a
``fabricd capture``-less read-back that failed, LLDP from a switch that could not be read, a machine tree under
``tmp_path``, and Prometheus answers given as the data an instant query returns (no server: the fleet's logic
is what is checked; tests/integration/test_fleet_prometheus.py runs it against a real Prometheus).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fabricd.audit.cabling import DeviceLldp
from fabricd.audit.cabling import evaluate as evaluate_cabling
from fabricd.audit.catalogue import DECLARED, GROUPS
from fabricd.audit.doctor import doctor_report, parser_role_checks, run_checks
from fabricd.audit.fleet import Sample, audit_fleet
from fabricd.audit.host import audit_host
from fabricd.audit.switch import SwitchReadback, evaluate
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd.model.checks import CheckResult, CheckSpec, Finding, Report, Severity, Status, by_code
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.nos.validate import validate
from fabricd.traffic.validate import PairReport
from tests.unit.test_checks import lab_docs, write

PKG = Path(__file__).resolve().parents[2] / "fabricd"
LAB = Path(__file__).resolve().parents[2] / "inventory" / "lab"

OTHER_SHAPES: dict[tuple[str, str], str] = {
    ("intent/checks/base.py", "Finding"): "what a validate check function yields before it is located; "
    "Check.run locates it and Validation.report gives the one Finding",
}
"""Classes named like a check or a finding that are not the vocabulary's, and why."""


def test_every_code_is_declared_once_across_every_command() -> None:
    every = [s for _, specs in GROUPS for s in specs]
    assert all(isinstance(s, CheckSpec) for s in every)
    assert len(every) == len(DECLARED), "a code is declared twice"
    assert {s.subject for s in every} == {"inventory", "host", "switch", "cabling", "fleet", "machine", "pair"}
    for s in every:
        assert re.fullmatch(r"[A-Z]+\d*(-[A-Z0-9]+)*|[A-Z]{3}\d{3}", s.code) and s.title, s


def test_a_duplicate_code_is_refused() -> None:
    a = CheckSpec(code="X-ONE", title="one", subject="host")
    with pytest.raises(ValueError, match="X-ONE is declared twice"):
        by_code([a], [CheckSpec(code="X-ONE", title="again", subject="switch")])


def test_no_other_check_or_finding_type_below_the_cli() -> None:
    """A class named ``*Check``, ``*CheckResult``, ``*CheckStatus`` or ``*Finding`` in fabricd/ is the
    vocabulary's or derives from its CheckSpec; the other is listed with why."""
    found = set()
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            named = isinstance(node, ast.ClassDef) and re.search(r"(Check|CheckResult|CheckStatus|Finding)$", node.name)
            if not named:
                continue
            bases = {ast.unparse(b) for b in node.bases}
            if rel == "model/checks.py" or "CheckSpec" in bases:
                continue
            found.add((rel, node.name))
    assert found == set(OTHER_SHAPES), found


def test_a_title_is_written_once() -> None:
    """A check's title is its declaration's: no module repeats it as a string (validate-fabric's engine did).
    Titles of one or two words ("trust mode", "prometheus") are common words and not compared."""
    titles = {s.title: s.code for s in DECLARED.values() if len(s.title.split()) >= 3}
    written: dict[str, set[str]] = {}
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in titles:
                written.setdefault(node.value, set()).add(path.relative_to(PKG).as_posix())
    assert set(written) == set(titles)
    assert {titles[t]: files for t, files in written.items() if len(files) > 1} == {}


def _check(reports: list[Report], *, with_findings: bool = True) -> list[Finding]:
    """Every report of a command is the one shape, its codes are declared, and its findings the one Finding."""
    findings = []
    for r in reports:
        assert type(r) is Report
        for c in r.checks:
            assert type(c) is CheckResult and c.code in DECLARED, c.code
            assert (c.status in (Status.FAIL, Status.WARN)) == bool(c.findings), c
            for f in c.findings:
                assert type(f) is Finding and f.code in DECLARED and f.message, f
                findings.append(f)
    assert findings or not with_findings
    return findings


def test_validate_reports_its_problems_in_the_one_shape(tmp_path: Path) -> None:
    docs = lab_docs()
    docs["fabric.yml"]["policy"]["pfc"]["watchdog"]["enabled"] = False  # FAB043, a warning
    docs["links.yml"]["links"].append({"a": "leaf1-sonic:Ethernet48", "b": "nowhere:Ethernet0"})  # FAB006, an error
    v = validate(load_inventory(write(tmp_path / "inv", docs)))
    report = v.report()
    findings = _check([report])
    assert len(findings) == len(v.problems)
    assert {c.code for c in report.checks} == {c.code for c in v.checks}
    status = {c.code: c.status for c in report.checks}
    assert status["FAB043"] == Status.WARN and status["FAB006"] == Status.FAIL and not report.compliant
    wd = next(f for f in findings if f.code == "FAB043")
    assert wd.severity == Severity.WARNING and wd.file and wd.file.endswith("fabric.yml") and wd.line
    assert wd.object == "policy.pfc.watchdog.enabled"


def test_the_audits_doctor_and_validate_fabric_report_in_the_one_shape(tmp_path: Path) -> None:
    fabric = load_inventory(LAB).fabric
    sw = fabric.switches[0]
    reports = [evaluate(SwitchIntentBuilder(fabric).build(sw), SwitchReadback("x", error="connect refused"))]
    reports.append(evaluate_cabling(fabric, [DeviceLldp(sw.name, "x", error="connect refused")]))
    reports.append(audit_host(host_intent(fabric, fabric.hosts[0].name), []))

    def query(expr: str) -> list[Sample]:
        return []  # Prometheus knows no agent

    reports += audit_fleet(query, [h.name for h in fabric.hosts]).reports
    reports.append(doctor_report(run_checks(tmp_path, ("core", "hosts")), parser_role_checks()))
    reports.append(PairReport.not_run("gpu1", "gpu3", "no runner").report)
    findings = _check(reports)
    assert {f.code for f in findings} >= {"SW-REACH", "CAB-READ", "FLEET-AGENT", "DOC-IPROUTE2", "FABRIC-TRAFFIC"}
    assert {r.kind for r in reports} == {"switch", "cabling", "host", "machine", "fabric"}


def _cli(*args: str) -> int:
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app

    return CliRunner().invoke(build_app(), list(args)).exit_code


def test_validate_and_doctor_write_junit_from_the_one_report(tmp_path: Path) -> None:
    """validate: a testcase per check, the error a failure, the warning a passing testcase with its finding as
    output, exit 1; doctor: a testcase per capability, exit 1 when one a selected feature needs is missing."""
    import xml.etree.ElementTree as ET

    docs = lab_docs()
    docs["fabric.yml"]["policy"]["pfc"]["watchdog"]["enabled"] = False
    docs["links.yml"]["links"].append({"a": "leaf1-sonic:Ethernet48", "b": "nowhere:Ethernet0"})
    inv = write(tmp_path / "inv", docs)
    assert _cli("validate", str(inv), "--junit", str(tmp_path / "v.xml")) == 1
    cases = {c.get("name", "").split()[0]: c for c in ET.parse(tmp_path / "v.xml").getroot().iter("testcase")}
    assert set(cases) == {c.code for c in validate(load_inventory(inv)).checks}
    failure = cases["FAB006"].find("failure")
    assert failure is not None and "nowhere" in (failure.text or "")
    out = cases["FAB043"].find("system-out")
    assert cases["FAB043"].find("failure") is None and out is not None and "FAB043" in (out.text or "")
    assert _cli("doctor", "--root", str(tmp_path), "--for", "hosts", "--junit", str(tmp_path / "d.xml")) == 1
    doctor = {c.get("name", "").split()[0]: c for c in ET.parse(tmp_path / "d.xml").getroot().iter("testcase")}
    assert doctor["DOC-NETNS"].find("failure") is not None and doctor["DOC-PROMTOOL"].find("skipped") is not None
