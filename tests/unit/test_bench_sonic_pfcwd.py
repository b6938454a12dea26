"""The watchdog bench's anchor, a SONiC-pfcwd-style detector (bench/anchors/sonic_pfcwd.py), follows the rule of
SONiC's pfc_detect_*.lua: pause moved and the queue did not drain, counted in polls, reset by any other poll."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "anchors" / "sonic_pfcwd.py"
POLL = 200_000  # µs, as the Lua script counts


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sonic_pfcwd_anchor", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _run(q: object, steps: list[tuple[int, int]]) -> list[str | None]:
    return [q.poll(pause, packets, POLL) for pause, packets in steps]  # type: ignore[attr-defined]


def test_detection_equal_to_poll_fires_on_the_first_stalled_poll_then_restores() -> None:
    q = _module().Queue(detection_us=200_000, restoration_us=200_000)
    # first poll only records; then a stalled poll (pause +5, packets +0) fires at once (time left <= one poll)
    assert _run(q, [(0, 0), (5, 0)]) == [None, "storm_detected"]
    # while stormed, pause still moving keeps it; one poll with no new pause restores
    assert _run(q, [(9, 0), (9, 0)]) == [None, "storm_restored"]


def test_draining_or_no_pause_resets_the_count() -> None:
    q = _module().Queue(detection_us=600_000, restoration_us=200_000)
    # 600 ms = three stalled polls; a poll where packets moved in between starts the count again
    assert _run(q, [(0, 0), (1, 0), (2, 0), (3, 4), (4, 4), (5, 4)]) == [None] * 6
    assert _run(q, [(6, 4)]) == ["storm_detected"]


def test_pause_without_stall_is_never_a_storm() -> None:
    q = _module().Queue(detection_us=200_000, restoration_us=200_000)
    assert _run(q, [(i, i * 10) for i in range(20)]) == [None] * 20
