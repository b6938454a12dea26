"""CLI words live in fabricd/cli/ (and the docs): below the CLI, what to run is data (fabricd.errors.Fix), and the
CLI renders it as a command line. Issue 30 part 2.

The CLI's words are read from the Typer app itself (every command path, every ``--option`` of every command,
plugins included), not from a hand list. Each string literal in fabricd/ outside fabricd/cli/ (docstrings and other
bare-string documentation excepted) is scanned for ``fabricd <command>`` and for the options. ``NOT_CLI`` names the
few hits that are another program's words; ``DEBT`` is the count per module still to convert: it may only shrink
(a module over its count fails; under it, lower the count).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import typer

from fabricd.audit.host import HOST_CHECKS
from fabricd.audit.switch import SWITCH_CHECKS
from fabricd.cli.common import fix_line, render_error
from fabricd.cli.main import build_app
from fabricd.errors import Fix, UsageError

PKG = Path(__file__).resolve().parents[2] / "fabricd"

NOT_CLI: dict[tuple[str, str], str] = {
    ("nos/sonic/driver.py", "--dry-run"): "SONiC's `config apply-patch --dry-run`",
    ("nos/roles.py", "fabricd lab"): "LAB_MARKERS: `fabricd lab simulator` in a capture's source line marks lab output",
}
"""(module, word) -> whose word it is, when it is not an instruction to run fabricd."""

DOCS: dict[str, str] = {
    "audit/catalogue.py": "writes docs/checks.md's section on the audits, doctor and validate-fabric",
    "collectors/docs.py": "writes docs/metrics.md",
    "intent/checks/catalogue.py": "writes docs/checks.md",
    "intent/nics/doc.py": "writes docs/nics.md",
}
"""Modules whose strings are documentation pages (they may name commands, as docs/ does)."""

DEBT: dict[str, int] = {
    # remaining debt (issue 30 part 2): CLI words in messages and hints below the CLI; convert each to a Fix (or
    # say the thing without the flag) and lower its count here. Never raise a count or add a module.
    "audit/doctor.py": 11,
    "audit/fleet.py": 5,
    "collectors/httplimits.py": 2,
    "collectors/server.py": 4,
    "collectors/watchdog.py": 2,
    "collectors/webconfig.py": 1,
    "collectors/webhook.py": 2,
    "hosts/dcb.py": 1,
    "hosts/dcb_bundle.py": 1,
    "hosts/netlink.py": 1,
    "hosts/netns.py": 1,
    "hosts/sysfs.py": 6,
    "intent/checks/fabric.py": 1,
    "intent/checks/nics.py": 3,
    "intent/host.py": 1,
    "intent/nics/ice.py": 1,
    "inventory/loader.py": 6,
    "model/topology.py": 3,
    "nos/checks.py": 4,
    "nos/coverage.py": 2,
    "platforms/access.py": 1,
    "platforms/netmiko_base.py": 9,
    "readers/switch/empty.py": 2,
    "render/render.py": 2,
    "service/agent.py": 2,
    "service/api.py": 2,
    "service/drift.py": 3,
    "service/intent_source.py": 10,
    "service/serve.py": 1,
    "settings.py": 1,
    "traffic/engine.py": 6,
    "traffic/gid.py": 6,
    "traffic/oob.py": 7,
    "traffic/pair.py": 12,
    "traffic/plugins.py": 1,
    "traffic/verbs.py": 1,
    "watchdog/params.py": 3,
}


@cache
def cli_words() -> tuple[frozenset[str], frozenset[str]]:
    """(command paths, ``--options``) of the real CLI."""
    commands: set[str] = set()
    options: set[str] = set()

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        for param in cmd.params:
            options.update(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
        if hasattr(cmd, "list_commands"):
            ctx = cmd.context_class(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    commands.add(" ".join((*path, name)))
                    walk(sub, (*path, name))

    walk(typer.main.get_command(build_app()), ())
    options -= {"--help", "--install-completion", "--show-completion", "--version"}
    return frozenset(commands), frozenset(options)


def _pattern() -> re.Pattern[str]:
    commands, options = cli_words()
    tops = sorted({c.split()[0] for c in commands}, key=len, reverse=True)
    flags = sorted(options, key=len, reverse=True)
    return re.compile(
        r"\bfabricd (?:" + "|".join(map(re.escape, tops)) + r")\b"
        r"|(?<![\w-])(?:" + "|".join(map(re.escape, flags)) + r")(?![\w-])"
    )


def _literals(tree: ast.Module) -> Iterator[tuple[int, str]]:
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def cli_words_below_cli() -> dict[str, list[str]]:
    """module (relative to fabricd/) -> the CLI words its string literals spell (``line: word``)."""
    pattern = _pattern()
    out: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith("cli/") or rel in DOCS:
            continue
        for lineno, text in _literals(ast.parse(path.read_text())):
            for m in pattern.finditer(text):
                if (rel, m.group(0)) not in NOT_CLI:
                    out.setdefault(rel, []).append(f"{lineno}: {m.group(0)}")
    return out


def test_the_words_come_from_the_app() -> None:
    commands, options = cli_words()
    assert {"push", "host apply", "audit switch", "capture"} <= commands
    assert {"--device", "--hosts", "--skip", "--root"} <= options


def test_no_new_cli_words_below_the_cli() -> None:
    found = cli_words_below_cli()
    over = {m: words for m, words in found.items() if len(words) > DEBT.get(m, 0)}
    assert not over, (
        "CLI words spelled below fabricd/cli/ (use fabricd.errors.Fix and let the CLI render it, or "
        f"say it without the flag): {over}"
    )
    stale = {m: (n, len(found.get(m, []))) for m, n in DEBT.items() if len(found.get(m, [])) < n}
    assert not stale, f"DEBT counts to lower (module: (listed, found)): {stale}"


def test_the_structural_modules_carry_no_cli_words() -> None:
    found = cli_words_below_cli()
    for module in ("deploy/hostfanout.py", "audit/switch.py", "errors.py", "audit/report.py", "model/checks.py"):
        assert module not in DEBT and module not in found, (module, found.get(module))


def _check_fix(fix: Fix) -> None:
    commands, options = cli_words()
    assert " ".join(fix.command) in commands and not fix.command[-1].startswith("-"), fix
    assert all("--" + k.replace("_", "-") in options for k in fix.args), fix


def test_audit_fixes_name_real_commands_and_render_as_command_lines() -> None:
    for check in SWITCH_CHECKS:
        for fix in check.fixes_for("leaf1"):
            _check_fix(fix)
    for fix in (f for c in HOST_CHECKS for f in c.fixes):
        _check_fix(fix)
    [drift] = [c for c in SWITCH_CHECKS if c.code == "SW-DRIFT"]
    assert [fix_line(f) for f in drift.fixes_for("leaf1")] == [
        "`fabricd diff --device leaf1` (shows the difference)",
        "`fabricd push --device leaf1` (restores the intent)",
    ]
    line = fix_line(Fix(("host", "apply"), {"host": "gpu 1", "yes": True}))
    assert line == "`fabricd host apply --host 'gpu 1' --yes`"


def test_errors_carry_their_option_and_fixes_as_data() -> None:
    err = UsageError(
        "leaf9: no switch of that name",
        option="device",
        fixes=(Fix(("push",), {"device": "leaf1"}, "restores the intent"),),
    )
    assert render_error(err) == (
        "--device leaf9: no switch of that name; `fabricd push --device leaf1` (restores the intent)"
    )
    assert err.render() == "device leaf9: no switch of that name; push device=leaf1 (restores the intent)"
    assert render_error(UsageError("plain", hint="words")) == "plain; words"


CLI = PKG / "cli"


def _closures(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        f"{path.name}:{node.lineno} {node.name}"
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("register")
        for node in ast.walk(f)
        if isinstance(node, ast.FunctionDef)
        and node is not f
        and any(w in ast.unparse(d) for d in node.decorator_list for w in ("command", "callback"))
    ]


def test_commands_are_module_level_functions() -> None:
    """A command is a module-level function that register() hands to typer, so the agent, serve and tests can
    call or patch it, and no command hides in a closure (issue 30 part 1)."""
    closures = [c for p in sorted(CLI.glob("*.py")) for c in _closures(p)]
    assert not closures, f"commands defined inside register(): {closures}"


def test_nothing_imports_a_command_modules_private_names() -> None:
    found = []
    for path in [*CLI.glob("*.py"), *(PKG.parent / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            cli_module = (node.module or "").startswith("fabricd.cli") or (path.parent == CLI and node.level == 1)
            private = [a.name for a in node.names if a.name.startswith("_")]
            if cli_module and private:
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {private}")
    assert not found, found
