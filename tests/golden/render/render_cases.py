"""Golden render cases: tests/golden/render/<platform>/<case>/inventory.yml and its expected/ outputs.

Each case is a small fabric (one leaf and one spine of the platform, two hosts); ``linux_host`` cases use SONiC
switches and compare only the host outputs. Shared by test_render_golden.py and test_render_parsers.py.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fabricd.intent.switch import AnySwitchIntent, SwitchIntentBuilder
from fabricd.inventory import load_inventory
from fabricd.model import Fabric
from fabricd.render.render import DeviceRender, render_devices

HERE = Path(__file__).resolve().parent
PLATFORMS = ("sonic", "arista_eos", "cisco_nxos", "cumulus_nvue", "linux_host")
CASES = ("standard", "two_lossless", "lossy_ecn", "pcp_odd_values")


def case_ids() -> list[tuple[str, str]]:
    return [(p, c) for p in PLATFORMS for c in CASES if (HERE / p / c / "inventory.yml").is_file()]


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
