"""Shared by the render conformance suites (one ``test_<platform>_*.py`` per switch OS in this folder).

Each suite checks fabricd's renders against that OS's own grammar or schema (SONiC YANG through libyang, Arista's
pyavd, the pinned NVUE and NX-OS grammar tables) over three things:

- ``corpus(platform)``: every render of the platform's switches from every inventory the repository ships
  (``inventory/lab``, ``inventory/examples``, the render goldens' cases);
- ``intent_space()``: a hypothesis strategy over fabric documents (watchdog actions and timers, ECN bytes and
  probabilities, names, VLAN ids, class layouts) built on the lab fabric, with ``accepted(doc)`` returning the
  fabric only when ``fabricd validate`` accepts it (no errors): the property is that nothing validate accepts
  renders a line the oracle rejects;
- ``record(...)``: each suite's verdict, printed by this folder's conftest at the end of the run.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from fabricd.errors import InventoryError
from fabricd.inventory import load_inventory
from fabricd.model import Fabric
from fabricd.nos.registry import SPECS
from fabricd.nos.validate import validate
from fabricd.render.render import DeviceRender, render_devices

REPO = Path(__file__).resolve().parents[2]
PLATFORMS = tuple(p.value for p in SPECS)


def inventories() -> list[Path]:
    """Every inventory the repository ships: the lab, each example, each render-golden case."""
    found = [REPO / "inventory" / "lab"]
    examples = REPO / "inventory" / "examples"
    found += sorted(p for p in examples.iterdir() if p.suffix in (".yml", ".yaml") or p.is_dir())
    found += sorted((REPO / "tests" / "golden" / "render").glob("*/*/inventory.yml"))
    return found


@cache
def _renders(path: Path) -> tuple[DeviceRender, ...]:
    return tuple(render_devices(load_inventory(path).fabric))


def corpus(platform: str) -> list[tuple[str, DeviceRender]]:
    """``(label, render)`` for every switch of ``platform`` in every shipped inventory; the label names the
    inventory (relative to the repository) and the device."""
    out: list[tuple[str, DeviceRender]] = []
    for path in inventories():
        for r in _renders(path):
            if r.platform == platform:
                out.append((f"{path.relative_to(REPO)}:{r.device}", r))
    return out


def renders_of(fabric: Fabric, platform: str) -> Iterator[DeviceRender]:
    """The renders of ``fabric``'s switches of ``platform``."""
    return (r for r in render_devices(fabric) if r.platform == platform)


# --- the intent space --------------------------------------------------------------------------------------------


@cache
def _lab_document() -> dict[str, Any]:
    doc = load_inventory(REPO / "inventory" / "lab").fabric.model_dump(mode="json", exclude_none=True)
    for device in doc["switches"] + doc["hosts"]:
        device.pop("groups", None)  # the dump keeps members but not the groups: file that defines them
    return doc


_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/@+-"
names = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=64).filter(lambda s: s[0].isalnum())
"""Strings the inventory's name type admits at the model level (validate may still refuse some)."""


