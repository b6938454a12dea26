"""Commands load on first use: ``fabricd --help`` lists every command without importing one, every command's own
``--help`` works, the help lines of the list are the commands' own, and ``fabricd validate`` starts without the SSH
and netlink stacks. The module lists come from a fresh interpreter (a subprocess): this test process has imported
everything already. The start-up time itself is measured in bench/cli.py, not here."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer import _click as click
from typer.main import get_command
from typer.testing import CliRunner

from fabricd.cli.main import COMMANDS, build_app, command_table, load_command

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("netmiko", "paramiko", "pyroute2", "asyncssh", "matplotlib")

_PROBE = textwrap.dedent("""
    import json, sys
    sys.argv = ["fabricd", *sys.argv[1:]]
    from fabricd.cli.main import main
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    sys.stdout.flush()
    sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
""")


def _modules(*args: str) -> tuple[int, set[str], str]:
    """Run fabricd ARGS in a fresh interpreter; return its exit code, every module it imported and its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120, cwd=REPO, check=False
    )
    line = proc.stderr.rsplit("MODULES ", 1)
    assert len(line) == 2, proc.stderr
    data = json.loads(line[1])
    return data["code"] or 0, set(data["modules"]), proc.stdout


def _first_paragraph(command: click.Command) -> str:
    text = command.short_help or command.help or ""
    return " ".join(text.split("\n\n")[0].split())


@pytest.mark.integration  # starts a process or opens a socket: not in the unit tier
def test_root_help_imports_no_command_and_lists_every_one() -> None:
    code, modules, out = _modules("--help")
    assert code == 0
    table = ("fabricd.cli.main", "fabricd.cli.common", "fabricd.cli.plugins", "fabricd_lab.plugin")
    loaded = sorted(m for m in modules if m.startswith(("fabricd.cli.", "fabricd_lab.")) and m not in table)
    assert loaded == []  # a plugin's table is read (fabricd_lab.plugin), none of its command modules
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    for name in command_table():
        assert f" {name} " in out, name


@pytest.mark.integration  # starts a process or opens a socket: not in the unit tier
def test_validate_imports_no_ssh_or_netlink_stack() -> None:
    code, modules, out = _modules("validate", str(REPO / "inventory" / "lab"))
    assert code == 0, out
    assert "0 errors" in out
    assert "fabricd.cli.validate" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == []


@pytest.mark.parametrize("name", list(command_table()))
def test_listed_help_line_is_the_commands_own(name: str) -> None:
    """The table in cli/main.py (and a plugin's, fabricd_lab.plugin) repeats each command's first help paragraph;
    this keeps the two in step."""
    assert " ".join(command_table()[name][1].split()) == _first_paragraph(load_command(name))


def _leaves(prefix: list[str], command: click.Command) -> list[list[str]]:
    paths = [prefix]
    commands = getattr(command, "commands", None)
    if commands:
        for sub_name, sub in commands.items():
            paths += _leaves([*prefix, sub_name], sub)
    return paths


@pytest.mark.parametrize("name", list(command_table()))
def test_every_command_help_works(name: str) -> None:
    """``fabricd NAME --help`` and the --help of every subcommand under it."""
    runner = CliRunner()
    app = build_app()
    for path in _leaves([name], load_command(name)):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage: fabricd " + " ".join(path) in " ".join(result.output.split())


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(build_app(), ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output
    result = CliRunner().invoke(build_app(), ["valdate"])
    assert result.exit_code == 2
    assert "Did you mean 'validate'" in " ".join(result.output.split())


def test_root_group_lists_commands_in_table_order() -> None:
    group = get_command(build_app())
    ctx = click.Context(group)
    assert list(group.list_commands(ctx))[: len(COMMANDS)] == list(COMMANDS)  # type: ignore[attr-defined]
