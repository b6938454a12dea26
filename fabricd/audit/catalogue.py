"""Every check fabricd declares, by the command that runs it: the one catalogue of the check vocabulary
(:mod:`fabricd.model.checks`). A code is declared once across all of them (:data:`DECLARED` raises on a
duplicate); docs/checks.md lists them (:func:`commands_markdown`, written by scripts/gen_checks_doc.py)."""

from __future__ import annotations

from fabricd.intent.checks.catalogue import LOAD_CHECKS
from fabricd.model.checks import CheckSpec, by_code
from fabricd.nos.validate import ALL_CHECKS
from fabricd.traffic.checks import TRAFFIC_CHECKS

from .cabling import CHECKS as CABLING_CHECKS
from .doctor import DOCTOR_CHECKS
from .fleet import FLEET_CHECKS
from .host import HOST_CHECKS
from .switch import SWITCH_CHECKS

GROUPS: tuple[tuple[str, tuple[CheckSpec, ...]], ...] = (
    ("validate (loading the inventory)", LOAD_CHECKS),
    ("validate", ALL_CHECKS),
    ("audit host", HOST_CHECKS),
    ("audit switch", SWITCH_CHECKS),
    ("audit cabling", CABLING_CHECKS),
    ("audit fleet", FLEET_CHECKS),
    ("doctor", DOCTOR_CHECKS),
    ("validate-fabric", TRAFFIC_CHECKS),
)
"""(the command that runs them, its checks), in the order a user meets them. ``audit fleet`` also reports the
``audit host`` checks each agent ran."""

DECLARED: dict[str, CheckSpec] = by_code(*(specs for _, specs in GROUPS))
"""Code -> its one declaration, over every command."""


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def commands_markdown() -> list[str]:
    """The checks of the audits, doctor and validate-fabric as markdown (validate's have their own sections)."""
    lines = [
        "## Checks of the other commands",
        "",
        "`fabricd audit host|switch|cabling|fleet`, `fabricd doctor` and `fabricd validate-fabric` report their "
        "checks in the same shape as `validate` (code, severity, status, findings with expected, got and a fix; "
        "text, `--output json`, `--junit`). Each code is declared once across all commands "
        "(fabricd/audit/host.py, switch.py, cabling.py, fleet.py, doctor.py, fabricd/traffic/checks.py; "
        "fabricd/audit/catalogue.py gathers them).",
        "",
    ]
    for command, specs in GROUPS[2:]:
        lines += [f"### fabricd {command}", "", "| Code | Severity | Checks | Fix |", "|---|---|---|---|"]
        lines += [f"| {s.code} | {s.severity.value} | {_cell(s.title)} | {_cell(s.hint) or '-'} |" for s in specs]
        lines.append("")
    return lines
