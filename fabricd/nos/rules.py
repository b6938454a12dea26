"""What a switch OS accepts, as data: :class:`DeviceRules`, one per platform pack (``fabricd/nos/<id>/rules.py``).

Every rule carries its source (a schema file and path, or a manual page) and whether that source was read
(``verified``); a rule without a findable source is ``verified=False`` and docs/platforms.md lists it
(:func:`rules_markdown`, test-checked). ``fabricd validate`` assembles the rules of the platforms in use from the
registry (:mod:`fabricd.nos.checks`): the pack declares, the engine checks, so a new NOS adds data, not a check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields

HEADROOM_INPUTS = (
    "policy.buffers.cable_length_m{}",
    "policy.buffers.lossless_mtu_bytes",
    "policy.buffers.xon_bytes",
    "switches[].ports[].speed",
    "switches[].ports[].role",
    "hosts[].nics[].cable_m",
    "links[].role",
    "links[].cable_m",
)
"""The inventory fields fabricd's PFC headroom (xoff/xon) is computed from: a pack whose NOS sizes headroom itself
notes each of them in its ``coverage``."""


@dataclass(frozen=True)
class Source:
    """Where a rule was read: ``ref`` names the schema file and path, or the manual page (URL or title).
    ``verified`` False: no source states it; the value is fabricd's best reading and docs/platforms.md lists it."""

    ref: str
    verified: bool = True


@dataclass(frozen=True)
class PortNames:
    """Port names the NOS configures per port (PFC, the watchdog, MTU, QoS bindings): front-panel and breakout
    ports (``physical``). ``lag``: the NOS's LAG names, refused as ports because QoS is bound to the member ports
    (a SONiC ``PortChannel`` rendered as a PORT row has no ``lanes``); ``forms`` what the error message lists."""

    physical: re.Pattern[str]
    forms: str
    lag: re.Pattern[str] | None
    source: Source


@dataclass(frozen=True)
class NameRule:
    """A name the NOS stores (VLAN name, QoS profile or map name): a pattern (None: any fabricd ``Name``) and a
    maximum length. ``longer``: what the NOS needs for a longer name when fabricd does not render it (FAB141's
    hint adds it in parentheses; empty: nothing)."""

    max_length: int
    source: Source
    pattern: re.Pattern[str] | None = None
    forms: str = ""
    longer: str = ""


@dataclass(frozen=True)
class MtuRule:
    """Port MTU by port mode, as fabricd renders the port: ``routed`` (no VLAN on the port) and ``l2`` (a
    switchport: the port carries a VLAN). ``l2_values``: the only MTUs a Layer 2 port takes (None: the range)."""

    routed: tuple[int, int]
    source: Source
    l2_values: tuple[int, ...] | None = None
    l2_source: Source | None = None


@dataclass(frozen=True)
class WatchdogGrid:
    """The PFC watchdog as the device expresses it, in ms.

    ``detection_ms`` / ``restoration_ms``: ranges when the timer is a value of its own; ``detect_polls`` /
    ``restore_polls``: the timer is poll x an integer in this range (NX-OS interface / fixed-restore multiplier,
    NVUE robustness) so the representable values depend on the poll; ``restoration_ms`` None and
    ``restore_polls`` None: not configurable. ``step_ms``: timers are whole multiples of this (EOS 10 ms).
    ``actions``: the policy actions with a device form. ``refuses_other_actions``: another action is an error of
    the pack's own check (EOS FAB120), so FAB042 does not also warn what the codec renders it as; False: the codec
    renders it as one of ``actions`` and FAB042 warns."""

    poll_ms: tuple[int, int] | None
    source: Source
    detection_ms: tuple[int, int] | None = None
    restoration_ms: tuple[int, int] | None = None
    detect_polls: tuple[int, int] | None = None
    restore_polls: tuple[int, int] | None = None
    step_ms: int | None = None
    actions: tuple[str, ...] = ("drop", "forward", "alert")
    actions_source: Source | None = None
    refuses_other_actions: bool = False


@dataclass(frozen=True)
class EcnUnits:
    """How the NOS takes ECN/WRED thresholds: ``unit_bytes`` per unit (1 = bytes, 1000 = kbytes), ``rounding``
    how a value between units renders (``nearest`` or ``exact-or-bytes``: EOS switches to bytes)."""

    unit_bytes: int
    source: Source
    rounding: str = "nearest"


@dataclass(frozen=True)
class Reserved:
    """Values the NOS keeps for itself (inclusive ranges) or does not let a config define."""

    ranges: tuple[tuple[int, int], ...]
    source: Source
    why: str


@dataclass(frozen=True)
class DeviceRules:
    """Everything validate checks about one NOS, with sources. A rule left None is a thing the NOS does not
    restrict beyond fabricd's model (or that fabricd does not render for it)."""

    ports: PortNames
    mtu: MtuRule
    watchdog: WatchdogGrid
    ecn: EcnUnits
    vlan_name: NameRule | None = None
    profile_name: NameRule | None = None
    reserved_vlans: Reserved | None = None
    port_description: NameRule | None = None
    coverage: Mapping[str, str] = field(default_factory=dict)
    """field -> what this NOS does with it, where that differs from the shared entry of the field-coverage matrix
    (:mod:`fabricd.nos.coverage`)."""

    def sources(self) -> Iterator[tuple[str, Source]]:
        """Every (rule name, source) of this rule set, in declaration order."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Source):
                yield f.name, value
            for sub in fields(value) if hasattr(value, "__dataclass_fields__") and not isinstance(value, type) else ():
                inner = getattr(value, sub.name)
                if isinstance(inner, Source):
                    label = f.name if sub.name == "source" else f"{f.name}.{sub.name.removesuffix('_source')}"
                    yield label, inner


def rules_markdown(rules: dict[str, tuple[str, DeviceRules]]) -> str:
    """The unverified rules of every pack as a markdown list (docs/platforms.md carries it; a test keeps it equal).
    ``rules``: platform id -> (title, rules)."""
    lines = ["| platform | rule | what fabricd assumes (source searched) |", "|---|---|---|"]
    for pid, (title, r) in rules.items():
        for name, src in r.sources():
            if not src.verified:
                lines.append(f"| {title} (`{pid}`) | `{name}` | {src.ref.replace('|', '/')} |")
    return "\n".join(lines) + "\n"
