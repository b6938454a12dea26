"""The collector framework: metric specs, per-scrape families, the registry and a fast text exposition.

Shape (node_exporter's): each source is one :class:`Collector` registered explicitly in a :class:`Registry`. On every
scrape the registry runs each collector with a fresh :class:`Scrape`; the collector fills families declared by
:class:`MetricSpec` s. The registry times each collector and adds, for every collector:

- ``fabricd_scrape_collector_success{collector}``: 1 when the collector read everything, 0 when it raised or
  recorded a problem (a vanished device, an unreadable file, a non-numeric value). What it did read is still exported;
- ``fabricd_scrape_collector_duration_seconds{collector}``;
- ``fabricd_counters_reset_total{collector}``: how many counter series went backwards since the previous scrape
  (a driver reload or firmware reset). The lower value is passed through as is, as the kernel reports it.
  (The issue's name ``fabricd_counter_resets_total`` fails ``promtool check metrics``: promlint rejects a type
  name, ``_counter_``, inside a metric name; docs/history.md, "Exporters".)

An absent counter is never exported as 0: collectors only add samples for values they read.

Exposition is written by :func:`render` (Prometheus text format 0.0.4) instead of prometheus_client's
``generate_latest``: label strings are built once per series and reused, so a scrape costs about 0.15-0.5 µs per
sample instead of ~10 µs (measured in bench/scrape.py, docs/PERFORMANCE.md).
:class:`PrometheusBridge` exposes the same families to a prometheus_client registry for embedding.
"""

from __future__ import annotations

import logging
import math
import operator
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

log = logging.getLogger(__name__)

MetricType = Literal["counter", "gauge"]
Value = int | float

_lower: Callable[[Value, Value], bool] = operator.lt
"""``a < b`` as a C function (counter reset test: the new value is below the previous one)."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric family: full name (``_total`` for counters), type, HELP text (with the unit), label names.

    ``source`` says where the values come from (for METRICS.md).
    """

    name: str
    type: MetricType
    help: str
    labels: tuple[str, ...] = ()
    source: str = ""
    header: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.type == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"counter {self.name} must end in _total")
        if not self.help:
            raise ValueError(f"metric {self.name} needs a HELP text")
        help_text = self.help.replace("\\", "\\\\").replace("\n", "\\n")
        object.__setattr__(self, "header", f"# HELP {self.name} {help_text}\n# TYPE {self.name} {self.type}\n")


class Family:
    """The samples of one :class:`MetricSpec` in one scrape: ``(label values, value)`` pairs."""

    __slots__ = ("samples", "spec")

    def __init__(self, spec: MetricSpec) -> None:
        self.spec = spec
        self.samples: list[tuple[tuple[str, ...], Value]] = []

    def add(self, labels: tuple[str, ...], value: Value | None) -> None:
        """Add one sample; a ``None`` value (absent counter) is skipped, never exported as 0."""
        if value is not None:
            self.samples.append((labels, value))


class Scrape:
    """What one collector produced in one scrape: families by name, and problems (each makes success 0)."""

    __slots__ = ("collector", "families", "problems")

    def __init__(self, collector: str) -> None:
        self.collector = collector
        self.families: dict[str, Family] = {}
        self.problems: list[str] = []

    def family(self, spec: MetricSpec) -> Family:
        fam = self.families.get(spec.name)
        if fam is None:
            fam = self.families[spec.name] = Family(spec)
        return fam

    def problem(self, message: str) -> None:
        """Record a problem: the collector's success becomes 0, and the message is logged once per scrape."""
        self.problems.append(message)


class Collector(Protocol):
    """One counter source. ``metrics`` declares every family it may emit (METRICS.md is generated from it)."""

    name: str
    metrics: tuple[MetricSpec, ...]

    def collect(self, scrape: Scrape) -> None:
        """Fill ``scrape`` with this scrape's values. May raise; the registry turns that into success 0."""
        ...


