#!/usr/bin/env python3
"""Turn one file of a `fabricd capture` folder into a golden capture (run from the repo root; docs/captures.md).

    python scripts/capture_to_golden.py CAPTURE_DIR DEVICE ROLE --name n9k-93180-10.3 \\
        --source "fabricd capture of a Nexus 93180YC-FX, NX-OS 10.3(4a), 2026-11-25 (user report #123)"

writes ``tests/golden/<role folder>/<role>--<name>.txt``: the ``# source:`` line (yours, plus the command and the
capture time from the manifest), then the output unchanged. The ``<role>--`` prefix links it to its parser role
(fabricd/nos/roles.py), which is how the golden tests find its parser; a per-interface output gets its interface in
``<role>--<name>.facts.json`` beside it. It then prints what is left to do by hand: regenerate the expected parse,
review it, write a version read by eye in the facts file (version captures), and drop the role's ``unverified``
reason.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from fabricd.nos.roles import all_roles
from fabricd.readers.switch.replay import ReplayFolder

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path, help="the --out folder of `fabricd capture`")
    ap.add_argument("device")
    ap.add_argument("role", help="the command's role in the device manifest (pfc, queuing, running-config, ...)")
    ap.add_argument("--interface", help="for per-interface commands (NVUE)")
    ap.add_argument("--name", required=True, help="what tells this capture apart: model, release, origin")
    ap.add_argument(
        "--source",
        required=True,
        help="where the output came from: device model, NOS version, "
        "who captured it and when (never fabricd's lab simulator)",
    )
    ap.add_argument("--golden", type=Path, default=REPO / "tests" / "golden", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    device = ReplayFolder(args.capture).device(args.device)
    platform = device.manifest.platform
    record = next(
        (
            c
            for c in device.manifest.commands
            if c.role == args.role and c.interface == args.interface and c.status == "ok"
        ),
        None,
    )
    if record is None or record.file is None:
        have = sorted({c.role for c in device.manifest.commands if c.status == "ok"})
        print(
            f"error: no captured {args.role!r} output for {args.device}; captured roles: {', '.join(have)}",
            file=sys.stderr,
        )
        return 2
    role = next((r for r in all_roles() if r.platform == platform and r.name == args.role), None)
    if role is None:
        print(f"error: {platform}/{args.role} is not a parser role (fabricd/nos/roles.py)", file=sys.stderr)
        return 2
    if not re.fullmatch(r"[A-Za-z0-9._-]+", args.name):
        print("error: --name takes letters, digits, '.', '_' and '-' only", file=sys.stderr)
        return 2
    target = args.golden / role.folder / f"{role.name}--{args.name}.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (device.folder / record.file).read_text(encoding="utf-8")
    header = (
        f"# source: {args.source.strip()}; `{record.command}` captured {device.manifest.captured_at} by "
        f"fabricd capture (secrets scrubbed)"
    )
    target.write_text(header + "\n" + text, encoding="utf-8")
    print(f"wrote {target}")
    if args.interface:
        facts = target.with_name(target.stem + ".facts.json")
        facts.write_text(json.dumps({"interface": args.interface}) + "\n", encoding="utf-8")
        print(f"wrote {facts}")
    flip = "" if role.verified else f"drop the unverified reason of {role.id} in its pack's roles.py; "
    version = (
        f'write the version read by eye in {target.stem}.facts.json ({{"version": "..."}}); '
        if role.name == "version"
        else ""
    )
    print(
        f"next: {version}`pytest tests/golden --update-goldens -k {target.stem}`, review the JSON; "
        f"{flip}`python scripts/gen_roles_doc.py`; `pytest tests/golden/test_parser_roles.py`"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
