"""A flag group (``Group.of(locals())`` in a command) reads the command's parameters by name: every command
that builds one must declare each field the group cannot default, under the field's name, or it would fail only
when run. This walks every command of the app and checks the names statically."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from dataclasses import MISSING, dataclass, fields
from functools import cache
from typing import Any

import pytest
import typer.main

from fabricd.cli.common import FlagGroup
from fabricd.cli.deploy_common import SshFlags
from fabricd.cli.main import build_app


def _callbacks(command: Any, path: str = "fabricd") -> Iterator[tuple[str, Any]]:
    if hasattr(command, "list_commands"):  # a group (typer's click, not necessarily the installed one)
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _callbacks(sub, f"{path} {name}")
    elif command.callback is not None:
        yield path, inspect.unwrap(command.callback)


def _groups_built(fn: Any) -> list[str]:
    """The group names NAME of every ``NAME.of(...)`` in the function's body that is a FlagGroup."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return [
        node.func.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "of"
        and isinstance(node.func.value, ast.Name)
        and isinstance(fn.__globals__.get(node.func.value.id), type)
        and issubclass(fn.__globals__[node.func.value.id], FlagGroup)
    ]


@cache
def _commands_with_groups() -> tuple[tuple[str, Any, str], ...]:
    root = typer.main.get_command(build_app())
    return tuple((path, fn, group) for path, fn in _callbacks(root) for group in _groups_built(fn))


def test_the_commands_that_share_flag_groups_are_found() -> None:
    """The walk sees the SSH switch commands, the --hosts fan-out commands and the watchdogs (a walk that found
    none would pass the check below vacuously)."""
    found = {(path, group) for path, _, group in _commands_with_groups()}
    for path in ("fabricd push", "fabricd diff", "fabricd rollback", "fabricd capture", "fabricd audit switch"):
        assert (path, "SshFlags") in found
    assert {("fabricd host apply", "FanoutFlags"), ("fabricd audit host", "FanoutFlags")} <= found
    assert {("fabricd serve", "WatchdogFlags"), ("fabricd watch", "WatchdogFlags")} <= found


@pytest.mark.parametrize(
    ("path", "fn", "group"), _commands_with_groups(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_command_declares_its_groups_fields(path: str, fn: Any, group: str) -> None:
    cls = fn.__globals__[group]
    params = inspect.signature(fn).parameters
    for f in fields(cls):
        if f.default is MISSING and f.default_factory is MISSING:
            assert f.name in params, f"{path}: flag_group({group}) needs a parameter {f.name!r}"


def test_a_group_takes_the_named_values_and_defaults_the_rest() -> None:
    @dataclass(frozen=True)
    class Group(FlagGroup):
        a: int
        b: str = "default"

    assert Group.of({"a": 1, "b": "given", "other": 3}) == Group(1, "given")
    assert Group.of({"a": 2}) == Group(2, "default")
    with pytest.raises(TypeError):
        Group.of({"b": "no a"})
    ssh = SshFlags.of({"known_hosts": None, "insecure": True, "read_timeout": 5.0, "session_log": None})
    assert ssh.accept_new_host_keys is None and ssh.insecure
