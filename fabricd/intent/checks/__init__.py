"""Semantic checks of a loaded inventory (codes FABnnn; catalogue in docs/checks.md).

``run_checks(inventory)`` runs every check and returns located :class:`~fabricd.errors.Problem` objects, errors and
warnings, sorted by file, line and code. ``validate(inventory)`` does the same and also returns the
:class:`Context`, whose ``deadlock`` and ``failures`` reports the CLI prints. ``ALL_CHECKS`` is the registry, an
explicit tuple built from each module's ``CHECKS`` (no import-time registration).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabricd.errors import Problem

from . import buffers, ecn, eos, fabric, nics, nvue, pfc, qos, sonic, structure, topology, vlans
from .base import Check, CheckOptions, Context, Finding, Severity, check

if TYPE_CHECKING:
    from fabricd.inventory import Inventory

ALL_CHECKS: tuple[Check, ...] = (
    *structure.CHECKS,
    *topology.CHECKS,
    *qos.CHECKS,
    *pfc.CHECKS,
    *ecn.CHECKS,
    *buffers.CHECKS,
    *vlans.CHECKS,
    *fabric.CHECKS,
    *nvue.CHECKS,
    *eos.CHECKS,
    *sonic.CHECKS,
    *nics.CHECKS,
)
CHECKS_BY_CODE: dict[str, Check] = {c.code: c for c in ALL_CHECKS}


@dataclass(frozen=True)
class Validation:
    """Problems found (sorted) and the context they were found in."""

    problems: list[Problem]
    context: Context

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.ERROR.value]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.WARNING.value]


def _key(p: Problem) -> tuple[str, int, str, str]:
    loc = p.location
    return (str(loc.file) if loc else "", loc.line if loc else 0, p.code, p.path)


def validate(inventory: Inventory, options: CheckOptions | None = None,
             checks: Iterable[Check] = ALL_CHECKS) -> Validation:
    """Run ``checks`` (default: all) on ``inventory``."""
    ctx = Context(inventory, options)
    problems: list[Problem] = []
    for c in checks:
        problems.extend(c.run(ctx))
    problems.sort(key=_key)
    first = {c.code for c in structure.CHECKS}  # a missing section first: it explains what follows
    problems.sort(key=lambda p: p.code not in first)
    return Validation(problems, ctx)


def run_checks(inventory: Inventory, options: CheckOptions | None = None) -> list[Problem]:
    """Every problem the semantic checks find in ``inventory``, errors and warnings, sorted by location."""
    return validate(inventory, options).problems


__all__ = [
    "ALL_CHECKS",
    "CHECKS_BY_CODE",
    "Check",
    "CheckOptions",
    "Context",
    "Finding",
    "Severity",
    "Validation",
    "check",
    "run_checks",
    "validate",
]
