"""``fabricd init [--example NAME] DIR`` writes a starting inventory that validates, refuses a directory that is not
empty with a located error (exit 2, nothing overwritten); and output that is not a terminal is not cut to 80
columns."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.table import Table
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli import common
from fabricd.cli.main import build_app


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(build_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_starters_are_the_lab_and_every_shipped_example() -> None:
    starters = settings.starter_inventories()
    assert next(iter(starters)) == "lab"
    assert {"sonic-only", "three-tier", "softroce", "mixed-nics"} <= set(starters)


@pytest.mark.parametrize("name", list(settings.starter_inventories()))
def test_init_writes_an_inventory_that_validates(tmp_path: Path, name: str) -> None:
    target = tmp_path / "new" / "fabric"
    code, out, err = _invoke("init", "--example", name, str(target), "--output", "json")
    assert code == 0, err
    written = json.loads(out)["files"]
    source = settings.starter_inventories()[name]
    expected = 1 if source.is_file() else len([p for p in source.rglob("*.yml")])
    assert len(written) == expected
    for path in written:
        assert Path(path).is_file() and Path(path).parent.resolve().is_relative_to(target.resolve())
    code, out, err = _invoke("validate", str(target))
    assert code == 0, out + err
    assert " 0 errors" in out


def test_init_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    code, _out, err = _invoke("init", str(tmp_path))
    assert code == 2
    assert f"{tmp_path}: directory is not empty (holds notes.txt)" in err
    assert "never overwrites" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_init_refuses_a_file_and_an_unknown_example(tmp_path: Path) -> None:
    target = tmp_path / "file.yml"
    target.write_text("x: 1\n")
    code, _, err = _invoke("init", str(target))
    assert code == 2 and "exists and is not a directory" in err
    code, _, err = _invoke("init", "--example", "nope", str(tmp_path / "d"))
    assert code == 2 and "--example 'nope': no such starting inventory" in err and "sonic-only" in err
    assert not (tmp_path / "d").exists()


def test_init_into_an_existing_empty_directory(tmp_path: Path) -> None:
    code, _out, err = _invoke("init", str(tmp_path))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fabric.yml",
        "groups.yml",
        "hosts.yml",
        "links.yml",
        "switches.yml",
    ]
    assert "next: fabricd validate" in err


def _render(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> str:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    buf = io.StringIO()  # not a terminal, as a pipe or a file
    monkeypatch.setattr("sys.stdout", buf)
    console = common.stdout()
    table = Table("path", "hint")
    table.add_row("/srv/" + "deep/" * 25 + "leaf1.cfg", "give a new or empty directory; fabricd init never overwrites")
    console.print(table)
    return buf.getvalue()


def test_piped_output_is_not_cut_to_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render(monkeypatch, None)
    row = next(line for line in text.splitlines() if "leaf1.cfg" in line)
    assert "/srv/" + "deep/" * 25 + "leaf1.cfg" in row
    assert "fabricd init never overwrites" in row
    assert len(row) > 80


def test_columns_still_chooses_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render(monkeypatch, "60")
    assert max(len(line) for line in text.splitlines()) <= 60
