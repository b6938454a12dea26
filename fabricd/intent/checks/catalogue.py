"""The check catalogue (docs/checks.md) as Markdown, generated from the registry so it cannot drift.

Regenerate with ``python scripts/gen_checks_doc.py``; tests/unit/test_checks_doc.py fails when the file differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricd.model.checks import CheckSpec

from .base import Check

AREAS = {
    "topology": "Topology: names, references and cabling",
    "qos": "QoS: DSCP map, RoCE and CNP classes, traffic classes",
    "pfc": "PFC, watchdog, transport and congestion control",
    "ecn": "ECN / WRED",
    "buffers": "Buffers and headroom",
    "vlans": "VLANs and addressing",
    "nic": "NIC families: driver profiles, transports, congestion-control knobs (docs/nics.md)",
    "deadlock": "PFC deadlock and connectivity",
    "platform": "Platform schemas: what a switch OS's own schema refuses",
}

LOAD_CODES = (
    ("INV000", "any other problem found while loading the inventory (a problem with no code of its own)"),
    ("INV001", "a YAML merge key (`<<`); use `defaults:` or `groups:`"),
    ("INV002", "a key repeated in one YAML mapping"),
    ("INV003", "a file that is not UTF-8"),
    ("INV004", "a file that cannot be read"),
    ("INV005", "a YAML syntax error, an undefined alias, or more than one document in a file"),
    ("INV006", "a YAML tag such as `!!set` or `!!omap` on a mapping or list"),
    ("INV007", "a file of a directory inventory that is a symbolic link leading outside the directory (not read)"),
    ("INV008", "a mapping key that is a list, a mapping or an alias (refused unread)"),
    ("INV009", "an inventory past FABRICD_INVENTORY_MAX_BYTES or FABRICD_INVENTORY_MAX_NODES (an alias bomb)"),
    ("INV010", "the inventory path does not exist"),
    ("INV011", "a directory inventory without any `*.yml`/`*.yaml` file"),
    ("INV012", "an empty file"),
    ("INV013", "a file whose top level is not a mapping"),
    ("INV014", "an unknown top-level key (with a 'did you mean')"),
    ("INV015", "`switches`, `hosts` or `links` that is not a list"),
    ("INV016", "`policy`, `defaults` or `groups` that is not a mapping"),
    ("INV017", "a value defined in more than one file of a directory inventory"),
    ("INV018", "an unknown or malformed `defaults` section (only switch, host, port, nic)"),
    ("INV019", "a group that is not a mapping"),
    ("INV020", "a device listing a group that is not defined, or a group name that is not text"),
    (
        "INV021",
        "a group's `ports:`/`nics:` list that a member's own list replaces (use the group's `port:`/`nic:` defaults)",
    ),
    ("INV022", "a YAML alias inside the node its anchor names (a cycle)"),
    ("INV100", "a model error: unknown key, wrong type, out-of-range or not-allowed value, missing required key"),
)


LOAD_CHECKS: tuple[CheckSpec, ...] = tuple(
    CheckSpec(code=code, title=meaning, subject="inventory") for code, meaning in LOAD_CODES
)
"""The load problems as declarations (``fabricd validate`` exits 2 on any of them, before the semantic checks)."""


def catalogue_markdown(checks: tuple[Check, ...], watchdog_rows: list[str], others: Sequence[str] = ()) -> str:
    """docs/checks.md for ``checks`` (the registry, in code order); ``watchdog_rows`` the per-platform watchdog
    table (:func:`fabricd.nos.validate.watchdog_table`, from the packs' rules); ``others`` the other commands'
    checks (:func:`fabricd.audit.catalogue.commands_markdown`), appended."""
    lines = [
        "# fabricd checks",
        "",
        "<!-- Generated from fabricd/intent/checks by scripts/gen_checks_doc.py; do not edit by hand. -->",
        "",
        "`fabricd validate [INVENTORY]` loads the inventory (problems `INVnnn`, exit 2) and then runs every semantic",
        "check below (problems `FABnnn`). Each problem is printed as",
        "`severity: file:line: dotted.path: what is wrong (expected X, got Y); how to fix [CODE]`.",
        "Exit codes: 0 when there is no error (warnings allowed), 1 when a check reports an error, 2 when the",
        "inventory cannot be loaded. `--output json` gives the same as one JSON document; `--junit FILE` writes a",
        "JUnit testcase per check (a check with only warnings passes, its findings in the testcase's output).",
        "",
        f"There are {len(checks)} semantic checks: "
        f"{sum(c.severity.value == 'error' for c in checks)} errors and "
        f"{sum(c.severity.value == 'warning' for c in checks)} warnings.",
        "",
        "## Contents",
        "",
    ]
    for area, title in AREAS.items():
        codes = [c.code for c in checks if c.area == area]
        if codes:
            lines.append(f"- {title}: {', '.join(f'[{c}](#{c.lower()})' for c in codes)}")
    lines += ["- [Load problems (INVnnn)](#load-problems-invnnn)", ""]
    for area, title in AREAS.items():
        area_checks = [c for c in checks if c.area == area]
        if not area_checks:
            continue
        lines += [f"## {title}", ""]
        for c in area_checks:
            lines += [
                f"### {c.code}",
                "",
                f"**{c.title}** (`{c.name}`, {c.severity.value})",
                "",
                f"Why: {c.why}",
                "",
                f"Fix: {c.fix}.",
                "",
            ]
        if area == "pfc":
            lines += [
                "### Watchdog timer ranges per platform (FAB041, FAB042)",
                "",
                *watchdog_rows,
                "",
                "Each range is the pack's rule with its source (`fabricd/nos/<id>/rules.py`); docs/platforms.md "
                "lists the unverified ones.",
                "",
                "### Host <-> switch consistency",
                "",
                "fabricd derives the PFC priorities, trust mode, DSCP map and CNP class of both ends of every "
                "host link from the one fabric-wide policy; there is deliberately no per-host or per-port "
                "override, so a PFC mismatch between a NIC and its switch port cannot be written in the "
                "intent. What can still differ is checked: the peer exists (FAB009), speeds match (FAB012), "
                "NIC frames fit the port MTU (FAB013), the port carries the NIC's VLAN (FAB076), the port has "
                "the host role (FAB015) and PCP trust has tagged NICs (FAB039). The live comparison of both "
                "ends is `fabricd audit`.",
                "",
            ]
    lines += [
        "## Load problems (INVnnn)",
        "",
        "Reported before any semantic check runs; `fabricd validate` exits 2 and prints them to stderr.",
        "",
        "| Code | Meaning |",
        "|---|---|",
    ]
    lines += [f"| {code} | {meaning} |" for code, meaning in LOAD_CODES]
    lines.append("")
    lines += others
    return "\n".join(lines)
