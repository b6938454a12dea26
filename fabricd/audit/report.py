"""Audit results in the one check vocabulary (:mod:`fabricd.model.checks`): an audit of one target is a
:class:`~fabricd.model.checks.Report` (``AuditReport``), one :class:`CheckResult` per declared check, each with its
:class:`Finding` objects. ``fabricd.cli.report`` renders them as text, JSON or JUnit XML.
"""

from __future__ import annotations

from fabricd.model.checks import CheckResult, CheckSpec, Finding, Report, Results, Severity, Status, result_of

AuditReport = Report
"""The report of one audited target (a host, a switch, the cabling, a fleet host, a traffic pair)."""

__all__ = ["AuditReport", "CheckResult", "CheckSpec", "Finding", "Report", "Results", "Severity", "Status", "result_of"]
