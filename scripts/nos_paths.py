#!/usr/bin/env python3
"""Rewrite imports and paths from before the platform packs (fabricd/nos/<id>/) to where the code lives now.

For a branch written before the move (run from the repo root after merging it): ``python scripts/nos_paths.py
$(git diff --name-only main -- '*.py' '*.md')`` rewrites, in place, module paths (``fabricd.readers.switch.sonic``
-> ``fabricd.nos.sonic.show``, ``config_sonic`` -> ``fabricd.nos.sonic.running``, ``fabricd.platforms.sonic`` ->
``fabricd.nos.sonic``, ``fabricd.readers.roles`` -> ``fabricd.nos.roles``, ``fabricd.intent.eos`` ->
``fabricd.nos.arista_eos.ecn``), file paths in docs, ``from fabricd.readers.switch import sonic`` and the names that
left ``fabricd.intent.switch`` and ``fabricd.intent.watchdog_timers`` for the packs and the registry. Code moved
*inside* a file (the SONiC parts of intent/switch.py are now fabricd/nos/sonic/intent.py) is not moved by this, nor
are ``readers.switch.version.VERSION_COMMANDS[p]`` / ``parse_version(p, text)``: they are now
``spec_of(p).version_command`` / ``spec_of(p).parse_version(text)`` (fabricd.nos.registry).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

IDS = ("sonic", "arista_eos", "cisco_nxos", "cumulus_nvue")

PATHS: list[tuple[str, str]] = [
    (r"fabricd\.readers\.roles\b", "fabricd.nos.roles"),
    (r"fabricd/readers/roles\.py", "fabricd/nos/roles.py"),
    (r"fabricd\.intent\.eos\b", "fabricd.nos.arista_eos.ecn"),
    (r"fabricd/intent/eos\.py", "fabricd/nos/arista_eos/ecn.py"),
]
for _id in IDS:
    PATHS += [
        (rf"fabricd\.readers\.switch\.config_{_id}\b", f"fabricd.nos.{_id}.running"),
        (rf"fabricd\.readers\.switch\.{_id}\b", f"fabricd.nos.{_id}.show"),
        (rf"fabricd\.platforms\.{_id}\b", f"fabricd.nos.{_id}"),
        (rf"fabricd/readers/switch/config_{_id}\.py", f"fabricd/nos/{_id}/running.py"),
        (rf"fabricd/readers/switch/{_id}\.py", f"fabricd/nos/{_id}/show.py"),
        (rf"fabricd/platforms/{_id}/", f"fabricd/nos/{_id}/"),
    ]

MOVED_NAMES: dict[str, str] = {
    **dict.fromkeys(("SwitchIntentBuilder", "AnySwitchIntent", "SwitchIntent", "switch_intent", "switch_intents"),
                    "fabricd.nos.registry"),
    **dict.fromkeys(("EosSwitchIntent", "EOS_DSCP_PER_LINE"), "fabricd.nos.arista_eos.intent"),
    **dict.fromkeys(("NxosSwitchIntent", "NxosQosClass", "NxosQueue"), "fabricd.nos.cisco_nxos.intent"),
    **dict.fromkeys(("NvueSwitchIntent", "NvuePfcProfile", "NVUE_BRIDGE"), "fabricd.nos.cumulus_nvue.intent"),
    **dict.fromkeys(("SonicSwitchIntent", "SonicConfigDb", "SonicTableLine", "SONIC_MAP", "SONIC_CABLE_PROFILE",
                     "SONIC_LOSSLESS_POOL"), "fabricd.nos.sonic.intent"),
}
for _short, _id in (("eos", "arista_eos"), ("nxos", "cisco_nxos"), ("nvue", "cumulus_nvue"), ("sonic", "sonic")):
    MOVED_NAMES[f"{_short}_watchdog"] = f"fabricd.nos.{_id}.watchdog"
    MOVED_NAMES[f"{_short.capitalize()}Watchdog"] = f"fabricd.nos.{_id}.watchdog"
    MOVED_NAMES[f"{_short.upper()}_"] = f"fabricd.nos.{_id}.watchdog"  # range constants: prefix match below

FROM_PACKAGE = re.compile(r"^( *)from fabricd\.readers\.switch import (\([^)]*\)|[a-z_, ]+)$", re.M)
FROM_INTENT = re.compile(r"^( *)from fabricd\.intent\.(switch|watchdog_timers) import (\([^)]*\)|[^\n]+)$", re.M)


def _target(name: str) -> str | None:
    if name in MOVED_NAMES:
        return MOVED_NAMES[name]
    return next((m for k, m in MOVED_NAMES.items() if k.endswith("_") and name.startswith(k)), None)


def _package(m: re.Match[str]) -> str:
    ind, names = m.group(1), [n.strip() for n in m.group(2).strip("()").replace("\n", " ").split(",") if n.strip()]
    out, keep = [], []
    for n in names:
        if n in IDS:
            out.append(f"{ind}from fabricd.nos.{n} import show as {n}")
        elif n.startswith("config_") and n[7:] in IDS:
            out.append(f"{ind}from fabricd.nos.{n[7:]} import running as {n}")
        else:
            keep.append(n)
    if keep:
        out.insert(0, f"{ind}from fabricd.readers.switch import {', '.join(keep)}")
    return "\n".join(out)


def _intent(m: re.Match[str]) -> str:
    ind, module = m.group(1), m.group(2)
    names = [n.strip() for n in m.group(3).strip("()").replace("\n", " ").split(",") if n.strip()]
    keep: list[str] = []
    moved: dict[str, list[str]] = {}
    for n in names:
        target = _target(n.split(" as ")[0].strip())
        if target is None:
            keep.append(n)
        else:
            moved.setdefault(target, []).append(n)
    lines = [f"{ind}from fabricd.intent.{module} import {', '.join(keep)}"] if keep else []
    lines += [f"{ind}from {target} import {', '.join(ns)}" for target, ns in moved.items()]
    return "\n".join(lines)


def rewrite(text: str) -> str:
    for old, new in PATHS:
        text = re.sub(old, new, text)
    text = FROM_PACKAGE.sub(_package, text)
    return FROM_INTENT.sub(_intent, text)


def main(argv: list[str]) -> int:
    for name in argv:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
