#!/usr/bin/env python3
"""Measure what a new platform pack touches outside its folder (issue 24, part 6; docs/ARCHITECTURE.md, "Adding a
fifth NOS"), by adding one to a scratch copy of the tree and running the tests that walk the packs.

Run from the repo root: ``.venv/bin/python scripts/dry_run_pack.py [--source cumulus_nvue] [--id dryrun_nos]
[--keep]``. It

1. exports the committed tree (``git archive HEAD``) to a scratch directory and commits it there (a baseline);
2. makes the pack: ``fabricd/nos/<source>`` copied to ``fabricd/nos/<id>`` with the source's id replaced (module
   paths, ``Platform.<SOURCE>`` constants, ids in strings), and ``templates/<source>/`` copied into the pack as
   ``fabricd/nos/<id>/templates/`` (``PlatformSpec.templates="fabricd.nos.<id>:templates"``: a pack carries its
   templates in its own package, as one from another distribution does);
3. adds the pack's own files in the places users and tests look for them, all new files: render goldens
   (``tests/golden/render/<id>/``, the inventories' ``platform:`` replaced), the captures its roles name with their
   expected parses and ``.facts.json`` (``tests/golden/{readers/switch,switch_config,readers/switch_version}/<id>/``,
   ``readers/lldp/<id>-*``) and a conformance suite (``tests/conformance/test_<id>_*.py``); the golden tests find
   each capture's parser through the pack's roles (tests/golden/capture_links.py), so no shared test module gains a
   row;
4. registers it: the ``fabricd.platforms`` entry point and the independence contract in ``pyproject.toml``; the entry
   point is made visible the way an install makes it (a ``.dist-info`` with the entry points read from the edited
   pyproject.toml, on PYTHONPATH in front of the scratch tree: this venv is not reinstalled);
5. regenerates the generated docs (``scripts/gen_*_doc.py``, ``gen_platform_tables.py``);
6. runs ``lint-imports`` and pytest on the tests that walk the packs (unit tier, goldens), and prints
   ``git status`` of the scratch tree sorted into: inside the pack, new files outside it (by folder, and counted),
   existing files edited by hand, existing files regenerated.

The copies are the source pack's, so the new pack passes the tests that check what a pack has; a real pack writes its
own. Nothing in the repository is changed; the scratch tree is removed unless ``--keep``.
"""

from __future__ import annotations

import re
import shutil
import sys
import tomllib
from pathlib import Path

from scratch_tree import changes, check_tree, dry_run_args, env_with, scratch, verdict

GENERATORS = ("gen_inventory_doc.py", "gen_checks_doc.py", "gen_platform_tables.py", "gen_roles_doc.py")
TESTS = ("tests/unit", "tests/golden")
BY_HAND = ("pyproject.toml",)
"""The existing files the dry run edits by hand (everything else outside the pack is new or regenerated)."""


def rename(text: str, source: str, new: str) -> str:
    text = text.replace(f"Platform.{source.upper()}", f'Platform("{new}")')
    return text.replace(source, new)


def copy_tree(src: Path, dst: Path, source: str, new: str) -> None:
    for path in sorted(src.rglob("*")):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".py", ".yml", ".yaml", ".j2"):
            target.write_text(rename(path.read_text(), source, new))
        else:
            shutil.copy2(path, target)


def make_pack(tree: Path, source: str, new: str) -> None:
    copy_tree(tree / "fabricd" / "nos" / source, tree / "fabricd" / "nos" / new, source, new)
    # a pack's own checks take codes of their own, each with a case in tests/unit/test_checks.py: the dry-run pack
    # has none (the source's codes would clash)
    (tree / "fabricd" / "nos" / new / "checks.py").write_text(
        '"""The dry-run pack\'s own checks: none."""\n\nfrom __future__ import annotations\n\n'
        "from fabricd.intent.checks.base import Check\n\nCHECKS: tuple[Check, ...] = ()\n"
    )
    # its templates inside its own package, where a pack from another distribution carries them too
    # (PlatformSpec.templates "<package>:<folder>", fabricd/nos/templates.py)
    copy_tree(tree / "templates" / source, tree / "fabricd" / "nos" / new / "templates", source, new)
    spec = tree / "fabricd" / "nos" / new / "spec.py"
    text = spec.read_text()
    if f'templates="{new}"' not in text:
        sys.exit(f'{spec}: no templates="{new}" to point at the pack\'s own templates folder')
    spec.write_text(text.replace(f'templates="{new}"', f'templates="fabricd.nos.{new}:templates"'))
    render = tree / "tests" / "golden" / "render"
    for path in sorted((render / source).rglob("*")):
        if path.is_file():
            target = render / new / path.relative_to(render / source)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text()
            # the expected outputs name the platform too (warnings.txt: "leaf1 (<id>): ...")
            target.write_text(re.sub(rf"\b{source}\b", new, text))
    golden = tree / "tests" / "golden"
    for folder in ("readers/switch", "switch_config", "readers/switch_version"):
        if (golden / folder / source).is_dir():
            shutil.copytree(golden / folder / source, golden / folder / new)
            for expected in (golden / folder / new).rglob("*.json"):  # parsed results name their platform
                expected.write_text(re.sub(rf'"{source}"', f'"{new}"', expected.read_text()))
    for path in sorted((golden / "readers" / "lldp").glob(f"{source}-*")):
        shutil.copy2(path, path.with_name(new + path.name.removeprefix(source)))
    for path in sorted((tree / "tests" / "conformance").glob(f"test_{source}_*.py")):
        path.with_name(path.name.replace(source, new, 1)).write_text(path.read_text())


