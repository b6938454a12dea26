"""The saved-run format that ``fabricd demo`` writes and ``fabricd report`` reads.

A run record is plain JSON: time series (seconds since the epoch, values in base units), the storm's timeline,
and the dashboard panels as fetched from Prometheus's query_range API. Users can save one from their own fabric
with ``fabricd report --prometheus URL --save run.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field, ValidationError

from fabricd.errors import FabricdError
from fabricd.model.types import Model


class Series(Model):
    """One labelled time series: ``points`` are (epoch seconds, value) pairs."""

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    points: list[tuple[float, float]] = Field(default_factory=list)

    @property
    def legend(self) -> str:
        keys = ("switch", "device", "interface", "priority", "direction", "queue")
        parts = [f"{k}={self.labels[k]}" for k in keys if k in self.labels]
        return " ".join(parts) or self.name


class StormTimeline(Model):
    """When a storm was injected, detected and restored, and where it started (epoch seconds)."""

    device: str
    interface: str
    priority: int
    direction: str = "tx"
    injected_ts: float
    detected_ts: float | None = None
    stopped_ts: float | None = None
    restored_ts: float | None = None
    origin_device: str | None = None
    origin_interface: str | None = None
    paused_ports: list[str] = Field(default_factory=list, description="'device:interface' seen paused")

    @property
    def detection_latency_ms(self) -> float | None:
        return None if self.detected_ts is None else (self.detected_ts - self.injected_ts) * 1000.0


class Panel(Model):
    title: str
    unit: str = ""
    query: str = ""
    series: list[Series] = Field(default_factory=list)


class RunRecord(Model):
    """Everything the pictures need from one run."""

    fabric: str
    inventory: str | None = None
    started_ts: float
    ended_ts: float
    pause: list[Series] = Field(default_factory=list, description="pause duration ratio per port and priority")
    storm: StormTimeline | None = None
    panels: list[Panel] = Field(default_factory=list)


class ReportError(FabricdError):
    """A run record could not be read or a picture could not be made."""


def load_record(path: Path) -> RunRecord:
    try:
        return RunRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise ReportError(
            f"{path}: cannot read run record: {exc.strerror}",
            hint="pass a file written by `fabricd demo` or `fabricd report --save`",
        ) from None
    except (json.JSONDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ReportError(
            f"{path}: not a fabricd run record ({first})",
            hint="pass a file written by `fabricd demo` or `fabricd report --save`",
        ) from None


def save_record(record: RunRecord, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record.model_dump_json(indent=1), encoding="utf-8")
