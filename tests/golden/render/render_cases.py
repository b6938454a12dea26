"""Golden render cases: tests/golden/render/<platform>/<case>/inventory.yml and its expected/ outputs.

Each case is a small fabric (one leaf and one spine of the platform, two hosts); ``linux_host`` cases use SONiC
switches and compare only the host outputs. Shared by test_render_golden.py and test_render_parsers.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fabricd.intent.render_warnings import RenderWarning
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform
from fabricd.nos.registry import SPECS, AnySwitchIntent, SwitchIntentBuilder
from fabricd.render.render import DeviceRender, render_devices

HERE = Path(__file__).resolve().parent
SWITCH_PLATFORMS = tuple(p.value for p in SPECS)
"""The registry's switch platforms (never a hard-coded list: a new pack without goldens fails the case test)."""
PLATFORMS = (*SWITCH_PLATFORMS, "linux_host")
CASES = ("standard", "two_lossless", "lossy_ecn", "pcp_odd_values", "mixed_nics")


REQUIRED = ("standard", "two_lossless", "lossy_ecn")
"""The cases every platform has (the issue's acceptance: standard recipe, two lossless classes, lossy RoCE)."""


def case_ids() -> list[tuple[str, str]]:
    return [(p, c) for p in PLATFORMS for c in CASES if (HERE / p / c / "inventory.yml").is_file()]


def missing_cases() -> list[str]:
    """The required cases (with their warnings.txt) that a registered pack, or the host, lacks, walking the registry
    as it is now."""
    return [
        f"{p}/{c}"
        for p in (*(s.value for s in SPECS), "linux_host")
        for c in REQUIRED
        if not (HERE / p / c / "inventory.yml").is_file() or not (expected_dir(p, c) / "warnings.txt").is_file()
    ]


@cache
def fabric(platform: str, case: str) -> Fabric:
    return load_inventory(HERE / platform / case / "inventory.yml").fabric


@cache
def renders(platform: str, case: str) -> tuple[DeviceRender, ...]:
    """The renders of the devices this case checks: switches of the platform, or the hosts for linux_host."""
    return tuple(r for r in render_devices(fabric(platform, case)) if r.platform == platform)


@cache
def intents(platform: str, case: str) -> tuple[AnySwitchIntent, ...]:
    fab = fabric(platform, case)
    builder = SwitchIntentBuilder(fab)
    return tuple(builder.build(s) for s in fab.switches)


def expected_dir(platform: str, case: str) -> Path:
    return HERE / platform / case / "expected"


# --- the value walk (test_render_values.py, tests/fuzz/test_render_fuzz.py) ---------------------------------


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if value is None or isinstance(value, bool | Enum | Platform):
        return
    if isinstance(value, BaseModel):
        for name, field in type(value).model_fields.items():
            extra = field.json_schema_extra
            if name == "warnings" or (isinstance(extra, dict) and extra.get("walk") is False):
                continue
            yield from _walk(getattr(value, name), f"{path}.{name}" if path else name)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk(item, path)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, path)
    else:
        yield path, value


def _numbers(text: str) -> set[float]:
    out: set[float] = set()
    for m in re.finditer(r"(?<![\d.])(\d+(?:\.\d+)?)(?:-(\d+))?", text):
        first = float(m.group(1))
        out.add(first)
        if m.group(2) and first.is_integer() and int(m.group(2)) - int(first) < 4096:
            out.update(float(v) for v in range(int(first), int(m.group(2)) + 1))
    return out


def missing_values(intent: BaseModel, text: str, warnings: list[RenderWarning]) -> list[str]:
    """Leaves of ``intent`` found neither in ``text`` nor in a warning, as 'path = value'."""
    numbers = _numbers(text)
    warned = {re.sub(r"\[[^]]*\]", "", w.field) for w in warnings}
    out = []
    for path, value in _walk(intent, ""):
        if any(path == w or path.startswith(w + ".") for w in warned):
            continue
        found = float(value) in numbers if isinstance(value, int | float) else str(value) in text
        if not found:
            out.append(f"{path} = {value!r}")
    return out
