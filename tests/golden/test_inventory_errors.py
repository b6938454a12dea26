"""Golden broken inventories: the real ``fabricd validate`` on each, stdout, stderr and exit code compared exactly.

Each directory under ``inventory_errors/`` holds ``inventory.yml`` (one file) or ``inventory/`` (a directory
inventory), optionally ``args`` (the command line, default ``validate inventory.yml`` or ``validate inventory``),
and ``expected.txt``:

    exit: N
    --- stdout
    ...
    --- stderr
    ...

The command runs with the case directory as working directory, so paths in messages are relative and stable.
``pytest --update-goldens`` rewrites expected.txt (review the diff before committing).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.model.platform import known_platforms

PLATFORM_IDS = ", ".join(known_platforms())
CASES_DIR = Path(__file__).parent / "inventory_errors"
CASES = sorted(p for p in CASES_DIR.iterdir() if p.is_dir())


def command(case: Path) -> list[str]:
    args = case / "args"
    if args.exists():
        return shlex.split(args.read_text())
    target = "inventory" if (case / "inventory").is_dir() else "inventory.yml"
    return ["validate", target]


def render(code: int, out: str, err: str) -> str:
    return f"exit: {code}\n--- stdout\n{out}--- stderr\n{err}"


def test_enough_cases() -> None:
    broken = [c for c in CASES if not c.name.startswith("00-")]
    assert len(broken) >= 25
    load_errors = [c for c in CASES if (c / "expected.txt").read_text().startswith("exit: 2")]
    assert len(load_errors) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path, monkeypatch: pytest.MonkeyPatch, update_goldens: bool) -> None:
    for var in ("FORCE_COLOR", "FABRICD_INVENTORY", "FABRICD_OUTPUT", "FABRICD_FAIL_LINKS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(case)
    result = CliRunner().invoke(build_app(), command(case))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    # the registry's platform ids, as one word: a new platform pack changes no expected file
    got = render(result.exit_code, result.stdout, result.stderr).replace(PLATFORM_IDS, "<platform ids>")
    assert "Traceback" not in got
    expected_file = case / "expected.txt"
    if update_goldens:
        expected_file.write_text(got)
    assert got == expected_file.read_text()
    if result.exit_code == 2:  # every diagnostic line is located: error: file[:line]: ... [INVnnn]
        lines = result.stderr.splitlines()
        assert lines and all(line.startswith("error: ") and line.endswith("]") for line in lines)
