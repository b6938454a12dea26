"""No test picks a TCP port by binding port 0 and releasing it: the port is free for any process again before the
server the test starts binds it (a race that flaked under load). Ports come from the ``reserve_port`` fixture
(tests/conftest.py), which holds each one until the test ends.

What is refused: a ``with socket.socket() as s:`` block that binds ``s`` to port 0 and never calls ``s.listen`` (a
socket that listens holds its port on purpose, as a test of a port in use does)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _picks_and_releases(with_node: ast.With) -> bool:
    names = {
        item.optional_vars.id
        for item in with_node.items
        if isinstance(item.context_expr, ast.Call)
        and ast.unparse(item.context_expr.func) == "socket.socket"
        and isinstance(item.optional_vars, ast.Name)
    }
    calls = [n for stmt in with_node.body for n in ast.walk(stmt) if isinstance(n, ast.Call)]

    def on(name: str, method: str) -> list[ast.Call]:
        return [c for c in calls if ast.unparse(c.func) == f"{name}.{method}"]

    return any(
        any(ast.unparse(c.args[0]).endswith(", 0)") for c in on(name, "bind") if c.args) and not on(name, "listen")
        for name in names
    )


def test_no_test_picks_a_port_and_releases_it() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)}:{node.lineno}"
        for path in sorted(TESTS.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.With) and _picks_and_releases(node)
    ]
    assert not found, f"a port picked with bind(..., 0) and released; use the reserve_port fixture: {found}"
