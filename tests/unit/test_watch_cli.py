"""``fabricd watch`` through the real entry point, in-process: JSON lines on a replay root with a storm already in
its counters, located errors for bad timers, hosts and roots, and the intent's timers used by default."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricd_lab.replay import ReplayHost, ReplayNic

Runner = Callable[..., tuple[int, str, str]]
REPO = Path(__file__).resolve().parents[2]


def test_quiet_replay_root_exits_0_with_no_events(run_main: Runner, tmp_path: Path) -> None:
    ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0)]).build()
    code, out, err = run_main(
        "watch",
        "--root",
        str(tmp_path),
        "--poll-ms",
        "20",
        "--detection-ms",
        "100",
        "--duration",
        "0.5",
        "--output",
        "json",
    )
    assert code == 0, err
    assert out == ""
    assert "detection 100 ms, restoration 100 ms, poll 20 ms" in err
    assert "0 events (0 findings)" in err


def test_intent_timers_and_a_named_host(run_main: Runner, tmp_path: Path) -> None:
    ReplayHost(tmp_path, [ReplayNic("ens1f0np0", "mlx5_0", channels=0)]).build()
    code, _, err = run_main("watch", str(REPO / "inventory" / "lab"), "--root", f"gpu3={tmp_path}", "--duration", "0.3")
    assert code == 0, err
    assert "host:gpu3; detection 200 ms, restoration 200 ms, poll 100 ms" in err  # policy.pfc.watchdog of the lab


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--poll-ms", "300", "--detection-ms", "200"), "poll 300 ms is longer than min(detection 200 ms"),
        (("--root", "/nonexistent/fdt-watch"), "--root /nonexistent/fdt-watch: not a directory"),
        ((str(REPO / "inventory" / "lab"), "--host", "nope"), "host 'nope' is not in the inventory; use one of: gpu1"),
    ],
)
def test_bad_input_is_a_located_error(run_main: Runner, args: tuple[str, ...], message: str) -> None:
    code, out, err = run_main("watch", *args, "--duration", "0.1")
    assert code == 2
    assert message in err and "Traceback" not in err and out == ""


def test_two_unnamed_roots_are_ambiguous(run_main: Runner, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        ReplayHost(d, [ReplayNic("eth0", "mlx5_0", channels=0)]).build()
    code, _, err = run_main("watch", "--root", str(a), "--root", str(b), "--duration", "0.1")
    assert code == 2 and "name each one as HOST=DIR" in err


def test_storm_already_running_is_reported_as_json(run_main: Runner, tmp_path: Path) -> None:
    """A NIC that keeps sending pause while the watcher runs: its storm_detected line first, exit 1 (findings).

    Guaranteed under load: the replay writer (a thread of this process standing for the NIC) can be descheduled for
    longer than the restoration time (100 ms) on a loaded machine; the files then show the pause stopped and the
    watcher rightly reports storm_restored, then storm_detected again when the writer catches up. So the test asserts
    what holds however loaded the machine is: the first line is this storm's storm_detected (origin, ``ts`` after the
    storm began), every line is about the same channel, detected and restored alternate, and every storm_restored
    comes while the writer's recorded writes had left the counters unchanged for at least half the restoration time
    (the rest of the quiet may be the watcher's own late reads): never while the counters kept moving. Unloaded it is
    exactly one line.
    """
    import time

    from fabricd_lab.stormgen import StormGen

    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0)])
    host.build()
    restoration_s = 0.1
    with StormGen(host, tick_s=0.005, record=True) as gen:
        gen.pause("eth0", direction="tx", duration_s=None)
        t0 = time.time()
        code, out, err = run_main(
            "watch",
            "--root",
            str(tmp_path),
            "--poll-ms",
            "20",
            "--detection-ms",
            "100",
            "--restoration-ms",
            str(restoration_s * 1000),
            "--duration",
            "3",
            "--output",
            "json",
        )
    assert code == 1, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events, err
    assert {(e["interface"], e["priority"], e["direction"], e["scope"]) for e in events} == {("eth0", 3, "tx", "nic")}
    kinds = [e["event"] for e in events]
    assert kinds == [("storm_detected", "storm_restored")[i % 2] for i in range(len(kinds))], kinds
    assert events[0]["ts"] >= t0 and events[0]["origin_kind"] == "stalled_receiver"
    # (time the counters were written up to, time the write was done) per write: between two writes the files show
    # the counters of the first, so they look paused-free from its ``at`` until the next write is done
    ticks = gen.ticks or []
    stalls = [(a, done) for (a, _), (_, done) in itertools.pairwise(ticks) if done - a >= restoration_s / 2]
    for ev in events[1::2]:  # its quiet ended at ``ts``: a stall began before and had not ended long before
        assert any(a <= ev["ts"] and done >= ev["ts"] - restoration_s for a, done in stalls), (ev, stalls)
