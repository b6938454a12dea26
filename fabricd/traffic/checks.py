"""``fabricd validate-fabric``'s checks in the one check vocabulary (:mod:`fabricd.model.checks`): what a traffic
pair asserts on its counters (:mod:`fabricd.traffic.validate` computes them) and what the traffic matrix judges
(:mod:`fabricd.traffic.matrix`), and a pair's result as a :class:`~fabricd.model.checks.Report`."""

from __future__ import annotations

from fabricd.model.checks import CheckResult, CheckSpec, Finding, Report, Status, by_code

from .validate import CheckStatus, PairReport


def _pair(code: str, title: str, hint: str = "") -> CheckSpec:
    return CheckSpec(code=code, title=title, subject="pair", hint=hint)


TRAFFIC_CHECKS: tuple[CheckSpec, ...] = (
    _pair("FABRIC-TRAFFIC", "RDMA traffic ran and payloads verified"),
    _pair("FABRIC-RDMA-BYTES", "bytes counted on the sender match the payload"),
    _pair("FABRIC-SEQUENCE", "no out-of-sequence, duplicate or retransmitted packets"),
    _pair("FABRIC-DROPS", "no drops or errors"),
    _pair("FABRIC-DSCP", "RoCE packets carry the intent's DSCP"),
    _pair("FABRIC-PRIORITY-BYTES", "bytes on the intended priority"),
    _pair("FABRIC-PFC", "pause frames only on lossless priorities"),
    _pair("FABRIC-ECN", "ECN/CNP counters readable (DCQCN)"),
    _pair("FABRIC-BAR", "throughput reaches the bar"),
    _pair("FABRIC-BASELINE", "no drop of more than 5% from the baseline"),
    _pair("FABRIC-COUNTERS", "counter-delta checks of the pair"),
)
"""Every check of a traffic pair and of the traffic matrix (``--matrix``)."""
TRAFFIC = by_code(TRAFFIC_CHECKS)

_STATUS = {CheckStatus.PASS: Status.PASS, CheckStatus.FAIL: Status.FAIL, CheckStatus.NOT_CHECKABLE: Status.SKIP}


def pair_report(r: PairReport) -> Report:
    """One pair's checks as a report (kind ``fabric``, target ``client->server``): a pair that did not run fails
    FABRIC-TRAFFIC; a check the NIC cannot support is skipped with what it needs."""
    name = f"{r.client}->{r.server}"
    checks: list[CheckResult] = []
    if not r.ran:
        ran = TRAFFIC["FABRIC-TRAFFIC"]
        checks.append(CheckResult(code=ran.code, title="RDMA traffic ran", status=Status.FAIL, findings=[
            ran.finding(obj=name, path="traffic", message=r.error or "did not run", expected="a completed session",
                        got="none")]))
    for c in r.checks:
        status = _STATUS[c.status]
        findings = [Finding(code=c.code, object=name, path=c.code.lower(), message=c.detail, expected=c.expected,
                            got=c.got)] if status == Status.FAIL else []
        note = c.detail if status != Status.SKIP else f"{c.detail}; needs {c.needs}" if c.needs else c.detail
        checks.append(CheckResult(code=c.code, title=c.title, status=status, findings=findings, note=note))
    return Report(kind="fabric", target=name, checks=checks)


__all__ = ["TRAFFIC", "TRAFFIC_CHECKS", "pair_report"]
