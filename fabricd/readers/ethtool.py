"""ethtool statistics: the text of ``ethtool -S`` / ``ethtool -i`` and the per-driver normalisation.

Entry points:

- :func:`parse_ethtool_stats` (text -> ``{name: value}``) and :func:`parse_ethtool_info` (text -> :class:`EthtoolInfo`);
- :func:`normalise` (``{name: value}`` + driver -> :class:`EthtoolStats` with normalised :class:`NicCounter` s);
- :func:`read_ethtool` / :func:`list_ethtool_interfaces`: the replay root's ``DIR/ethtool/<if>.stats`` and
  ``<if>.info`` files (docs/contracts.md). The live host's ETHTOOL_GSTATS ioctl is an L2 source
  (``fabricd.sources.ethtool_live``) that hands its ``(name, value)`` pairs to :func:`normalise` for snapshots,
  and picks the same counters from its value array through a :class:`NamesLayout` on every scrape.

Layouts for fast paths, each giving exactly what the snapshot path would: :func:`stats_layout` (where the counters sit
in a replay text; ``fabricd.sources.kept_files.EthtoolFiles`` re-reads it through kept-open files) and
:func:`names_layout` (a live name list).

Units: values are the driver's own (frames, packets, bytes, microseconds for ``*_duration_us`` kinds).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

from .common import Direction, Problems, ReadProblem, read_text
from .ethtool_maps import DRIVER_ALIASES, DRIVER_RULES, NameRule
from .framing import frame, framed
from .textparse import TextParseError

_STAT_LINE = re.compile(r"^[ \t]*((?:\[\d+\]: )?[^\n:]+?):[ \t]+(-?\d+)[ \t]*$", re.MULTILINE)
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


def _regular_tokens(text: str) -> tuple[list[str], list[str]] | None:
    """Fast path for the usual ``ethtool -S`` layout (an optional ``NIC statistics:`` header, then one
    ``name: value`` per line with no spaces in names): ``(names with their colon, values)`` from one
    ``str.split()``, about 3x cheaper than a per-line regex. None when the text is not that regular."""
    toks = text.split()
    if toks[:2] == ["NIC", "statistics:"]:
        del toks[:2]
    names, values = toks[0::2], toks[1::2]
    if len(names) != len(values) or not all(map(str.endswith, names, repeat(":"))):
        return None
    if not all(map(str.isdigit, values)):
        return None
    return names, values


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """Parse ``ethtool -S`` text into ``{name: value}`` in printed order.

    Tolerates the ``NIC statistics:`` header, any indentation, names with dots or a ``[N]: `` ring prefix (bnxt),
    trailing spaces and comment lines (only ``name: integer`` lines count). A repeated name keeps its last value.
    Text that is not the plain layout is framed first (:mod:`fabricd.readers.framing`: prompts, CRLF, tabs). An
    output with content and no ``name: value`` line is a :class:`~fabricd.readers.textparse.TextParseError` naming
    its first line.
    """
    regular = _regular_tokens(text)
    if regular is None:  # not the plain layout: frame it (prompt lines, CRLF, tabs) and try again
        text = frame(text)
        regular = _regular_tokens(text) if text else None
    if regular is not None:
        return {n[:-1]: int(v) for n, v in zip(*regular, strict=True)}
    found = {name: int(value) for name, value in _STAT_LINE.findall(text)}
    if not found and text.strip():
        n, first = next((n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip())
        raise TextParseError(
            "ethtool -S", n, "no statistics", expected="'name: value' lines (NIC statistics:)", got=first.strip()
        )
    return found


@framed
def parse_ethtool_info(text: str) -> EthtoolInfo:
    """``ethtool -i`` text -> :class:`EthtoolInfo`. An output with content and none of the ``driver:``,
    ``version:``, ``firmware-version:``, ``bus-info:`` lines (``driver: mlx5_core``, ``firmware-version: 16.35.2000
    (MT_0000000008)``) is a :class:`~fabricd.readers.textparse.TextParseError`."""
    fields = {k.strip().lower(): v for k, v in _INFO_LINE.findall(text)}

    def pick(name: str) -> str | None:
        value = fields.get(name)
        return value if value else None

    info = EthtoolInfo(
        driver=pick("driver"), version=pick("version"), firmware=pick("firmware-version"), bus_info=pick("bus-info")
    )
    if info == EthtoolInfo() and text.strip():
        n, first = next((n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip())
        raise TextParseError(
            "ethtool -i",
            n,
            "no driver information",
            expected="'driver: NAME' and 'firmware-version: ...' lines",
            got=first.strip(),
        )
    return info


def driver_of(text: str) -> str | None:
    """The driver an ``ethtool -i`` text names, None when it names none (a watcher's lenient read)."""
    try:
        return parse_ethtool_info(text).driver
    except TextParseError:
        return None


def stats_or_nothing(text: str) -> dict[str, int]:
    """:func:`parse_ethtool_stats`, or ``{}`` for a text that is not ``ethtool -S`` output (a watcher's lenient read:
    the exporter reports such a file as a problem)."""
    try:
        return parse_ethtool_stats(text)
    except TextParseError:
        return {}


@lru_cache(maxsize=32)
def _compiled(driver: str | None) -> tuple[tuple[re.Pattern[str], NameRule], ...]:
    if not driver:  # the driver is unknown (no `ethtool -i`): every map, in order
        rules = tuple(r for rs in DRIVER_RULES.values() for r in rs)
    else:  # the device's own driver's map, never another driver's names; no map: nothing normalised
        rules = DRIVER_RULES.get(DRIVER_ALIASES.get(driver, driver), ())
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
        self.seen_tokens: set[str] = set()
        self.relevant_tokens: dict[str, CounterKey] = {}

    def classify_token(self, token: str) -> CounterKey | None:
        """:meth:`classify` of a ``name:`` token (with its colon); remembers it in :attr:`seen_tokens` and, when it
        has a meaning, in :attr:`relevant_tokens` (both bounded)."""
        key = self.classify(token[:-1])
        if len(self.seen_tokens) < 65536:
            self.seen_tokens.add(token)
            if key is not None:
                self.relevant_tokens[token] = key
        return key

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


def _stats(
    interface: str,
    driver: str | None,
    raw: Mapping[str, int],
    counters: list[NicCounter],
    index: dict[CounterKey, int],
    *,
    info: EthtoolInfo | None,
    problems: Iterable[ReadProblem],
) -> EthtoolStats:
    """The snapshot of what :func:`normalise` or :func:`normalise_text` selected (``info`` defaults to the driver)."""
    return EthtoolStats(
        interface=interface,
        driver=driver,
        raw=raw,
        counters=tuple(counters),
        info=info or EthtoolInfo(driver=driver),
        problems=tuple(problems),
        _index=index,
    )


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
    return _stats(interface, driver, raw, counters, index, info=info, problems=problems)


def _select(nmap: NameMap, tokens: list[str]) -> list[tuple[int, CounterKey, str]]:
    """The counters with a meaning among the ``name:`` tokens of a regular ``ethtool -S`` text, in output order:
    ``(position of its value, meaning, driver name)``. A repeated name uses its last value; of several names with
    the same meaning the first in :attr:`NameMap.relevant_tokens` wins.

    Only the ~40 tokens with a meaning are looked up: new tokens are classified once (set difference in C), known
    ones through a dict built in C. This keeps a 750-line mlx5 dump near 0.1 ms.
    """
    positions = dict(zip(tokens, range(len(tokens)), strict=True))
    if positions.keys() - nmap.seen_tokens:
        seen = nmap.seen_tokens
        for token in positions:  # in printed order, so that the output order is deterministic
            if token not in seen:
                nmap.classify_token(token)
    out: list[tuple[int, CounterKey, str]] = []
    taken: set[CounterKey] = set()
    for token, meaning in nmap.relevant_tokens.items():
        position = positions.get(token)
        if position is None or meaning in taken:
            continue
        taken.add(meaning)
        out.append((position, meaning, token[:-1]))
    return out


def normalise_text(
    interface: str,
    text: str,
    driver: str | None,
    *,
    info: EthtoolInfo | None = None,
    problems: Iterable[ReadProblem] = (),
    full: bool = True,
) -> EthtoolStats:
    """:func:`parse_ethtool_stats` + :func:`normalise` in one pass. With ``full=False`` only the names that have a
    normalised meaning are converted and kept in ``raw`` (about 3x cheaper on a 750-line mlx5 dump)."""
    if full:
        return normalise(interface, parse_ethtool_stats(text), driver, info=info, problems=problems)
    nmap = name_map(driver)
    raw: dict[str, int] = {}
    counters: list[NicCounter] = []
    index: dict[CounterKey, int] = {}
    regular = _regular_tokens(text)
    if regular is not None:
        names, values = regular
        for position, meaning, name in _select(nmap, names):
            v = int(values[position])
            raw[name] = v
            counters.append(NicCounter(meaning, v, name))
            index[meaning] = v
    else:
        classify = nmap.classify
        for name, value in _STAT_LINE.findall(text):
            key = classify(name)
            if key is None or key in index:
                continue
            v = int(value)
            raw[name] = v
            counters.append(NicCounter(key, v, name))
            index[key] = v
    return _stats(interface, driver, raw, counters, index, info=info, problems=problems)


@dataclass(frozen=True, slots=True, eq=False)
class NamesLayout:
    """Where the counters with a meaning sit in one interface's live statistic *names* (ETHTOOL_GSTRINGS), as
    :func:`normalise` would select them from ``{name: value}`` built in that order: for each name (first appearance
    order; a repeated name takes its last value) the first name of each meaning. ``names`` is the very list the
    layout was built from (a new list means new names)."""

    names: list[str]
    info: EthtoolInfo
    index: dict[str, int]
    """Each name's position (the last one of a repeated name), in first-appearance order."""
    positions: tuple[int, ...]
    selection: tuple[tuple[CounterKey, str], ...]
    """Meaning and driver name of each selected counter, in the order :func:`normalise` reports them."""


def names_layout(names: list[str], info: EthtoolInfo) -> NamesLayout:
    """The :class:`NamesLayout` of a live statistic name list for the driver in ``info``."""
    index = {name: i for i, name in enumerate(names)}
    classify = name_map(info.driver).classify
    taken: set[CounterKey] = set()
    positions: list[int] = []
    selection: list[tuple[CounterKey, str]] = []
    for name, i in index.items():
        key = classify(name)
        if key is None or key in taken:
            continue
        taken.add(key)
        positions.append(i)
        selection.append((key, name))
    return NamesLayout(names, info, index, tuple(positions), tuple(selection))


class StatsValues(Mapping[str, int]):
    """``{name: value}`` of one live read, looked up through a :class:`NamesLayout`'s index instead of being built
    (a 750-name dict costs ~70 us; a caller that wants ten names pays for ten)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: list[int]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> int:
        return self._values[self._index[name]]

    def get(self, name: str, default: int | None = None) -> int | None:  # type: ignore[override]
        i = self._index.get(name)
        return default if i is None else self._values[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


def list_ethtool_interfaces(root: str | os.PathLike[str]) -> list[str]:
    """Interfaces with a captured ``DIR/ethtool/<if>.stats`` file in a replay root, sorted."""
    base = os.path.join(os.fspath(root), "ethtool")
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return sorted(n[: -len(".stats")] for n in names if n.endswith(".stats"))


def read_ethtool(root: str | os.PathLike[str], interface: str, *, full: bool = True) -> EthtoolStats:
    """Read ``DIR/ethtool/<if>.stats`` (required) and ``<if>.info`` (optional, gives the driver) from a replay root.

    ``full=False`` keeps in ``raw`` only the statistics with a normalised meaning (see :func:`normalise_text`).
    """
    base = f"{os.fspath(root)}/ethtool/{interface}"
    problems = Problems()
    info_text = read_text(base + ".info", problems, optional=True)
    info = EthtoolInfo()
    if info_text is not None:
        try:
            info = parse_ethtool_info(info_text)
        except TextParseError as exc:
            problems.add(base + ".info", str(exc))
    stats_text = read_text(base + ".stats", problems, optional=False)
    if stats_text is None:
        return normalise(interface, {}, info.driver, info=info, problems=problems)
    if stats_text.strip() and not _STAT_LINE.search(stats_text):
        problems.add(base + ".stats", "no 'name: value' lines (is this `ethtool -S` output?)")
    try:
        return normalise_text(interface, stats_text, info.driver, info=info, problems=problems, full=full)
    except TextParseError as exc:  # its only stat-like lines were prompt lines
        problems.add(base + ".stats", str(exc))
        return normalise(interface, {}, info.driver, info=info, problems=problems)


_STAT_LINE_BYTES = re.compile(_STAT_LINE.pattern.encode(), re.MULTILINE)
_HEADER = [b"NIC", b"statistics:"]


@dataclass(frozen=True, slots=True, eq=False)
class StatsLayout:
    """Where the counters with a meaning sit in one interface's ``ethtool -S`` text, as it was when the layout was
    built: the text's ``name:`` tokens in printed order, and for each selected counter the position of its value
    token. :meth:`values` re-reads a new text of the same layout (every value is converted again)."""

    info_bytes: bytes | None
    """The ``.info`` file's bytes the layout was built with (None: no ``.info`` file)."""
    info: EthtoolInfo
    header: int
    """How many header tokens precede the first name (2 for ``NIC statistics:``, else 0)."""
    names: list[bytes]
    positions: tuple[int, ...]
    selection: tuple[tuple[CounterKey, str], ...]
    """Meaning and driver name of each selected counter, in the order :func:`normalise_text` reports them."""

    def values(self, data: bytes) -> list[int] | None:
        """The selected counters' values from a text with the same names in the same order (the same conditions
        under which :func:`normalise_text` takes its regular path); None when the layout no longer fits."""
        tokens = data.split()
        h = self.header
        if len(tokens) != h + 2 * len(self.names) or (h and tokens[:h] != _HEADER):
            return None
        if tokens[h::2] != self.names or not b"".join(tokens[h + 1 :: 2]).isdigit():
            return None
        if _STAT_LINE_BYTES.search(data) is None:
            return None
        return [int(tokens[h + 1 + 2 * p]) for p in self.positions]


def stats_layout(info_bytes: bytes | None, data: bytes) -> StatsLayout | None:
    """Build the :class:`StatsLayout` of one ``ethtool -S`` text, or None when the text is not a plain ASCII
    ``name: value`` list (:func:`normalise_text` then reads it line by line)."""
    if not data.isascii() or _STAT_LINE_BYTES.search(data) is None:
        return None
    text = data.decode("ascii")
    tokens = data.split()
    if [t.decode("ascii") for t in tokens] != text.split():
        return None  # separators str.split() honours and bytes.split() does not (\\x1c-\\x1f)
    regular = _regular_tokens(text.strip()) if tokens else None
    if regular is None or not regular[0]:
        return None
    names, values = regular
    if not all(v.isascii() for v in values):
        return None
    header = len(tokens) - 2 * len(names)
    info_text = None if info_bytes is None else info_bytes.decode("utf-8", "replace").strip()
    try:
        info = parse_ethtool_info(info_text) if info_text is not None else EthtoolInfo()
    except TextParseError:
        return None  # the slow path reads it again and records the problem
    selected = _select(name_map(info.driver), names)
    return StatsLayout(
        info_bytes=info_bytes,
        info=info,
        header=header,
        names=tokens[header::2],
        positions=tuple(p for p, _, _ in selected),
        selection=tuple((meaning, name) for _, meaning, name in selected),
    )
