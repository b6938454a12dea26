"""The vocabulary of NIC counter names, shared by the readers and the NIC profiles (fabricd/intent/nics/).

A family's ``ethtool -S`` names are a :class:`DriverNames` (rules per driver generation) and its RDMA ``hw_counters``
names a ``{name: HwMeaning}`` map; both live in the family's profile. This module holds only the types and the
counter kinds, so that profiles and readers import it without importing each other.

Each driver's ``ethtool -S`` names are normalised to a :class:`fabricd.readers.ethtool.CounterKey`
``(counter, direction, priority, qualifier)``. A rule is a regular expression matched against the whole name; the
named groups ``dir`` (``rx``/``tx``) and ``prio`` (0-7) fill the key, or the rule states them.

Counter kinds and their units (a kind's unit is in its name where it is not "frames" or "packets"):

- ``pause_frames``: PFC pause (XOFF) frames per priority;
- ``resume_frames``: PFC XON frames (pause with quanta 0) per priority (Intel drivers);
- ``pause_duration_us``: time paused per priority, microseconds;
- ``pause_transitions``: number of times the priority went from not-paused to paused;
- ``priority_bytes`` / ``priority_packets``: traffic per priority;
- ``priority_discards`` (qualifier = reason) and ``priority_ecn_marked_packets`` per priority (rx only);
- ``link_pause_frames`` / ``link_resume_frames`` / ``link_pause_duration_us`` / ``link_pause_transitions``:
  IEEE 802.3x global pause (no priority). Global pause on a RoCE port usually means PFC is not configured;
- ``discards`` (qualifier = reason, no direction): ``rx_port_buffer`` (the NIC's port buffer was full),
  ``rx_out_of_buffer`` (no host receive descriptor or WQE), ``rx_port`` / ``tx_port`` (other port-level
  discards), ``tx_link_down``;
- ``pause_storm_events`` (qualifier = level): the NIC's own pause-storm protection fired;
- ``fec_corrected_codewords`` / ``fec_uncorrectable_codewords`` / ``fec_corrected_bits`` (rx, no priority): the
  port's FEC counters where the driver prints them under ``ethtool -S`` (the link collector exports them).
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import Direction

# Counter kinds (the ``counter`` of a CounterKey).
PAUSE_FRAMES = "pause_frames"
RESUME_FRAMES = "resume_frames"
PAUSE_DURATION_US = "pause_duration_us"
PAUSE_TRANSITIONS = "pause_transitions"
PRIORITY_BYTES = "priority_bytes"
PRIORITY_PACKETS = "priority_packets"
PRIORITY_DISCARDS = "priority_discards"
PRIORITY_ECN_MARKED = "priority_ecn_marked_packets"
LINK_PAUSE_FRAMES = "link_pause_frames"
LINK_RESUME_FRAMES = "link_resume_frames"
LINK_PAUSE_DURATION_US = "link_pause_duration_us"
LINK_PAUSE_TRANSITIONS = "link_pause_transitions"
DISCARDS = "discards"
PAUSE_STORM_EVENTS = "pause_storm_events"
FEC_CORRECTED_CODEWORDS = "fec_corrected_codewords"
FEC_UNCORRECTABLE_CODEWORDS = "fec_uncorrectable_codewords"
FEC_CORRECTED_BITS = "fec_corrected_bits"

COUNTER_KINDS: tuple[str, ...] = (
    PAUSE_FRAMES,
    RESUME_FRAMES,
    PAUSE_DURATION_US,
    PAUSE_TRANSITIONS,
    PRIORITY_BYTES,
    PRIORITY_PACKETS,
    PRIORITY_DISCARDS,
    PRIORITY_ECN_MARKED,
    LINK_PAUSE_FRAMES,
    LINK_RESUME_FRAMES,
    LINK_PAUSE_DURATION_US,
    LINK_PAUSE_TRANSITIONS,
    DISCARDS,
    PAUSE_STORM_EVENTS,
    FEC_CORRECTED_CODEWORDS,
    FEC_UNCORRECTABLE_CODEWORDS,
    FEC_CORRECTED_BITS,
)

DIR = r"(?P<dir>rx|tx)"
"""A name rule's direction group."""
PRIO = r"(?P<prio>[0-7])"
"""A name rule's priority group."""


@dataclass(frozen=True, slots=True)
class NameRule:
    """One name pattern: a full-match regex plus the counter kind it means.

    ``direction``/``qualifier`` are fixed values for names that do not carry them as groups.
    """

    pattern: str
    counter: str
    direction: str | None = None
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    """The names one generation of a driver prints: which releases (``releases``), the rules, where the names come
    from (``source``)."""

    releases: str
    rules: tuple[NameRule, ...]
    source: str


@dataclass(frozen=True, slots=True)
class DriverNames:
    """One driver's ``ethtool -S`` names, per generation. ``unverified`` says why no real capture backs the map
    (None: tests/golden/readers/ethtool holds one). A device's counters are read with its own driver's map only."""

    driver: str
    generations: tuple[Generation, ...]
    unverified: str | None = None

    @property
    def rules(self) -> tuple[NameRule, ...]:
        """Every generation's rules: the names of different releases do not collide, so one map reads them all."""
        return tuple(r for g in self.generations for r in g.rules)


HwMeaning = tuple[str, Direction | None, str | None]
"""An RDMA ``hw_counters`` name's meaning: ``(normalised counter, direction or None, qualifier or None)``."""
