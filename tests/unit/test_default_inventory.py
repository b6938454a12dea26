"""No silent default inventory (issue 25, part 1): with no INVENTORY a read-only command uses ``./`` when it holds an
inventory and says so; elsewhere it says on stderr that it uses the built-in lab; commands that write to devices
refuse to guess (exit 2, with how to name one); ``fabricd init DIR`` names the fabric after DIR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.init import fabric_name
from fabricd.cli.main import build_app
from fabricd.errors import FabricdError
from fabricd.inventory import inventory_marker, load_inventory


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORCE_COLOR", "FABRICD_INVENTORY", "FABRICD_OUTPUT", "FABRICD_FAIL_LINKS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "300")


def _invoke(*args: str) -> tuple[int, str, str]:
    """The app as the console script runs it (run_guarded turns a FabricdError into its message and exit code)."""
    result = CliRunner().invoke(build_app(), list(args), standalone_mode=True)
    exc = result.exception
    if isinstance(exc, FabricdError):
        return exc.exit_code, result.stdout, exc.render()
    assert exc is None or isinstance(exc, SystemExit), exc
    return result.exit_code, result.stdout, result.stderr


def test_in_a_folder_holding_an_inventory_validate_uses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "pod7"
    assert _invoke("init", "--example", "sonic-only", str(mine))[0] == 0
    monkeypatch.chdir(mine)
    code, out, err = _invoke("validate")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("pod7: "), out
    assert "inventory: ./ (it holds fabric.yml)" in err  # a one-file example is written as fabric.yml


def test_elsewhere_validate_says_it_uses_the_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "compose.yml").write_text("services:\n  web: {image: nginx}\n")  # YAML, but not an inventory
    (tmp_path / "leaves.yml").write_text("switches: []\n")  # inventory-like, but ./ needs fabric.yml
    monkeypatch.chdir(tmp_path)
    code, out, err = _invoke("validate")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("lab: 6 switches")
    assert "inventory: the built-in lab fabric" in err and str(settings.lab_inventory()) in err


@pytest.mark.parametrize(
    "argv",
    [
        ["push", "--dry-run"],
        ["rollback", "--device", "leaf2-eos"],
        ["host", "apply", "--host", "gpu1", "--yes"],
        ["host", "install-unit", "--host", "gpu1"],
        ["agent", "--host", "gpu1", "--mode", "enforce", "--once"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_commands_that_write_refuse_without_an_inventory(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even in a folder that holds an inventory: a write never picks one by itself."""
    assert _invoke("init", str(tmp_path / "f"))[0] == 0
    monkeypatch.chdir(tmp_path / "f")
    code, out, err = _invoke(*argv)
    assert code == 2, out + err
    verb = "agent --mode enforce" if argv[0] == "agent" else " ".join(argv[:2]) if argv[0] == "host" else argv[0]
    assert f"fabricd {verb}: no INVENTORY argument" in err
    assert f"`fabricd {verb} ./fabric ...`" in " ".join(err.split())
    assert "Traceback" not in err


def test_a_named_inventory_is_used_without_a_note(tmp_path: Path) -> None:
    target = tmp_path / "x"
    assert _invoke("init", str(target))[0] == 0
    code, out, err = _invoke("validate", str(target))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1].startswith("x: ")


def test_init_names_the_fabric_after_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "gpu pod 7"
    code, out, _ = _invoke("init", str(target), "--output", "json")
    assert code == 0 and json.loads(out)["name"] == "gpu-pod-7"
    assert load_inventory(target).fabric.name == "gpu-pod-7"
    # the comments of the starter are kept; only the name line changes
    assert (target / "fabric.yml").read_text().splitlines()[2] == "name: gpu-pod-7"
    assert (target / "fabric.yml").read_text().splitlines()[0].startswith("# ")


@pytest.mark.parametrize(
    ("given", "name"), [("pod7", "pod7"), ("-x..y", "x-y"), ("...", "fabric"), ("é", "fabric"), ("a" * 80, "a" * 64)]
)
def test_fabric_name_is_always_a_valid_name(given: str, name: str) -> None:
    assert fabric_name(Path("/tmp") / given) == name


def test_inventory_marker(tmp_path: Path) -> None:
    """Only fabric.yml (or .yaml) marks ./ as an inventory: a stray YAML file with inventory sections in /tmp would
    otherwise make every YAML file below /tmp the inventory."""
    assert inventory_marker(tmp_path) is None
    (tmp_path / "leaves.yaml").write_text("# mine\nswitches:\n  - name: a\n")
    assert inventory_marker(tmp_path) is None
    (tmp_path / "fabric.yaml").write_text("name: x\n")
    assert inventory_marker(tmp_path) == tmp_path / "fabric.yaml"
    (tmp_path / "fabric.yml").write_text("name: x\n")
    assert inventory_marker(tmp_path) == tmp_path / "fabric.yml"