META_SUCCESS = MetricSpec(
    "fabricd_scrape_collector_success",
    "gauge",
    "1 when the collector read all its sources in this scrape, 0 when one failed (see the exporter's log).",
    ("collector",),
    "fabricd",
)
META_DURATION = MetricSpec(
    "fabricd_scrape_collector_duration_seconds",
    "gauge",
    "Time the collector took in this scrape, in seconds.",
    ("collector",),
    "fabricd",
)
META_RESETS = MetricSpec(
    "fabricd_counters_reset_total",
    "counter",
    "Counter series that went backwards (driver reload, firmware or counter reset) since the exporter started; "
    "the lower value is exported as read.",
    ("collector",),
    "fabricd",
)
META_METRICS: tuple[MetricSpec, ...] = (META_SUCCESS, META_DURATION, META_RESETS)


class Registry:
    """Runs registered collectors on each scrape and keeps the state that spans scrapes (previous counter values,
    reset totals). Collectors are run in registration order; a collector that raises never stops the others."""

    def __init__(self, collectors: Iterable[Collector] = (), *, clock: Callable[[], float] = time.perf_counter):
        self._collectors: list[Collector] = []
        self._clock = clock
        self._previous: dict[str, dict[str, tuple[tuple[tuple[str, ...], ...], tuple[Value, ...]]]] = {}
        self._resets: dict[str, int] = {}
        self._last_problem: dict[str, str | None] = {}
        for c in collectors:
            self.register(c)

    def register(self, collector: Collector) -> None:
        if any(c.name == collector.name for c in self._collectors):
            raise ValueError(f"collector {collector.name!r} is already registered")
        self._collectors.append(collector)
        self._resets.setdefault(collector.name, 0)

    @property
    def collectors(self) -> tuple[Collector, ...]:
        return tuple(self._collectors)

    def specs(self) -> list[MetricSpec]:
        """Every family any registered collector may emit, plus the meta families."""
        out = list(META_METRICS)
        for c in self._collectors:
            out.extend(c.metrics)
        return out

    def _count_resets(self, name: str, families: Iterable[Family]) -> None:
        """Count the counter series whose value is below the previous scrape's (all in C: ~30 ns per series)."""
        previous = self._previous.get(name, {})
        current: dict[str, tuple[tuple[tuple[str, ...], ...], tuple[Value, ...]]] = {}
        resets = 0
        for fam in families:
            if fam.spec.type != "counter" or not fam.samples:
                continue
            fname = fam.spec.name
            labels, values = zip(*fam.samples, strict=True)
            old = previous.get(fname)
            if old is not None:
                old_labels, old_values = old
                if old_labels == labels:  # the same series in the same order: compare position by position
                    resets += sum(map(_lower, values, old_values))
                else:  # a series missing last time compares with itself (never "lower")
                    by_labels = dict(zip(old_labels, old_values, strict=True))
                    resets += sum(map(_lower, values, cast("Iterator[Value]", map(by_labels.get, labels, values))))
            current[fname] = (labels, values)
        self._previous[name] = current
        if resets:
            self._resets[name] += resets
            log.info("collector %s: %d counter series went backwards (counter reset)", name, resets)

    def _report(self, name: str, problems: list[str]) -> None:
        """Log a collector's problems at WARNING when they change, at DEBUG while they stay the same."""
        first = problems[0] if problems else None
        changed = first != self._last_problem.get(name)
        self._last_problem[name] = first
        if first is None:
            if changed:
                log.info("collector %s: reading again without problems", name, extra={"target": name})
            return
        level = logging.WARNING if changed else logging.DEBUG
        log.log(level, "collector %s: %d problem(s); first: %s", name, len(problems), first, extra={"target": name})

    def scrape(self) -> list[Family]:
        """Run every collector once; return their families followed by the meta families."""
        out: list[Family] = []
        success = Family(META_SUCCESS)
        duration = Family(META_DURATION)
        resets = Family(META_RESETS)
        for collector in self._collectors:
            scrape = Scrape(collector.name)
            start = self._clock()
            try:
                collector.collect(scrape)
            except Exception as exc:  # a broken source must never break the scrape
                scrape.problem(f"{type(exc).__name__}: {exc}")
                log.debug("collector %s raised", collector.name, exc_info=True)
            elapsed = self._clock() - start
            self._report(collector.name, scrape.problems)
            families = list(scrape.families.values())
            self._count_resets(collector.name, families)
            out.extend(families)
            success.add((collector.name,), 0 if scrape.problems else 1)
            duration.add((collector.name,), elapsed)
            resets.add((collector.name,), self._resets[collector.name])
        out.extend((success, duration, resets))
        return out

    def exposition(self) -> str:
        """One scrape rendered in the Prometheus text format."""
        return render(self.scrape())