def register(tree: Path, new: str) -> None:
    pyproject = tree / "pyproject.toml"
    text = pyproject.read_text()
    text = text.replace(
        '[project.entry-points."fabricd.platforms"]\n',
        f'[project.entry-points."fabricd.platforms"]\n{new} = "fabricd.nos.{new}.spec:SPEC"\n',
        1,
    )
    text = re.sub(r'(modules = \["fabricd\.nos\.sonic"[^\]]*)\]', rf'\1, "fabricd.nos.{new}"]', text, count=1)
    pyproject.write_text(text)
    if f"fabricd.nos.{new}.spec:SPEC" not in text or f'"fabricd.nos.{new}"]' not in text:
        sys.exit("pyproject.toml has no fabricd.platforms entry point table or independence contract to extend")


def installed_view(tree: Path) -> Path:
    """A .dist-info holding the entry points of the edited pyproject.toml (what `pip install -e .` would write)."""
    project = tomllib.loads((tree / "pyproject.toml").read_text())["project"]
    site = tree / ".dryrun-site"
    info = site / "fabricd_dryrun-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fabricd-dryrun\nVersion: 0\n")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines += [f"[{group}]", *(f"{name} = {value}" for name, value in entries.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))
    return site


KINDS = ("pack", "new outside", "new files outside", "edited by hand", "regenerated")


def kind_of(new: str, code: str, path: str) -> str | None:
    if path.startswith(".dryrun-site/"):
        return None
    if path.startswith(f"fabricd/nos/{new}/"):
        return "pack"
    if code == "A":
        return "new files outside"
    return "edited by hand" if path in BY_HAND else "regenerated"


def places(paths: list[str], new: str) -> list[str]:
    """The new files outside the pack, by place: the folder named after the pack, else the file itself."""
    out: list[str] = []
    for path in paths:
        parts = path.split("/")
        top = "/".join(parts[: parts.index(new) + 1]) if new in parts else path
        if (shown := top + ("/" if top != path else "")) not in out:
            out.append(shown)
    return out


def main() -> int:
    args = dry_run_args(__doc__, what="pack", source="cumulus_nvue", new="dryrun_nos")
    with scratch("fabricd-dry-pack-", keep=args.keep) as tree:
        make_pack(tree, args.source, args.id)
        register(tree, args.id)
        lint, tests = check_tree(tree, env_with(installed_view(tree), tree), GENERATORS, TESTS)
        kinds = changes(tree, lambda code, path: kind_of(args.id, code, path))
        kinds["new outside"] = places(kinds.get("new files outside", []), args.id)
        print(f"dry-run pack {args.id} (a copy of {args.source}) in {tree}")
        for kind in KINDS:
            paths = kinds.get(kind, [])
            shown = f"{len(paths)} files" if kind in ("pack", "new files outside") else ", ".join(paths) or "-"
            print(f"  {kind}: {len(paths)}: {shown}")
        ok = verdict(lint, tests, TESTS)
        by_hand, regenerated = len(kinds.get("edited by hand", [])), len(kinds.get("regenerated", []))
        print(
            f"existing files outside the pack touched: {by_hand + regenerated} "
            f"({by_hand} by hand, {regenerated} regenerated); "
            f"new files outside the pack: {len(kinds.get('new files outside', []))} in {len(kinds['new outside'])} "
            "places"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
