"""ethtool statistics: the text of ``ethtool -S`` / ``ethtool -i`` and the per-driver normalisation.

Three entry points:

- :func:`parse_ethtool_stats` (text -> ``{name: value}``) and :func:`parse_ethtool_info` (text -> :class:`EthtoolInfo`);
- :func:`normalise` (``{name: value}`` + driver -> :class:`EthtoolStats` with normalised :class:`NicCounter` s);
- :func:`read_ethtool` / :func:`list_ethtool_interfaces`: the replay root's ``DIR/ethtool/<if>.stats`` and
  ``<if>.info`` files (CONTRACTS.md). The live host's ETHTOOL_GSTATS ioctl is an L2 source
  (``fabricd.collectors.ethtool_live``) that hands its ``(name, value)`` pairs to :func:`normalise`.

Units: values are the driver's own (frames, packets, bytes, microseconds for ``*_duration_us`` kinds).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from .common import Direction, Problems, ReadProblem, read_text
from .ethtool_maps import DRIVER_ALIASES, DRIVER_RULES, NameRule

_STAT_LINE = re.compile(r"^[ \t]*(\S.*?):[ \t]+(-?\d+)[ \t]*$", re.MULTILINE)
_INFO_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9 _-]*?):[ \t]*(.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CounterKey:
    """What a counter means, independent of the driver that printed it.

    ``counter`` is a kind from :mod:`fabricd.readers.ethtool_maps`; ``direction`` rx|tx or None; ``priority`` 0-7 or
    None; ``qualifier`` a discard reason or storm level, else None.
    """

    counter: str
    direction: Direction | None = None
    priority: int | None = None
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class NicCounter:
    """One normalised counter: its meaning, its value and the driver's own name for it (``source``)."""

    key: CounterKey
    value: int
    source: str


@dataclass(frozen=True, slots=True)
class EthtoolInfo:
    """``ethtool -i``: driver, driver version, firmware version and PCI bus address (None when not printed)."""

    driver: str | None = None
    version: str | None = None
    firmware: str | None = None
    bus_info: str | None = None


@dataclass(frozen=True, slots=True)
class EthtoolStats:
    """All ethtool statistics of one interface, raw and normalised.

    ``raw`` keeps every ``name -> value`` the driver printed; ``counters`` the ones with a lossless-fabric meaning.
    Use :meth:`get` to look one up by meaning, e.g. ``stats.get("pause_duration_us", "rx", 3)``.
    """

    interface: str
    driver: str | None
    raw: Mapping[str, int]
    counters: tuple[NicCounter, ...]
    info: EthtoolInfo = EthtoolInfo()
    problems: tuple[ReadProblem, ...] = ()
    _index: Mapping[CounterKey, int] = field(default_factory=dict, repr=False, compare=False)

    def get(
        self,
        counter: str,
        direction: Direction | None = None,
        priority: int | None = None,
        qualifier: str | None = None,
    ) -> int | None:
        """The value of one normalised counter, or None when this NIC does not report it."""
        return self._index.get(CounterKey(counter, direction, priority, qualifier))

    def priorities(self, counter: str) -> list[int]:
        """Priorities for which ``counter`` is reported (in either direction), sorted."""
        return sorted(
            {c.key.priority for c in self.counters if c.key.counter == counter and c.key.priority is not None}
        )


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """Parse ``ethtool -S`` text into ``{name: value}`` in printed order.

    Tolerates the ``NIC statistics:`` header, any indentation, names with dots or a ``[N]: `` ring prefix (bnxt),
    trailing spaces and comment lines (only ``name: integer`` lines count). A repeated name keeps its last value.
    """
    return {name: int(value) for name, value in _STAT_LINE.findall(text)}


def parse_ethtool_info(text: str) -> EthtoolInfo:
    """Parse ``ethtool -i`` text (``driver: mlx5_core``, ``firmware-version: 16.35.2000 (MT_0000000008)``, ...)."""
    fields = {k.strip().lower(): v for k, v in _INFO_LINE.findall(text)}

    def pick(name: str) -> str | None:
        value = fields.get(name)
        return value if value else None

    return EthtoolInfo(
        driver=pick("driver"), version=pick("version"), firmware=pick("firmware-version"), bus_info=pick("bus-info")
    )