def _escape_label(value: str) -> str:
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def format_value(value: Value) -> str:
    """Prometheus text value: integers exactly, floats with repr precision, ``+Inf``/``-Inf``/``NaN``."""
    if type(value) is int:
        return str(value)
    f = float(value)
    if math.isfinite(f):
        return repr(f) if not f.is_integer() or abs(f) >= 1e16 else str(int(f))
    if math.isnan(f):
        return "NaN"
    return "+Inf" if f > 0 else "-Inf"


class _Prefixes:
    """Cache of ``name{label="value",...} `` strings per family, bounded so that churning label values cannot grow it
    forever."""

    LIMIT = 200_000

    def __init__(self) -> None:
        self._by_family: dict[str, dict[tuple[str, ...], str]] = {}
        self._size = 0

    def of(self, spec: MetricSpec) -> dict[tuple[str, ...], str]:
        """The cache of one family: label values -> prefix (fill it with :meth:`make`)."""
        cache = self._by_family.get(spec.name)
        if cache is None:
            cache = self._by_family[spec.name] = {}
        return cache

    def make(self, spec: MetricSpec, labels: tuple[str, ...]) -> str:
        """Build, cache and return the prefix of one series."""
        if labels:
            inner = ",".join(f'{n}="{_escape_label(v)}"' for n, v in zip(spec.labels, labels, strict=True))
            prefix = f"{spec.name}{{{inner}}} "
        else:
            prefix = f"{spec.name} "
        if self._size >= self.LIMIT:
            for cache in self._by_family.values():
                cache.clear()
            self._size = 0
        self.of(spec)[labels] = prefix
        self._size += 1
        return prefix

    def get(self, spec: MetricSpec, labels: tuple[str, ...]) -> str:
        return self.of(spec).get(labels) or self.make(spec, labels)


_PREFIXES = _Prefixes()


def render(families: Iterable[Family]) -> str:
    """Render families in the Prometheus text exposition format 0.0.4 (families without samples are left out)."""
    parts: list[str] = []
    append = parts.append
    make = _PREFIXES.make
    for fam in families:
        samples = fam.samples
        if not samples:
            continue
        spec = fam.spec
        append(spec.header)
        get = _PREFIXES.of(spec).get
        for labels, value in samples:
            prefix = get(labels) or make(spec, labels)
            append(f"{prefix}{value}\n" if type(value) is int else f"{prefix}{format_value(value)}\n")
    return "".join(parts)


class PrometheusBridge:
    """Exposes a :class:`Registry` to a ``prometheus_client`` registry (``REGISTRY.register(PrometheusBridge(r))``),
    for programs that already serve prometheus_client metrics. ``fabricd export`` itself serves :func:`render`."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        for fam in self.registry.scrape():
            spec = fam.spec
            if spec.type == "counter":
                metric: Any = CounterMetricFamily(spec.name, spec.help, labels=spec.labels)
            else:
                metric = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
            for labels, value in fam.samples:
                metric.add_metric(list(labels), value)
            yield metric
