"""Which switches a command acts on, in which rollout batches, and their rendered candidate configs."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from fabricd.errors import UsageError
from fabricd.model import Fabric, Switch, SwitchRole
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.render.env import environment
from fabricd.render.render import render_switch_intent

BATCH_KEYS = ("role", "group")
ROLE_ORDER = (SwitchRole.LEAF, SwitchRole.SPINE, SwitchRole.SUPERSPINE)
"""Rolling order by role: leaves first, so a bad change hits the smallest blast radius before the spines."""


def select_targets(fabric: Fabric, devices: Iterable[str] = (), groups: Iterable[str] = ()) -> list[Switch]:
    """Switches named by ``--device`` and/or belonging to ``--group`` (all switches when both are empty), in
    inventory order. Unknown names are a :class:`UsageError` with the closest names as a hint."""
    devices, groups = list(devices), list(groups)
    names = [s.name for s in fabric.switches]
    for name in devices:
        if fabric.switch(name) is None:
            close = difflib.get_close_matches(name, names, n=3)
            raise UsageError(
                f"{name}: no switch of that name in fabric {fabric.name!r}",
                option="device",
                hint=f"did you mean {', '.join(close)}?" if close else f"switches: {', '.join(names)}",
            )
    known_groups = {g for s in fabric.switches for g in s.groups}
    for group in groups:
        if group not in known_groups:
            raise UsageError(
                f"{group}: no switch belongs to that group",
                option="group",
                hint=f"groups with switches: {', '.join(sorted(known_groups)) or 'none'}",
            )
    if not devices and not groups:
        return list(fabric.switches)
    return [s for s in fabric.switches if s.name in devices or any(g in s.groups for g in groups)]


def plan_batches(targets: list[Switch], key: str | None) -> list[tuple[str, list[Switch]]]:
    """Split targets into rollout batches.

    ``role``: leaves, then spines, then superspines. ``group``: by each switch's first group, in order of first
    appearance (switches without a group form a last batch ``(none)``). ``None``: one batch ``all``.
    """
    if key is None:
        return [("all", list(targets))] if targets else []
    if key not in BATCH_KEYS:
        raise UsageError(f"{key}: unknown batch key", option="batch", hint=f"use one of: {', '.join(BATCH_KEYS)}")
    batches: dict[str, list[Switch]] = {}
    if key == "role":
        for role in ROLE_ORDER:
            members = [s for s in targets if s.role is role]
            if members:
                batches[role.value] = members
        return list(batches.items())
    for s in targets:
        batches.setdefault(s.groups[0] if s.groups else "(none)", []).append(s)
    if "(none)" in batches:
        batches["(none)"] = batches.pop("(none)")
    return list(batches.items())


def render_candidates(fabric: Fabric, targets: Iterable[Switch], templates_dir: Path | None = None) -> dict[str, str]:
    """The rendered config of each target (the file ``fabricd render`` writes: .cfg, .json or .nvue)."""
    env = environment(templates_dir)
    builder = SwitchIntentBuilder(fabric)
    return {s.name: render_switch_intent(builder.build(s), env).primary.text for s in targets}
