"""Self-contained for a wheel user: nothing fabricd ships (its modules, help texts, hints, templates, rules and
inventories) points outside the repository or to a file a wheel user does not have, and the docs point to nothing
outside the repository. The contracts users rely on live in docs/contracts.md."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Documents that are not in this repository (the project's design notes and research kept beside it).
OUTSIDE = re.compile(r"DESIGN\.md|CONTRACTS\.md|anchors\.md|components\.md|oracles\.md|\.\./shared|shared/reference")
# Files a user who installed the wheel does not have: the source tree's scripts, Makefile targets and the examples
# folder (shipped, but inside site-packages: `fabricd init --example` writes them).
SOURCE_ONLY = re.compile(r"scripts/sysdeps\.sh|make demo|inventory/examples")
# settings.py locates the shipped examples by their data path; that is the one legitimate mention.
SOURCE_ONLY_ALLOWED = {Path("fabricd/settings.py")}

SHIPPED = ("fabricd", "templates", "exporters", "inventory")  # what the wheel carries (pyproject force-include)
TEXT_SUFFIXES = {".py", ".j2", ".yml", ".yaml", ".md", ".json", ".txt", ".sh", ""}


def _files(*roots: str) -> list[Path]:
    out = []
    for root in roots:
        for path in (REPO / root).rglob("*"):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                out.append(path)
    return out


def _hits(paths: list[Path], pattern: re.Pattern[str], allowed: set[Path] = frozenset()) -> list[str]:  # type: ignore[assignment]
    hits = []
    for path in paths:
        rel = path.relative_to(REPO)
        if rel in allowed:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{rel}:{n}: {line.strip()[:120]}")
    return hits


def test_shipped_files_point_nowhere_outside_the_repository() -> None:
    files = _files(*SHIPPED)
    assert len(files) > 100  # the walk found the package
    assert _hits(files, OUTSIDE) == []


def test_shipped_files_point_to_nothing_a_wheel_user_lacks() -> None:
    assert _hits(_files(*SHIPPED), SOURCE_ONLY, SOURCE_ONLY_ALLOWED) == []


def test_docs_point_nowhere_outside_the_repository() -> None:
    docs = [*_files("docs"), REPO / "README.md"]
    assert any(p.name == "contracts.md" for p in docs)
    assert _hits(docs, OUTSIDE) == []


def test_contracts_page_covers_what_users_rely_on() -> None:
    text = (REPO / "docs" / "contracts.md").read_text(encoding="utf-8")
    for needle in (
        "## Exit codes",
        "## Replay root",
        "## Metrics",
        "## Benchmarks",
        "fabricd init",
        "fabricd capture",
        "fabricd agent",
        "fabricd audit fleet",
        "--replay",
        "--hosts",
        "--matrix",
        "--accept-new-host-keys",
        '"anchor_value"',
    ):
        assert needle in text, needle


def test_the_wheel_carries_the_guides_and_the_examples() -> None:
    """pyproject's force-include puts docs/ and inventory/examples in the wheel, where settings.data_dir finds them;
    the hints name pages through `fabricd docs PAGE`."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"docs" = "fabricd/_data/docs"' in pyproject
    assert '"inventory/examples" = "fabricd/_data/inventory/examples"' in pyproject


def test_docs_command_lists_and_prints_the_guides() -> None:
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app

    runner = CliRunner()
    listed = runner.invoke(build_app(), ["docs"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert {"contracts", "nics", "checks", "captures", "platforms", "inventory", "switch-lab", "ci-audit"} <= set(names)
    page = runner.invoke(build_app(), ["docs", "contracts"])
    assert page.exit_code == 0
    assert page.stdout == (REPO / "docs" / "contracts.md").read_text(encoding="utf-8")
    missing = runner.invoke(build_app(), ["docs", "nope"])
    assert missing.exit_code == 2
    assert "no such page" in missing.stderr and "contracts" in missing.stderr


def test_every_page_a_hint_names_exists() -> None:
    from fabricd.cli.docs import pages

    known = set(pages())
    named = set()
    for path in _files(*SHIPPED):
        try:
            named |= set(re.findall(r"fabricd docs ([a-z][a-z0-9-]*)", path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    assert named, "no hint names a page"
    assert named <= known, named - known
