"""The field-coverage matrix (fabricd/nos/coverage.py): every field of the inventory model, for every target the
registry has plus the Linux host, is rendered, used, or said by validate to be inexpressible (issue 24, part 4).

The fields are walked from the model, so a new field fails here until it has an entry; so does a field no target
handles (accepted and silently dropped). docs/platforms.md carries the generated tables."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from fabricd.nos import coverage
from fabricd.nos.registry import SPECS
from fabricd.nos.validate import CHECKS_BY_CODE

REPO = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_platform_tables", REPO / "scripts" / "gen_platform_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_field_has_a_status_for_every_target() -> None:
    missing = [
        (f, t) for f, row in coverage.matrix() for t, v in zip(coverage.targets(), row, strict=True) if v is None
    ]
    assert missing == [], "add an entry to fabricd/nos/coverage.py FIELDS (or the pack's rules.coverage)"


def test_no_field_is_accepted_and_dropped() -> None:
    dropped = [f for f, row in coverage.matrix() if not any(coverage.handled(v) for v in row)]
    assert dropped == []


def test_entries_name_real_fields_and_real_checks() -> None:
    fields = set(coverage.model_fields())
    keys = list(coverage.FIELDS) + [k for s in SPECS.values() for k in s.rules.coverage]
    for key in keys:
        if key.endswith(".*"):
            assert any(f.startswith(key[:-1]) for f in fields), key
        else:
            assert key in fields, key
    statuses = [v for _f, row in coverage.matrix() for v in row if v is not None]
    for code in {c for v in statuses for c in re.findall(r"FAB\d{3}", v)}:
        assert code in CHECKS_BY_CODE, code


def test_targets_come_from_the_registry() -> None:
    assert coverage.targets() == [*(p.value for p in SPECS), "host"]


def test_a_new_field_without_an_entry_fails() -> None:
    """The meta-test has teeth: a field the table does not know resolves to no status."""
    assert coverage.status("switches[].ports[].no_such_field", "sonic") is None


def test_platforms_doc_tables_are_current() -> None:
    text = (REPO / "docs" / "platforms.md").read_text()
    gen = _generator()
    for name, body in gen.tables().items():
        assert f"<!-- {name}:begin -->\n{body}<!-- {name}:end -->\n" in text, (
            f"{name} is stale: run python scripts/gen_platform_tables.py"
        )
