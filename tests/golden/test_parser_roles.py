"""The meta-test of the parser-role registry (fabricd/nos/roles.py): every role fabricd parses has a real
capture under tests/golden/ or an ``unverified`` declaration, never both and never neither; every real capture
belongs to a role; the registry covers every command the exporter runs; docs/platforms.md carries its table.

When a test here fails after you added a capture: name it ``<role>--<source>.txt`` in the role's folder (or add a
glob to the role's ``captures``) and drop the role's ``unverified`` reason. See docs/captures.md.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from fabricd.audit.switch import CONFIG_PARSERS
from fabricd.nos import roles
from fabricd.nos.registry import SPECS
from fabricd.nos.roles import (
    Role,
    all_roles,
    captures_of,
    is_capture,
    is_real_source,
    real_captures_of,
    source_line,
)

GOLDEN = Path(__file__).parent
REPO = GOLDEN.parents[1]
SCANNED = ("readers", "switch_config")
"""Folders under tests/golden whose every real capture must belong to a role."""

ROLES = all_roles()


def test_role_ids_are_unique() -> None:
    ids = [r.id for r in ROLES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_exporter_command_has_a_role() -> None:
    by_id = {r.id: r for r in ROLES}
    for platform, show in ((p.value, s.show) for p, s in SPECS.items()):
        keys = {*show.commands, *show.optional}
        for key in keys:
            role = by_id.get(f"{platform}/{key}")
            assert role is not None, f"{platform}: the exporter runs {key!r} but no parser role declares it"
            assert role.used_by.startswith("export"), role
            assert not role.command.startswith("(no "), role
        declared = {r.name for r in ROLES if r.platform == platform and r.used_by.startswith("export")}
        assert declared <= keys, f"{platform}: roles for commands the exporter no longer runs: {declared - keys}"


@pytest.mark.parametrize("platform", sorted(p.value for p in CONFIG_PARSERS))
def test_every_platform_has_config_and_version_roles(platform: str) -> None:
    ids = {r.id for r in ROLES}
    assert f"{platform}/running-config" in ids
    assert f"{platform}/version" in ids


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.id)
def test_role_parser_exists(role: Role) -> None:
    module_name, _, attr = role.parser.rpartition(".")
    try:
        module = importlib.import_module(role.parser)
    except ImportError:
        module = importlib.import_module(module_name)
        assert callable(getattr(module, attr)), role.parser
    else:
        assert module is not None


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.id)
def test_role_is_verified_or_declared_unverified(role: Role) -> None:
    real = real_captures_of(role, GOLDEN)
    if role.verified:
        lab = [str(p.relative_to(GOLDEN)) for p in captures_of(role, GOLDEN)]
        assert real, (
            f"{role.id} is declared verified but has no real capture (linked, not real: {lab or 'none'}); "
            f"add one named {role.folder}/{role.name}--<source>.txt with a '# source:' first line, or "
            "declare it unverified with the reason"
        )
    else:
        assert role.unverified and role.unverified.strip(), f"{role.id}: give the reason it is unverified"
        assert not real, (
            f"{role.id} is declared unverified but has real capture(s) "
            f"{[str(p.relative_to(GOLDEN)) for p in real]}: remove its `unverified` reason"
        )


def _real_captures() -> list[Path]:
    found: list[Path] = []
    for top in SCANNED:
        for path in sorted((GOLDEN / top).rglob("*")):
            if not is_capture(path) or (path.is_file() and (path.parent / "SOURCE").is_file()):
                continue
            if any((parent / "SOURCE").is_file() for parent in path.parents if GOLDEN / top in parent.parents):
                continue  # a file inside a capture tree
            if is_real_source(source_line(path)):
                found.append(path)
    return found


def test_every_real_capture_belongs_to_a_role() -> None:
    linked = {p for r in ROLES for p in captures_of(r, GOLDEN)}
    orphans = [str(p.relative_to(GOLDEN)) for p in _real_captures() if p not in linked]
    assert not orphans, (
        f"real captures no parser role claims: {orphans}; name each <role>--<source>.txt in its "
        "role's folder or add a glob to the role in fabricd/nos/roles.py"
    )


def test_capture_scan_sees_the_known_captures() -> None:
    """The scan is not vacuous: it finds the captures of every kind (switch text, config, ethtool, sysfs trees)."""
    names = {p.name for p in _real_captures()}
    assert {"show-pfc-counters-ntc.txt", "azurelocal-tor.txt", "bnxt_en-ethq.txt", "procfs-testdata"} <= names


def test_real_source_rule() -> None:
    assert is_real_source("# source: networktocode/ntc-templates tests/sonic/x.raw @ 5fa854bd")
    assert not is_real_source("# source: fabricd lab simulator lab/fabricd_lab/sonic.py (this repository)")
    assert not is_real_source("# source: no public capture exists; written from EOS's documented field names")
    assert not is_real_source("")


def test_unverified_roles_are_listed() -> None:
    unverified = roles.unverified_roles()
    assert unverified and all(not r.verified for r in unverified)
    # issue 16's NX-OS item: the exporter polls the text forms of pfc and queuing, which real Nexus captures verify;
    # their `| json` forms and the watchdog (no device output in any form) stay unverified until a capture lands
    by_id = {r.id: r for r in ROLES}
    for polled in ("cisco_nxos/pfc", "cisco_nxos/queuing"):
        assert by_id[polled].verified and " | json" not in by_id[polled].command, by_id[polled]
        assert real_captures_of(by_id[polled], GOLDEN), polled
    for rid in ("cisco_nxos/pfc-json", "cisco_nxos/queuing-json", "cisco_nxos/pfcwd"):
        role = by_id[rid]
        assert role in unverified or real_captures_of(role, GOLDEN), rid
        assert role.verified or "searched" in (role.unverified or ""), f"{rid}: say where the search looked"


def test_platforms_doc_carries_the_table() -> None:
    doc = (REPO / "docs" / "platforms.md").read_text()
    table = roles.markdown_table(GOLDEN)
    assert table in doc, (
        "docs/platforms.md's parser-role table is stale; regenerate it with `python scripts/gen_roles_doc.py`"
    )


def test_every_parser_a_switch_capture_is_linked_to_reads_it() -> None:
    """A capture verifies only roles whose parser reads something from it: tests/golden/test_readers_golden.py reads
    each switch capture with every parser linked to it (tests/golden/capture_links.py), and here each of them alone
    must read something, so a glob that links a capture to the wrong role fails."""
    from capture_links import bound, capture_text, parsers_of
    from test_readers_golden import SWITCH_CAPTURES

    empty = []
    checked = 0
    for path in SWITCH_CAPTURES:
        if not is_real_source(source_line(path)):
            continue
        for fn in parsers_of(path):
            checked += 1
            data = bound(path, fn)(capture_text(path)).as_dict()
            if not any(v for k, v in data.items() if k != "problems"):
                empty.append(f"{path.relative_to(GOLDEN)} (parser {fn.__module__}.{fn.__name__})")
    assert checked >= 10, "the check must see the real switch captures"
    assert not empty, f"captures linked to a role whose parser reads nothing from them: {empty}"
