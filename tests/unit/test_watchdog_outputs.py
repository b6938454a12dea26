"""What the watchdog puts out: the Prometheus families (checked by Debian's promtool), Alertmanager webhook
notifications (posted to a real local HTTP receiver) and the CLI's event lines."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fabricd.cli.watch import format_event
from fabricd.collectors.core import Registry
from fabricd.collectors.watchdog import WatchdogCollector
from fabricd.inventory import load_inventory
from fabricd.watchdog.params import WatchdogParams
from fabricd.watchdog.rootcause import Topology
from fabricd.watchdog.runner import Watchdog
from fabricd.watchdog.sources import Batch
from fabricd.watchdog.types import ChannelKey, Direction, Event, EventKind, PauseSample, Scope
from fabricd.watchdog.webhook import WebhookSink, alert_of, payload_of

PARAMS = WatchdogParams(0.2, 0.2, 0.05)
GPU1_TX = ChannelKey(Scope.NIC, "gpu1", "ens1f0np0", 3, Direction.TX)
LEAF_RX = ChannelKey(Scope.SWITCH, "leaf1-sonic", "Ethernet0", 3, Direction.RX)


def storm_watchdog(lab_inventory: Path, sinks: list[Any] | None = None) -> tuple[Watchdog, list[Event]]:
    """A watchdog fed by hand: gpu1 sends pause and leaf1 Ethernet0 is paused, for 300 ms, polled every 50 ms."""
    fabric = load_inventory(lab_inventory).fabric
    wd = Watchdog(
        PARAMS,
        [],
        topology=Topology.from_fabric(fabric),
        sinks=sinks or [],
        policy_priorities=[(3, "lossless"), (3, "roce"), (6, "cnp")],
    )
    events: list[Event] = []
    for i in range(8):
        t = i * 0.05
        paused = max(0.0, t - 0.05)
        batch = Batch(
            pause=[
                PauseSample(GPU1_TX, t, pause_s=paused, progress=0),
                PauseSample(LEAF_RX, t, pause_s=paused, progress=0),
            ]
        )
        events += wd.feed(batch, wall_offset=1_700_000_000.0)
    return wd, events


def test_events_carry_the_origin(lab_inventory: Path) -> None:
    _, events = storm_watchdog(lab_inventory)
    assert [(e.event, e.device) for e in events] == [
        (EventKind.STORM_DETECTED, "gpu1"),
        (EventKind.STORM_DETECTED, "leaf1-sonic"),
    ]
    assert all(e.origin == "gpu1:ens1f0np0" for e in events)
    assert events[1].origin_path == ["leaf1-sonic:Ethernet0", "gpu1:ens1f0np0"]
    assert events[1].origin_kind == "stalled_receiver"


@pytest.mark.integration  # runs promtool check metrics
def test_collector_families(lab_inventory: Path) -> None:
    wd, _ = storm_watchdog(lab_inventory)
    text = Registry([WatchdogCollector(wd)]).exposition()
    assert (
        'fabricd_pfc_storm_active{scope="nic",device="gpu1",interface="ens1f0np0",priority="3",direction="tx"} 1'
    ) in text
    assert (
        'fabricd_pfc_storms_detected_total{scope="switch",device="leaf1-sonic",interface="Ethernet0",'
        'priority="3",direction="rx"} 1'
    ) in text
    assert (
        'fabricd_pfc_storm_origin_info{scope="nic",device="gpu1",interface="ens1f0np0",priority="3",'
        'kind="stalled_receiver"} 1'
    ) in text
    assert 'fabricd_pfc_storm_origin_affected_ports{device="gpu1",interface="ens1f0np0",priority="3"} 2' in text
    assert "fabricd_watchdog_poll_overruns_total 0" in text
    assert "fabricd_watchdog_detection_seconds 0.2" in text
    assert 'fabricd_policy_priority{priority="6",role="cnp"} 1' in text
    assert 'fabricd_scrape_collector_success{collector="watchdog"} 1' in text
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    out = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_alertmanager_payload_shape(lab_inventory: Path) -> None:
    _, events = storm_watchdog(lab_inventory)
    alert = alert_of(events[0])
    assert alert["status"] == "firing" and alert["endsAt"] == "0001-01-01T00:00:00Z"
    assert alert["labels"] == {
        "alertname": "FabricPfcStormActive",
        "severity": "critical",
        "scope": "nic",
        "device": "gpu1",
        "interface": "ens1f0np0",
        "priority": "3",
        "direction": "tx",
    }
    assert alert["startsAt"].startswith("2023-11-14T22:13:20.") and alert["startsAt"].endswith("Z")
    assert json.loads(alert["annotations"]["event"])["origin"] == "gpu1:ens1f0np0"
    body = payload_of(alert, receiver="r")
    assert set(body) == {
        "version",
        "groupKey",
        "truncatedAlerts",
        "status",
        "receiver",
        "groupLabels",
        "commonLabels",
        "commonAnnotations",
        "externalURL",
        "alerts",
    }
    assert (
        body["version"] == "4"
        and body["alerts"] == [alert]
        and body["groupLabels"] == {"alertname": "FabricPfcStormActive"}
    )
    restored = Event(
        ts=1_700_000_010.0,
        event=EventKind.STORM_RESTORED,
        scope=Scope.NIC,
        device="gpu1",
        interface="ens1f0np0",
        priority=3,
        direction=Direction.TX,
        storm_duration_s=9.7,
    )
    ended = alert_of(restored, detected_ts=events[0].ts)
    assert ended["status"] == "resolved" and ended["startsAt"] == alert["startsAt"]
    assert ended["endsAt"] == "2023-11-14T22:13:30.000Z" and ended["fingerprint"] == alert["fingerprint"]


@pytest.mark.integration  # a loopback HTTP receiver
def test_webhook_sink_posts_to_a_receiver(lab_inventory: Path) -> None:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            n = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(n)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sink = WebhookSink(f"http://127.0.0.1:{server.server_address[1]}/hook")
        storm_watchdog(lab_inventory, sinks=[sink])
        sink.close()
        assert sink.sent == 2 and sink.failed == 0
        assert [b["alerts"][0]["labels"]["device"] for b in received] == ["gpu1", "leaf1-sonic"]
        # a receiver that is down: the sink gives up after its retries and counts the failure
        dead = WebhookSink("http://127.0.0.1:9/hook", timeout_s=0.5, retries=0)
        dead(
            Event(
                ts=1.0,
                event=EventKind.LOSSLESS_DROP,
                scope=Scope.SWITCH,
                device="s",
                interface="p",
                priority=3,
                reason="queue_drop",
                count=5,
            )
        )
        dead.close()
        assert dead.failed == 1
    finally:
        server.shutdown()
        server.server_close()


def test_text_lines(lab_inventory: Path) -> None:
    _, events = storm_watchdog(lab_inventory)
    line = format_event(events[1])
    assert "storm_detected" in line and "switch leaf1-sonic Ethernet0 prio 3 rx" in line
    assert "origin gpu1:ens1f0np0 (stalled_receiver)" in line


@pytest.mark.integration  # starts a process or opens a socket: not in the unit tier
def test_webhook_retries_with_growing_delays_and_not_on_4xx() -> None:
    """A receiver that answers 503 twice, then 200: delivered on the third try, with a real, growing wait between
    tries (back-off 0.1 s doubling, plus jitter); a 400 is given up at once."""
    codes = {"/flaky": [503, 503, 200], "/bad": [400, 400, 400]}
    seen: dict[str, list[float]] = {"/flaky": [], "/bad": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen[self.path].append(time.monotonic())
            self.send_response(codes[self.path][len(seen[self.path]) - 1])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ev = Event(
        ts=1.0,
        event=EventKind.LOSSLESS_DROP,
        scope=Scope.SWITCH,
        device="s",
        interface="p",
        priority=3,
        reason="queue_drop",
        count=5,
    )
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        flaky = WebhookSink(base + "/flaky", timeout_s=2.0, retries=3, backoff_s=0.1, backoff_max_s=1.0)
        bad = WebhookSink(base + "/bad", timeout_s=2.0, retries=3, backoff_s=0.1)
        flaky(ev)
        bad(ev)
        flaky.close(10.0)
        bad.close(10.0)
    finally:
        server.shutdown()
        server.server_close()
    assert (flaky.sent, flaky.failed, flaky.retried) == (1, 0, 2)
    t = seen["/flaky"]
    assert len(t) == 3 and t[1] - t[0] >= 0.1 and t[2] - t[1] >= 0.2  # waited, and longer the second time
    assert (bad.sent, bad.failed, bad.retried) == (0, 1, 0) and len(seen["/bad"]) == 1
