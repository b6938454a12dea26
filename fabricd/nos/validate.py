"""``fabricd validate``'s check set, assembled from the registry: the fabric-wide checks
(:data:`fabricd.intent.checks.FABRIC_CHECKS`), the device-rule checks every pack's rules feed
(:mod:`fabricd.nos.checks`), and each pack's own checks (``PlatformSpec.checks``). A new pack adds its rules and
checks through its spec; nothing here names a platform.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricd.errors import Problem
from fabricd.intent.checks import FABRIC_CHECKS, Check, CheckOptions, Validation
from fabricd.intent.checks import validate as _validate
from fabricd.inventory import Inventory

from . import checks
from .registry import SPECS


def all_checks() -> tuple[Check, ...]:
    """Every check, in catalogue order: fabric-wide, device rules, then each pack's own (registry order)."""
    return (*FABRIC_CHECKS, *checks.CHECKS, *(c for spec in SPECS.values() for c in spec.checks))


ALL_CHECKS: tuple[Check, ...] = all_checks()
CHECKS_BY_CODE: dict[str, Check] = {c.code: c for c in ALL_CHECKS}


def validate(
    inventory: Inventory, options: CheckOptions | None = None, checks: Iterable[Check] = ALL_CHECKS
) -> Validation:
    """Run every check (or ``checks``) on ``inventory``: sorted problems and the context."""
    return _validate(inventory, options, checks)


def run_checks(inventory: Inventory, options: CheckOptions | None = None) -> list[Problem]:
    """Every problem the checks find in ``inventory``, errors and warnings, sorted by location."""
    return validate(inventory, options).problems


def watchdog_table() -> list[str]:
    """The watchdog grid of every pack as markdown rows (docs/checks.md, FAB041/FAB042)."""
    rows = ["| Platform | Detection ms | Restoration ms | Poll ms | Notes (source) |", "|---|---|---|---|---|"]

    def span(rng: tuple[int, int] | None, polls: tuple[int, int] | None) -> str:
        if rng is not None:
            return f"{rng[0]}-{rng[1]}"
        if polls is not None:
            return f"poll x {polls[0]}-{polls[1]}"
        return "not configurable"

    for platform, spec in SPECS.items():
        g = spec.rules.watchdog
        notes = [g.source.ref + ("" if g.source.verified else " (unverified)")]
        if g.step_ms:
            notes.append(f"multiples of {g.step_ms} ms")
        notes.append("actions " + ", ".join(g.actions))
        poll = f"{g.poll_ms[0]}-{g.poll_ms[1]}" if g.poll_ms else "not configurable"
        rows.append(
            f"| `{platform.value}` | {span(g.detection_ms, g.detect_polls)} | "
            f"{span(g.restoration_ms, g.restore_polls)} | {poll} | {'; '.join(notes).replace('|', '/')} |"
        )
    return rows
