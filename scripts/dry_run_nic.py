#!/usr/bin/env python3
"""Measure what a new NIC family touches outside its profile (issue 30, part 4; docs/ARCHITECTURE.md, "Adding a NIC
family"), by adding one to a scratch copy of the tree and running the tests that walk the profiles.

Run from the repo root: ``.venv/bin/python scripts/dry_run_nic.py [--source bnxt] [--id acme] [--keep]``. It

1. exports the committed tree (``git archive HEAD``) to a scratch directory and commits it there (a baseline);
2. makes the profile: ``fabricd/intent/nics/<source>.py`` copied to ``fabricd/intent/nics/<id>.py`` with the source's
   name replaced (family, drivers, configfs paths, capture names);
3. adds its captures, new files: every ``tests/golden/readers/ethtool/<source>*`` capture and its expected parse,
   renamed (the golden test reads a capture with the map of the driver its name starts with);
4. registers it: one import and one ``PROFILES`` entry in ``fabricd/intent/nics/__init__.py``, the only hand edit;
5. regenerates the generated docs (``scripts/gen_nics_doc.py``, ``scripts/gen_roles_doc.py``);
6. runs ``lint-imports`` and pytest on the tests that walk the profiles (unit tier, goldens, fuzz), and prints
   ``git status`` of the scratch tree sorted into: the profile, new files outside it, existing files edited by hand,
   existing files regenerated.

The copy is the source family's, so the new profile passes the tests that check what a profile has; a real family
writes its own (and its own captures, with their ``# source:`` line). Nothing in the repository is changed; the
scratch tree is removed unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GENERATORS = ("gen_nics_doc.py", "gen_roles_doc.py")
TESTS = ("tests/unit", "tests/golden", "tests/fuzz")
REGISTRY = "fabricd/intent/nics/__init__.py"
BY_HAND = (REGISTRY,)
"""The existing files the dry run edits by hand (everything else outside the profile is new or regenerated)."""
CAPTURES = Path("tests/golden/readers/ethtool")


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, *, check: bool = True) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout + out.stderr


def export(tree: Path) -> None:
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=dry", "-c", "user.email=dry@localhost", "commit", "-qm", "baseline"],
    ):
        run(cmd, tree)


def rename(text: str, source: str, new: str) -> str:
    return re.sub(rf"\b{source}", new, text)


def make_profile(tree: Path, source: str, new: str) -> None:
    nics = tree / "fabricd" / "intent" / "nics"
    (nics / f"{new}.py").write_text(rename((nics / f"{source}.py").read_text(), source, new))
    for path in sorted((tree / CAPTURES).glob(f"{source}*")):
        path.with_name(new + path.name.removeprefix(source)).write_text(rename(path.read_text(), source, new))


def register(tree: Path, source: str, new: str) -> None:
    registry = tree / REGISTRY
    text = registry.read_text()
    imports = re.search(r"^from \. import (.+)$", text, re.MULTILINE)
    profiles = re.search(r"^(PROFILES: tuple\[NicProfile, \.\.\.\] = \()(.*)\)$", text, re.MULTILINE)
    if imports is None or profiles is None or source not in imports.group(1):
        sys.exit(f"{REGISTRY} has no `from . import ...` line or PROFILES tuple to extend")
    text = text.replace(imports.group(0), f"{imports.group(0)}, {new}", 1)
    text = text.replace(profiles.group(0), f"{profiles.group(1)}{profiles.group(2)}, {new}.PROFILE)", 1)
    registry.write_text(text)


def status(tree: Path, new: str) -> dict[str, list[str]]:
    run(["git", "add", "-A"], tree)
    out = run(["git", "status", "--porcelain", "--untracked-files=all"], tree)
    kinds: dict[str, list[str]] = {"profile": [], "new outside": [], "edited by hand": [], "regenerated": []}
    for line in out.splitlines():
        code, path = line[:2].strip(), line[3:]
        if path == f"fabricd/intent/nics/{new}.py":
            kinds["profile"].append(path)
        elif code == "A":
            kinds["new outside"].append(path)
        elif path in BY_HAND:
            kinds["edited by hand"].append(path)
        else:
            kinds["regenerated"].append(path)
    return kinds


def report(tree: Path, args: argparse.Namespace, lint: str, tests: str) -> int:
    kinds = status(tree, args.id)
    print(f"dry-run NIC family {args.id} (a copy of {args.source}) in {tree}")
    for kind, paths in kinds.items():
        print(f"  {kind}: {len(paths)}: {', '.join(paths) or '-'}")
    print("  lint-imports: " + ("kept" if "0 broken" in lint else "BROKEN\n" + lint))
    print("  pytest " + " ".join(TESTS) + ": " + tests.strip().splitlines()[-1])
    failed = [ln for ln in tests.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    for ln in failed:
        print("    " + ln)
    touched = len(kinds["edited by hand"]) + len(kinds["regenerated"])
    print(
        f"existing files outside the profile and its captures touched: {touched} "
        f"({len(kinds['edited by hand'])} by hand, {len(kinds['regenerated'])} regenerated)"
    )
    return 0 if not failed and "0 broken" in lint else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--source", default="bnxt", help="the family to copy (default bnxt: knobs and a capture)")
    parser.add_argument("--id", default="acme", help="the new family's name (default acme)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch tree and print its path")
    args = parser.parse_args()
    tree = Path(tempfile.mkdtemp(prefix="fabricd-dry-nic-"))
    try:
        export(tree)
        make_profile(tree, args.source, args.id)
        register(tree, args.source, args.id)
        # the scratch tree's fabricd and fabricd_lab (the lab's fake host reads the captures beside its own source)
        path = os.pathsep.join((str(tree), str(tree / "lab")))
        env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
        python = sys.executable
        for gen in GENERATORS:
            run([python, f"scripts/{gen}"], tree, env)
        lint = run([str(Path(python).with_name("lint-imports"))], tree, env, check=False)
        cmd = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--unit", *TESTS]
        tests = run(cmd, tree, env, check=False)
        return report(tree, args, lint, tests)
    finally:
        if args.keep:
            print(f"kept {tree}")
        else:
            shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
