"""Golden tests: every platform x case renders exactly the reviewed files in expected/.

Run ``pytest tests/golden/render --update-goldens`` to rewrite expected/ after an intended change, then review the
diff. ``warnings.txt`` holds the "cannot express" warnings of the case, one per line.
"""

from __future__ import annotations

import difflib

import pytest
from fake_pack import fake_pack
from render_cases import REQUIRED, case_ids, expected_dir, missing_cases, renders


def _actual(platform: str, case: str) -> dict[str, str]:
    files: dict[str, str] = {}
    warnings: list[str] = []
    for r in renders(platform, case):
        for f in r.files:
            files[f.relpath] = f.text
        warnings += [w.render() for w in r.warnings]
    files["warnings.txt"] = "".join(f"{w}\n" for w in warnings)
    return files


@pytest.mark.parametrize(("platform", "case"), case_ids(), ids=[f"{p}-{c}" for p, c in case_ids()])
def test_golden(platform: str, case: str, update_goldens: bool) -> None:
    actual = _actual(platform, case)
    root = expected_dir(platform, case)
    if update_goldens:
        for stale in (p for p in root.rglob("*") if p.is_file()) if root.exists() else ():
            if stale.relative_to(root).as_posix() not in actual:
                stale.unlink()
        for rel, text in actual.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    expected = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
    assert sorted(expected) == sorted(actual), "rendered file set differs; run pytest --update-goldens and review"
    for rel, text in actual.items():
        if text != expected[rel]:
            diff = "".join(
                difflib.unified_diff(
                    expected[rel].splitlines(True), text.splitlines(True), f"expected/{rel}", f"rendered/{rel}", n=2
                )
            )
            pytest.fail(f"{platform}/{case}: {rel} differs from the golden file:\n{diff}")


def test_every_platform_has_the_three_required_cases() -> None:
    """The issue's acceptance: standard recipe, two lossless classes and lossy RoCE for every platform the registry
    serves, and the host."""
    assert missing_cases() == []


def test_a_fifth_pack_without_goldens_fails_the_case_test() -> None:
    """The cases are found by walking the registry: a pack registered without goldens is named, not skipped."""
    with fake_pack() as spec:
        got = missing_cases()
    assert got == [f"{spec.platform}/{c}" for c in REQUIRED]
    assert missing_cases() == []
