"""A scratch copy of the committed tree for the dry runs (scripts/dry_run_pack.py, scripts/dry_run_nic.py): export
it, run the generators, import-linter and pytest there, sort what changed, and print the verdict."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dry_run_args(doc: str | None, *, what: str, source: str, new: str) -> argparse.Namespace:
    """The dry runs' command line: ``--source`` (the ``what`` to copy), ``--id`` (the new one's name), ``--keep``."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--source", default=source, help=f"the {what} to copy (default {source})")
    parser.add_argument("--id", default=new, help=f"the new {what}'s name (default {new})")
    parser.add_argument("--keep", action="store_true", help="keep the scratch tree and print its path")
    return parser.parse_args()


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, *, check: bool = True) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout + out.stderr


@contextmanager
def scratch(prefix: str, *, keep: bool) -> Iterator[Path]:
    """``git archive HEAD`` extracted to a new directory and committed there (the baseline); removed afterwards
    unless ``keep``."""
    tree = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        for cmd in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "-c", "user.name=dry", "-c", "user.email=dry@localhost", "commit", "-qm", "baseline"],
        ):
            run(cmd, tree)
        yield tree
    finally:
        if keep:
            print(f"kept {tree}")
        else:
            shutil.rmtree(tree, ignore_errors=True)


def env_with(*paths: Path) -> dict[str, str]:
    """This environment with ``paths`` in front on PYTHONPATH (the scratch tree's packages before the venv's)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths)), "PYTHONDONTWRITEBYTECODE": "1"}


def check_tree(tree: Path, env: dict[str, str], generators: Sequence[str], tests: Sequence[str]) -> tuple[str, str]:
    """Regenerate the generated docs, then run import-linter and the unit tier of ``tests`` in ``tree``."""
    python = sys.executable
    for gen in generators:
        run([python, f"scripts/{gen}"], tree, env)
    lint = run([str(Path(python).with_name("lint-imports"))], tree, env, check=False)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "--unit", *tests]
    return lint, run(cmd, tree, env, check=False)


def changes(tree: Path, sort: Callable[[str, str], str | None]) -> dict[str, list[str]]:
    """What changed against the baseline, each path under the kind ``sort(git status code, path)`` names (None:
    left out)."""
    run(["git", "add", "-A"], tree)
    kinds: dict[str, list[str]] = {}
    for line in run(["git", "status", "--porcelain", "--untracked-files=all"], tree).splitlines():
        code, path = line[:2].strip(), line[3:]
        if (kind := sort(code, path)) is not None:
            kinds.setdefault(kind, []).append(path)
    return kinds


def verdict(lint: str, tests: str, test_dirs: Sequence[str]) -> bool:
    """Print import-linter's and pytest's outcome; True when both passed."""
    print("  lint-imports: " + ("kept" if "0 broken" in lint else "BROKEN\n" + lint))
    print("  pytest " + " ".join(test_dirs) + ": " + tests.strip().splitlines()[-1])
    failed = [ln for ln in tests.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    for ln in failed:
        print("    " + ln)
    return not failed and "0 broken" in lint
