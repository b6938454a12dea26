"""House rules on the package's shape that neither ruff nor import-linter can check.

- No module in fabricd/ is over :data:`MAX_LINES` lines: a module that grows past it is split along its seams.
- Only fabricd/cli/ prints or exits. Import-linter keeps rich and typer out of the other layers ("Only cli prints or
  exits" in pyproject.toml); this test reads every other module's syntax tree for the rest: calls of ``print``,
  ``exit``/``quit``, ``sys.exit``, ``os._exit`` or ``os.abort``, ``raise SystemExit``, and any use of
  ``sys.stdout``/``sys.stderr`` (writing to them, or handing them to ``json.dump``, ``logging`` or a subprocess).
  A syntax tree and not a text grep: a docstring that mentions ``print(`` is no call, and a program kept as a string
  constant to run on a remote endpoint (``traffic/sniff.py``, ``traffic/snapshot.py``: ``python3 -c`` through a
  Runner, whose stdout is how the endpoint answers) is not fabricd printing. Both tests fail on the real tree when
  the rule is broken (see the self-checks below).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fabricd"
LAB_PACKAGE = REPO / "lab" / "fabricd_lab"
"""fabricd-lab (lab/) follows the same house rules."""
MAX_LINES = 800

EXIT_CALLS = {"print", "exit", "quit"}
"""Builtins that print or exit."""
MODULE_CALLS = {("sys", "exit"), ("os", "_exit"), ("os", "abort")}
"""``module.function`` calls that exit."""
STREAMS = {("sys", "stdout"), ("sys", "stderr"), ("sys", "__stdout__"), ("sys", "__stderr__")}


def _modules() -> list[Path]:
    return sorted(p for pkg in (PACKAGE, LAB_PACKAGE) for p in pkg.rglob("*.py") if "__pycache__" not in p.parts)


def _outside_cli() -> list[Path]:
    return [
        p
        for p in _modules()
        if p.relative_to(LAB_PACKAGE if p.is_relative_to(LAB_PACKAGE) else PACKAGE).parts[0] != "cli"
    ]


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _dotted(node: ast.expr) -> tuple[str, str] | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    return None


def prints_or_exits(source: str, filename: str = "<string>") -> list[str]:
    """Where ``source`` prints or exits: ``file:line: what``, in line order."""
    tree = ast.parse(source, filename)
    aliases: dict[str, str] = {}  # local name -> "sys.exit" etc. for `from sys import exit as bye`
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("sys", "os"):
            for a in node.names:
                if (node.module, a.name) in MODULE_CALLS or (node.module, a.name) in STREAMS:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    found.append((node.lineno, f"imports {node.module}.{a.name}"))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in EXIT_CALLS:
                found.append((node.lineno, f"calls {f.id}()"))
            elif isinstance(f, ast.Name) and f.id in aliases:
                found.append((node.lineno, f"calls {aliases[f.id]}()"))
            elif (d := _dotted(f)) is not None and d in MODULE_CALLS:
                found.append((node.lineno, f"calls {d[0]}.{d[1]}()"))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "SystemExit":
                found.append((node.lineno, "raises SystemExit"))
        elif isinstance(node, ast.Attribute) and (d := _dotted(node)) is not None and d in STREAMS:
            found.append((node.lineno, f"uses {d[0]}.{d[1]}"))
    return [f"{filename}:{line}: {what}" for line, what in sorted(found)]


def test_no_module_over_the_limit() -> None:
    modules = _modules()
    assert len(modules) > 100, f"found only {len(modules)} modules under {PACKAGE}"
    over = {str(p.relative_to(REPO)): n for p in modules if (n := _line_count(p)) > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them along their seams): " + ", ".join(
        f"{k} ({v})" for k, v in sorted(over.items())
    )


def test_only_cli_prints_or_exits() -> None:
    modules = _outside_cli()
    assert len(modules) > 100, f"found only {len(modules)} modules outside fabricd/cli/"
    hits: list[str] = []
    for path in modules:
        hits += prints_or_exits(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    assert not hits, "only fabricd/cli/ prints or exits; move these to cli/ or return/raise:\n" + "\n".join(hits)


def test_the_check_finds_what_it_forbids() -> None:
    """The checker on small sources: each way to print or exit is found; docstrings and program strings are not."""
    bad = (
        "import sys, os\n"
        "from sys import exit as bye\n"
        "print('x')\n"
        "sys.exit(2)\n"
        "os._exit(1)\n"
        "raise SystemExit(main())\n"
        "sys.stderr.write('x')\n"
        "bye(3)\n"
        "exit()\n"
    )
    hits = prints_or_exits(bad, "bad.py")
    assert [h.split(": ", 1)[1] for h in hits] == [
        "imports sys.exit",
        "calls print()",
        "calls sys.exit()",
        "calls os._exit()",
        "raises SystemExit",
        "uses sys.stderr",
        "calls sys.exit()",
        "calls exit()",
    ]
    good = (
        '"""Say it with print( and sys.exit in a docstring."""\n'
        "PROGRAM = 'import sys\\nprint(1)\\nsys.exit(0)'\n"
        "def main() -> int:\n"
        "    return 0\n"
        "raise ValueError('no')\n"
    )
    assert prints_or_exits(good, "good.py") == []


def test_the_line_rule_counts_like_wc(tmp_path: Path) -> None:
    """The limit counts lines as ``wc -l`` does for a file that ends in a newline."""
    f = tmp_path / "m.py"
    f.write_text("x = 1\n" * (MAX_LINES + 1))
    assert _line_count(f) == MAX_LINES + 1 > MAX_LINES