@st.composite
def intent_space(draw: st.DrawFn) -> dict[str, Any]:
    """A fabric document: the lab fabric (one switch of each OS) with its policy drawn from the intent space."""
    doc = copy.deepcopy(_lab_document())
    pol = doc["policy"]
    pol["transport"] = draw(st.sampled_from(["roce_v2_lossless", "roce_v2_lossy"]))
    qos = pol["qos"]
    qos["trust"] = draw(st.sampled_from(["dscp", "pcp"]))
    two = draw(st.booleans())
    lossless = [3, 4] if two else [3]
    ecn_name = draw(names)
    ecn_classes = [3, 4] if two else [3]
    roce_w = draw(st.integers(1, 98))
    storage_w = draw(st.integers(1, 99 - roce_w)) if two else 0
    weights: list[int | None] = [100 - roce_w - storage_w, roce_w, storage_w]
    if draw(st.integers(0, 9)) == 0:  # now and then a weight validate must refuse
        weights[draw(st.integers(0, 2))] = draw(st.sampled_from([None, 0]))
    classes: list[dict[str, Any]] = [
        {
            "id": 0,
            "name": draw(names),
            "priorities": [0, 1, 2, 5, 7] if two else [0, 1, 2, 4, 5, 7],
            "weight_percent": weights[0],
        },
        {"id": 3, "name": "roce", "priorities": [3], "weight_percent": weights[1], "ecn_profile": ecn_name},
        {"id": 6, "name": "cnp", "priorities": [6], "scheduler": draw(st.sampled_from(["strict"] * 7 + ["dwrr"]))},
    ]
    if two:
        classes.insert(
            2, {"id": 4, "name": "storage", "priorities": [4], "weight_percent": weights[2], "ecn_profile": ecn_name}
        )
    qos["traffic_classes"] = draw(st.permutations(classes))
    qos["dscp_to_priority"] = {26: 3, 48: 6, **({4: 4} if two else {})}
    lo = draw(st.one_of(st.integers(0, 2_000), st.integers(0, 8_000_000)))
    pol["ecn_profiles"] = [
        {
            "name": ecn_name,
            "min_bytes": lo,
            "max_bytes": lo + 1 + draw(st.one_of(st.integers(0, 2_000), st.integers(0, 8_000_000))),
            "max_mark_probability_percent": draw(st.integers(0, 100)),
            "traffic_classes": ecn_classes,
        }
    ]
    pol["pfc"] = {
        "priorities": lossless,
        "watchdog": {
            "enabled": draw(st.booleans()),
            "detection_ms": draw(st.one_of(st.integers(100, 1_000), st.integers(1, 100_000))),
            "restoration_ms": draw(st.one_of(st.integers(100, 1_000), st.integers(1, 100_000))),
            "poll_ms": draw(st.one_of(st.integers(100, 300), st.integers(1, 10_000))),
            "action": draw(st.sampled_from(["drop", "forward", "alert"])),
        },
    }
    pol["dcqcn"] = {**pol.get("dcqcn", {}), "rp_priorities": lossless, "np_priorities": lossless}
    renumbered: dict[int, int] = {}
    for vlan in pol.get("vlans", []):
        renumbered[vlan["id"]] = vlan["id"] = draw(st.integers(1, 4094).filter(lambda v: v not in renumbered.values()))
        vlan["name"] = draw(names)
    for host in doc["hosts"]:
        for nic in host.get("nics", []):
            if nic.get("vlan") in renumbered:
                nic["vlan"] = renumbered[nic["vlan"]]
    doc["name"] = draw(names)
    return doc


def accepted(doc: dict[str, Any]) -> Fabric | None:
    """The fabric when ``fabricd validate`` accepts ``doc`` (loads, and no check reports an error), else None."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fabric.yml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        try:
            inventory = load_inventory(path)
        except InventoryError:
            return None
        if validate(inventory).errors:
            return None
        return inventory.fabric


# --- verdicts ----------------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    """One oracle's verdict over what a suite checked."""

    platform: str
    oracle: str
    files: int = 0
    lines: int = 0
    rejected: int = 0
    unverified: int = 0

    def line(self) -> str:
        return (
            f"conformance {self.platform} ({self.oracle}): files={self.files} lines={self.lines} "
            f"rejected={self.rejected} unverified={self.unverified}"
        )


VERDICTS: dict[tuple[str, str], Verdict] = {}


def record(
    platform: str, oracle: str, *, files: int = 0, lines: int = 0, rejected: int = 0, unverified: int = 0
) -> Verdict:
    """Add to the verdict of ``(platform, oracle)``; the conftest prints every verdict at the end of the run."""
    v = VERDICTS.setdefault((platform, oracle), Verdict(platform, oracle))
    v.files += files
    v.lines += lines
    v.rejected += rejected
    v.unverified += unverified
    return v


@dataclass
class PathVerdict:
    """The lossless-path check's verdict (fabricd/nos/lossless_path.py: renders parsed back with the pack's
    running-config parser) over the renders of one platform from one source."""

    platform: str
    files: int = 0
    violations: int = 0

    def line(self) -> str:
        return f"lossless-path {self.platform}: files={self.files} violations={self.violations}"


PATHS: dict[str, PathVerdict] = {}
DRAWS: dict[str, int] = {}


def record_path(platform: str, *, files: int = 0, violations: int = 0) -> PathVerdict:
    """Add to the lossless-path verdict of ``platform``; the conftest prints it at the end of the run."""
    v = PATHS.setdefault(platform, PathVerdict(platform))
    v.files += files
    v.violations += violations
    return v


def record_draws(**counts: int) -> None:
    """Counts of the whole-model property's draws (accepted, refused by validate), printed by the conftest."""
    DRAWS.update(counts)
