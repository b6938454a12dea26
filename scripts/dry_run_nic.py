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

import re
import sys
from pathlib import Path

from scratch_tree import changes, check_tree, dry_run_args, env_with, scratch, verdict

GENERATORS = ("gen_nics_doc.py", "gen_roles_doc.py")
TESTS = ("tests/unit", "tests/golden", "tests/fuzz")
REGISTRY = "fabricd/intent/nics/__init__.py"
BY_HAND = (REGISTRY,)
"""The existing files the dry run edits by hand (everything else outside the profile is new or regenerated)."""
CAPTURES = Path("tests/golden/readers/ethtool")
KINDS = ("profile", "new outside", "edited by hand", "regenerated")


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


def kind_of(new: str, code: str, path: str) -> str:
    if path == f"fabricd/intent/nics/{new}.py":
        return "profile"
    if code == "A":
        return "new outside"
    return "edited by hand" if path in BY_HAND else "regenerated"


def main() -> int:
    args = dry_run_args(__doc__, what="NIC family", source="bnxt", new="acme")
    with scratch("fabricd-dry-nic-", keep=args.keep) as tree:
        make_profile(tree, args.source, args.id)
        register(tree, args.source, args.id)
        # the scratch tree's fabricd and fabricd_lab (the lab's fake host reads the captures beside its own source)
        lint, tests = check_tree(tree, env_with(tree, tree / "lab"), GENERATORS, TESTS)
        kinds = changes(tree, lambda code, path: kind_of(args.id, code, path))
        print(f"dry-run NIC family {args.id} (a copy of {args.source}) in {tree}")
        for kind in KINDS:
            print(f"  {kind}: {len(kinds.get(kind, []))}: {', '.join(kinds.get(kind, [])) or '-'}")
        ok = verdict(lint, tests, TESTS)
        by_hand, regenerated = len(kinds.get("edited by hand", [])), len(kinds.get("regenerated", []))
        print(
            f"existing files outside the profile and its captures touched: {by_hand + regenerated} "
            f"({by_hand} by hand, {regenerated} regenerated)"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
