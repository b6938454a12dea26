"""Fabric-wide semantic checks of a loaded inventory (codes FABnnn; catalogue in docs/checks.md).

``FABRIC_CHECKS`` is an explicit tuple built from each module's ``CHECKS`` (no import-time registration): what
holds whatever NOS runs the fabric. What one NOS accepts lives in its platform pack (``fabricd/nos/<id>/rules.py``
and ``checks.py``); :mod:`fabricd.nos.validate` assembles both from the registry and is what ``fabricd validate``
runs. ``validate(inventory, options, checks)`` runs ``checks`` and returns the located, sorted
:class:`~fabricd.errors.Problem` objects with the :class:`Context`, whose ``deadlock`` and ``failures`` reports the
CLI prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabricd.errors import Problem
from fabricd.model.checks import Report, report_of

from . import buffers, ecn, fabric, nics, pfc, qos, structure, topology, vlans
from .base import Check, CheckOptions, Context, Finding, Severity, check

if TYPE_CHECKING:
    from fabricd.inventory import Inventory

FABRIC_CHECKS: tuple[Check, ...] = (
    *structure.CHECKS,
    *topology.CHECKS,
    *qos.CHECKS,
    *pfc.CHECKS,
    *ecn.CHECKS,
    *buffers.CHECKS,
    *vlans.CHECKS,
    *fabric.CHECKS,
    *nics.CHECKS,
)


@dataclass(frozen=True)
class Validation:
    """Problems found (sorted) and the context they were found in."""

    problems: list[Problem]
    context: Context
    checks: tuple[Check, ...] = ()
    """The checks that ran (their codes are the report's)."""

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.ERROR.value]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.WARNING.value]

    def report(self) -> Report:
        """The run in the one check vocabulary: one result per check that ran, its problems as findings."""
        return report_of("inventory", self.context.fabric.name, self.checks, self.problems)


def _key(p: Problem) -> tuple[str, int, str, str]:
    loc = p.location
    return (str(loc.file) if loc else "", loc.line if loc else 0, p.code, p.path)


def validate(inventory: Inventory, options: CheckOptions | None, checks: Iterable[Check]) -> Validation:
    """Run ``checks`` on ``inventory``. No default: what ``fabricd validate`` runs is every check, fabric-wide and
    each pack's (:func:`fabricd.nos.validate.validate`); a caller that ran only the fabric-wide ones would accept
    what a NOS refuses."""
    ctx = Context(inventory, options)
    checks = tuple(checks)
    problems: list[Problem] = []
    for c in checks:
        problems.extend(c.run(ctx))
    problems.sort(key=_key)
    first = {c.code for c in structure.CHECKS}  # a missing section first: it explains what follows
    problems.sort(key=lambda p: p.code not in first)
    return Validation(problems, ctx, checks)


__all__ = [
    "FABRIC_CHECKS",
    "Check",
    "CheckOptions",
    "Context",
    "Finding",
    "Severity",
    "Validation",
    "check",
    "validate",
]
