"""First-run polish that must not regress: every command's --help has an example, shell completion completes
commands and options, and an error without a fix hint points to the docs of its area."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from fabricd.cli.common import DOCS_HINT, docs_for, fail
from fabricd.cli.main import build_app
from fabricd.errors import DriverError, InventoryError, RenderError, UsageError

FABRICD = str(Path(sys.executable).with_name("fabricd"))


def _leaves(cmd: Any, ctx: Any, path: list[str]) -> list[tuple[str, Any]]:
    """Every leaf command under ``cmd``. Typer builds its groups on its own copy of click, so groups are found by
    their ``list_commands`` method rather than by class."""
    names = cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else []
    if not names:
        return [(" ".join(path), cmd)]
    out = []
    for name in names:
        sub = cmd.get_command(ctx, name)
        assert sub is not None
        out += _leaves(sub, type(ctx)(sub, parent=ctx), [*path, name])
    return out


def test_every_command_help_has_an_example() -> None:
    root = typer.main.get_command(build_app())
    leaves = _leaves(root, root.make_context("fabricd", [], resilient_parsing=True), ["fabricd"])
    assert len(leaves) > 25
    missing = [path for path, cmd in leaves if not cmd.hidden and "Example" not in (cmd.help or "")]
    assert missing == [], f"commands without [bold]Example[/] lines in their help: {missing}"


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_shell_completion_completes_commands_and_options() -> None:
    env = dict(os.environ, _FABRICD_COMPLETE="complete_bash", COMP_WORDS="fabricd dem", COMP_CWORD="1")
    out = subprocess.run([FABRICD], capture_output=True, text=True, env=env, timeout=60, check=False).stdout
    assert out.split() == ["demo"]
    env.update(COMP_WORDS="fabricd demo --", COMP_CWORD="2")
    out = subprocess.run([FABRICD], capture_output=True, text=True, env=env, timeout=60, check=False).stdout
    assert {"--keep-running", "--no-vm", "--stop", "--output"} <= set(out.split())


def test_docs_for_names_the_area_guide() -> None:
    assert docs_for(InventoryError([])).startswith("`fabricd docs inventory`")
    assert docs_for(RenderError("x")).startswith("`fabricd docs platforms`")
    assert docs_for(DriverError("leaf1", "connect", "refused")).startswith("`fabricd docs switch-lab`")
    assert docs_for(UsageError("x")) == DOCS_HINT
    assert docs_for("plain text") == DOCS_HINT


def test_fail_points_to_docs_only_without_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as exc:
        fail(RenderError("leaf1: template main.j2 not found"))
    assert exc.value.exit_code == 2
    err = capsys.readouterr().err
    assert "error: leaf1: template main.j2 not found" in err
    assert "hint: `fabricd docs platforms`" in err and "fabricd COMMAND --help" in err
    with pytest.raises(typer.Exit):
        fail(UsageError("--out: not a directory", hint="give a directory"))
    err = capsys.readouterr().err
    assert "give a directory" in err and "hint:" not in err
