"""The one reader of Prometheus exposition text in the tests: every test that picks values out of a scrape uses it.

The text is parsed by prometheus_client's own parser (the format's reference implementation, the same one
tests/golden/test_collectors_golden.py holds the renderer to), so a test depends neither on label order, spacing
nor how a float is printed. A series is written as the exposition writes it, ``name`` or
``name{label="value",...}`` (labels in any order). Importable from any test module: tests/ is on ``sys.path``
(rootdir conftest, pytest's default ``prepend`` import mode); fixtures live in tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client.parser import text_string_to_metric_families

SeriesKey = tuple[str, frozenset[tuple[str, str]]]


def _key(name: str, labels: Mapping[str, str]) -> SeriesKey:
    return name, frozenset(labels.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_key(series: str) -> SeriesKey:
    """``name{a="x",b="y"}`` -> ``(name, {(a, x), (b, y)})``, parsed by the same parser as the text."""
    ((name, labels),) = [
        (s.name, s.labels) for fam in text_string_to_metric_families(f"{series} 0\n") for s in fam.samples
    ]
    return _key(name, labels)


class Metrics(Mapping[str, float]):
    """One scrape by series. Keys iterate as the exposition writes them (``name{a="x",b="y"}``, labels in the text's
    order); a lookup takes any label order. A series the text does not hold is absent (``get`` -> None), never 0."""

    def __init__(self, text: str) -> None:
        self._values: dict[SeriesKey, float] = {}
        self._written: dict[SeriesKey, str] = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                key = _key(s.name, s.labels)
                self._values[key] = s.value
                labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels.items())
                self._written[key] = f"{s.name}{{{labels}}}" if labels else s.name

    def __getitem__(self, series: str) -> float:
        return self._values[series_key(series)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._written.values())

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, series: object) -> bool:
        return isinstance(series, str) and series_key(series) in self._values

    def samples(self) -> Iterator[tuple[str, dict[str, str], float]]:
        """Every sample as ``(name, labels, value)``."""
        for (name, labels), value in self._values.items():
            yield name, dict(labels), value

    def find(self, name: str, **labels: str) -> float | None:
        """The first sample of ``name`` that carries ``labels`` (its other labels may be anything), None if none."""
        want = set(labels.items())
        for (n, have), value in self._values.items():
            if n == name and want <= have:
                return value
        return None

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """``{value of label: sample value}`` over the samples of ``name`` (``fabricd_scrape_collector_success`` by
        ``collector``)."""
        return {
            dict(have)[label]: value for (n, have), value in self._values.items() if n == name and label in dict(have)
        }


def metric_value(text: str, series: str, **labels: str) -> float | None:
    """The value of one series in exposition ``text``, None when the text does not hold it. With ``labels``,
    ``series`` is a metric name and the first sample carrying those labels answers (see :meth:`Metrics.find`)."""
    scrape = Metrics(text)
    return scrape.find(series, **labels) if labels else scrape.get(series)
