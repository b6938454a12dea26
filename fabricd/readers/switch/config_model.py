"""The lossless QoS settings read back from a switch's running config, normalised across platforms.

Each platform pack's ``fabricd/nos/<platform>/running.py`` parses its NOS's running config (SONiC CONFIG_DB JSON,
EOS and NX-OS indented text, NVUE ``nv set`` commands) into a :class:`LosslessConfig`: per port, what is *in
effect* after the NOS's own indirections (EOS ``service-profile``, NX-OS ``system qos`` policies, SONiC
``PORT_QOS_MAP`` map names, NVUE PFC profiles). ``fabricd audit switch`` compares it with the intent.

Conventions: bytes and milliseconds everywhere (EOS/NX-OS ``kbytes`` are 1000 bytes, as the intent renders them);
``None`` means "not set in the running config" (the device default applies, which fabricd does not guess); an empty
set means "explicitly none". Parsers are pure and never raise on odd input: what they cannot read lands in
``problems``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

Trust = Literal["dscp", "pcp", "both", "port"]
"""What classifies ingress traffic on a port: DSCP (L3), PCP/802.1p (L2), both, or the port default only."""

UNIT_BYTES: dict[str, int] = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}
"""Threshold units of EOS and NX-OS WRED/ECN commands, in bytes. ``segments`` (cells) have no fixed size."""


@dataclass(frozen=True, slots=True)
class EcnConfig:
    """WRED/ECN on one egress queue: marking on or off, and the thresholds in bytes (None when unreadable)."""

    enabled: bool
    min_bytes: int | None = None
    max_bytes: int | None = None
    probability_percent: int | None = None


@dataclass(frozen=True, slots=True)
class PortConfig:
    """The lossless settings in effect on one port.

    - ``mtu_bytes``: the port MTU (None: not set, device default);
    - ``trust``: what classifies ingress traffic (None: not set);
    - ``dscp_to_priority`` / ``pcp_to_priority``: the classification in effect (codepoint -> priority/traffic
      class); ``priority_to_queue``: priority -> egress queue; NX-OS classifies straight to a qos-group (= queue),
      so it fills ``dscp_to_queue`` / ``pcp_to_queue`` instead. Absent codepoints are unmapped (device default);
    - ``pfc_priorities``: priorities with PFC (no-drop) in effect, empty when PFC is off; ``pfc_note`` says why
      when the NOS leaves it to negotiation (NX-OS ``mode auto``);
    - ``watchdog_priorities``: priorities the PFC watchdog watches (empty: off); ``detection_ms`` and
      ``restoration_ms`` the watchdog timers that apply to the port, whether or not it is on (None: not set and no
      documented default, or not readable);
    - ``ecn``: egress queue -> ECN settings;
    - ``queue_mtu_bytes``: per-queue (class) MTU where the NOS has one (NX-OS network-qos), else empty;
    - the lossless path (checked by :mod:`fabricd.nos.lossless_path`): ``pfc_queues`` PFC priority -> the egress
      queue a pause received for it stops (SONiC ``pfc_to_queue_map``, NX-OS the no-drop class listing the CoS;
      EOS and NVUE pause the queue the priority maps to); ``watchdog_queues`` watched queue -> the priorities whose
      pause frames the watchdog counts on it; ``buffered_priorities`` priorities whose ingress priority group has
      lossless headroom (None: not read); ``strict_queues`` strict-priority egress queues (None: not read).
    """

    name: str
    mtu_bytes: int | None = None
    trust: Trust | None = None
    dscp_to_priority: dict[int, int] | None = None
    pcp_to_priority: dict[int, int] | None = None
    priority_to_queue: dict[int, int] | None = None
    dscp_to_queue: dict[int, int] | None = None
    pcp_to_queue: dict[int, int] | None = None
    pfc_priorities: frozenset[int] = frozenset()
    pfc_note: str | None = None
    watchdog_priorities: frozenset[int] = frozenset()
    detection_ms: int | None = None
    restoration_ms: int | None = None
    ecn: dict[int, EcnConfig] = field(default_factory=dict)
    queue_mtu_bytes: dict[int, int] = field(default_factory=dict)
    pfc_queues: dict[int, int] = field(default_factory=dict)
    watchdog_queues: dict[int, frozenset[int]] = field(default_factory=dict)
    buffered_priorities: frozenset[int] | None = None
    strict_queues: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class LosslessConfig:
    """Every port's lossless settings, keyed by the port name as the NOS prints it, plus what could not be read.

    ``profiles`` holds, where the NOS has named QoS profiles that ports apply (EOS ``qos profile``), the settings a
    port applying only that profile gets (name = profile name, no MTU).
    """

    platform: str
    ports: dict[str, PortConfig]
    problems: tuple[str, ...] = ()
    profiles: dict[str, PortConfig] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------------------
# Helpers shared by the platform parsers
# ------------------------------------------------------------------------------------------------------------

_RANGE = re.compile(r"^(\d+)-(\d+)$")


def int_list(text: str, lo: int = 0, hi: int = 63) -> list[int] | None:
    """``'0-25,27-47'``, ``'0,1,2'``, ``'0 1 2'`` or ``'26'`` -> the integers, in order; None when any item is not
    an integer or range within ``lo``-``hi``."""
    out: list[int] = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        m = _RANGE.match(item)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a > b or a < lo or b > hi:
                return None
            out.extend(range(a, b + 1))
        elif item.isdigit() and lo <= int(item) <= hi:
            out.append(int(item))
        else:
            return None
    return out


def to_int(text: str | None) -> int | None:
    """A plain non-negative integer, else None."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def seconds_to_ms(text: str) -> int | None:
    """``'0.2'`` -> 200 (decimal seconds as EOS prints timers); None for ``auto`` or anything non-numeric."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return round(value * 1000)


def threshold_bytes(value: str, unit: str) -> int | None:
    """An EOS/NX-OS threshold in bytes: ``150 kbytes`` -> 150000; ``segments`` or an unknown unit -> None."""
    number = to_int(value)
    factor = UNIT_BYTES.get(unit.lower())
    return number * factor if number is not None and factor is not None else None


@dataclass
class Block:
    """One line of an indented (Cisco-style) config and the lines indented under it."""

    line: str
    children: list[Block] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [c.line for c in self.children]

    def find(self, prefix: str) -> Iterator[Block]:
        """Children whose line starts with ``prefix``."""
        return (c for c in self.children if c.line.startswith(prefix))


COMMENT = re.compile(r"^(?:!|end$|version |Building configuration)")
"""Lines of an EOS/NX-OS running config that set nothing: ``!`` comments, ``end``, the version and banner lines."""


class TreeNode(Protocol):
    """What :func:`indented_tree` builds: a node holding the nodes indented under it."""

    @property
    def children(self) -> list[Any]: ...


NodeT = TypeVar("NodeT", bound=TreeNode)


def indented_tree(text: str, comment: re.Pattern[str], node: Callable[[str], NodeT]) -> list[NodeT]:
    """Top-level nodes of an indented (Cisco-style) config, each made by ``node(line)``: blank lines and lines
    matching ``comment`` are skipped, a line's parent is the nearest earlier line with less indentation, and runs
    of spaces are collapsed. Shared by these readers and the EOS/NX-OS drivers' diff (fabricd.platforms.textcfg)."""
    roots: list[NodeT] = []
    stack: list[tuple[int, NodeT]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or comment.search(stripped):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        block = node(" ".join(stripped.split()))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack:
            stack[-1][1].children.append(block)
        else:
            roots.append(block)
        stack.append((indent, block))
    return roots


def indented(text: str, comment: re.Pattern[str] = COMMENT) -> list[Block]:
    """Top-level :class:`Block` s of an indented config (:func:`indented_tree`)."""
    return indented_tree(text, comment, Block)


def by_queue(priorities: Iterable[int], to_queue: dict[int, int]) -> dict[int, frozenset[int]]:
    """queue -> the priorities among ``priorities`` that ``to_queue`` maps there (an unmapped priority stays in the
    queue with its number)."""
    out: dict[int, set[int]] = {}
    for p in priorities:
        out.setdefault(to_queue.get(p, p), set()).add(p)
    return {q: frozenset(ps) for q, ps in out.items()}


def mapping(pairs: Iterable[tuple[Iterable[int], int]]) -> dict[int, int]:
    """Codepoint lists and their target -> one dict (a later line for the same codepoint wins, as on the CLI)."""
    out: dict[int, int] = {}
    for codepoints, target in pairs:
        for cp in codepoints:
            out[cp] = target
    return out


def nothing_read(config: LosslessConfig, text: str, what: str) -> LosslessConfig:
    """``config`` with a problem added when it holds no port and no profile although ``text`` has a line that is not
    a comment (``!``, ``#``): an output that is not this NOS's running config (another command's output, an error
    page) is a located failure naming its first line (its first word only: a scrubbed capture must read the same),
    never an empty config that passes every check."""
    if config.ports or config.profiles:
        return config
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("!", "#")):
            problem = (
                f"line {n}: no interface or QoS setting read from the {what} (expected the NOS's running "
                f"config, got a line starting {stripped.split()[0][:40]!r})"
            )
            return LosslessConfig(config.platform, config.ports, (*config.problems, problem), config.profiles)
    return config