@lru_cache(maxsize=32)
def _compiled(driver: str | None) -> tuple[tuple[re.Pattern[str], NameRule], ...]:
    name = DRIVER_ALIASES.get(driver or "", driver or "")
    rules = DRIVER_RULES.get(name)
    if rules is None:  # unknown driver: every map, in order
        rules = tuple(r for rs in DRIVER_RULES.values() for r in rs)
    return tuple((re.compile(r.pattern), r) for r in rules)


def _direction(value: str | None) -> Direction | None:
    if value == "rx":
        return "rx"
    if value == "tx":
        return "tx"
    return None


class NameMap:
    """Classifies ethtool names for one driver, remembering each name's meaning (names are stable, values are not)."""

    def __init__(self, driver: str | None) -> None:
        self.driver = driver
        self._rules = _compiled(driver)
        self._memo: dict[str, CounterKey | None] = {}

    def classify(self, name: str) -> CounterKey | None:
        """The meaning of ``name``, or None when it has none for a lossless fabric."""
        try:
            return self._memo[name]
        except KeyError:
            pass
        key: CounterKey | None = None
        for regex, rule in self._rules:
            m = regex.fullmatch(name)
            if m is None:
                continue
            groups = m.groupdict()
            prio = groups.get("prio")
            key = CounterKey(
                rule.counter,
                _direction(groups.get("dir") or rule.direction),
                int(prio) if prio is not None else None,
                rule.qualifier,
            )
            break
        if len(self._memo) < 65536:
            self._memo[name] = key
        return key


@lru_cache(maxsize=64)
def name_map(driver: str | None) -> NameMap:
    """The shared :class:`NameMap` of a driver (unknown drivers share one that tries every map)."""
    return NameMap(driver)


def normalise(
    interface: str,
    raw: Mapping[str, int],
    driver: str | None,
    *,
    info: EthtoolInfo | None = None,
    problems: Iterable[ReadProblem] = (),
) -> EthtoolStats:
    """Build an :class:`EthtoolStats` from raw ``{name: value}`` using the driver's name map."""
    nmap = name_map(driver)
    counters: list[NicCounter] = []
    index: dict[CounterKey, int] = {}
    classify = nmap.classify
    for name, value in raw.items():
        key = classify(name)
        if key is None or key in index:
            continue
        counters.append(NicCounter(key, value, name))
        index[key] = value
    return EthtoolStats(
        interface=interface,
        driver=driver,
        raw=raw,
        counters=tuple(counters),
        info=info or EthtoolInfo(driver=driver),
        problems=tuple(problems),
        _index=index,
    )


def list_ethtool_interfaces(root: str | os.PathLike[str]) -> list[str]:
    """Interfaces with a captured ``DIR/ethtool/<if>.stats`` file in a replay root, sorted."""
    base = os.path.join(os.fspath(root), "ethtool")
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return sorted(n[: -len(".stats")] for n in names if n.endswith(".stats"))


def read_ethtool(root: str | os.PathLike[str], interface: str) -> EthtoolStats:
    """Read ``DIR/ethtool/<if>.stats`` (required) and ``<if>.info`` (optional, gives the driver) from a replay root."""
    base = os.path.join(os.fspath(root), "ethtool", interface)
    problems = Problems()
    info_text = read_text(base + ".info", problems, optional=True)
    info = parse_ethtool_info(info_text) if info_text is not None else EthtoolInfo()
    stats_text = read_text(base + ".stats", problems, optional=False)
    raw = parse_ethtool_stats(stats_text) if stats_text is not None else {}
    if stats_text is not None and not raw and stats_text.strip():
        problems.add(base + ".stats", "no 'name: value' lines (is this `ethtool -S` output?)")
    return normalise(interface, raw, info.driver, info=info, problems=problems)
