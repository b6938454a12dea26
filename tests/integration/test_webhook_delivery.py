"""Webhook delivery against receivers that misbehave (issue 23, part 4): real HTTP servers on 127.0.0.1 that
never answer, trickle their answer a byte at a time, or redirect. Each post has an overall deadline, a redirect is
not followed, one bad receiver never delays another, every dropped alert is counted and logged, and the counts are
exported per receiver."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest
from rawhttp import Piece, RawServer, Request, response, trickle
from wdhelpers import Receiver

from fabricd.collectors.core import Registry
from fabricd.watchdog.types import Event, EventKind, Scope
from fabricd.watchdog.webhook import WebhookSink

pytestmark = pytest.mark.integration


def _event(i: int) -> Event:
    return Event(
        ts=1_700_000_000.0 + i,
        event=EventKind.LOSSLESS_DROP,
        scope=Scope.SWITCH,
        device="leaf1",
        interface=f"Ethernet{i}",
        priority=3,
        reason="queue_drop",
        count=i + 1,
    )


def _hang(req: Request) -> Iterator[Piece]:
    yield 3600.0  # reads the request, never answers


def _trickle(req: Request) -> Iterator[Piece]:
    yield from trickle(response("200 OK", {}, b"ok" * 100), 0.3)


@pytest.fixture()
def servers() -> Iterator[list[RawServer]]:
    made: list[RawServer] = []
    yield made
    for s in made:
        s.close()


def _serve(made: list[RawServer], script: object, **kw: object) -> RawServer:
    s = RawServer(script, **kw)  # type: ignore[arg-type]
    made.append(s)
    return s


@pytest.mark.parametrize("script", [_hang, _trickle], ids=["hang", "trickle"])
def test_a_slow_receiver_is_cut_at_the_deadline_and_delays_no_other(servers: list[RawServer], script: object) -> None:
    """Ten alerts to a receiver that hangs (or trickles its answer) and to a good one: the good one has them all at
    once; each post to the slow one ends at its 1 s deadline (the trickle would otherwise hold it for minutes)."""
    slow = _serve(servers, script, hold=True)
    good = Receiver()
    slow_sink = WebhookSink(slow.url + "/hook", timeout_s=1.0, retries=0)
    good_sink = WebhookSink(good.url + "/hook", timeout_s=1.0, retries=0)
    try:
        t0 = time.monotonic()
        for i in range(10):
            slow_sink(_event(i))
            good_sink(_event(i))
        deadline = time.monotonic() + 5
        while len(good.bodies) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(good.bodies) == 10, "the good receiver waited for the slow one"
        assert time.monotonic() - t0 < 3.0
        while slow_sink.failed < 3 and time.monotonic() - t0 < 8.0:
            time.sleep(0.05)
        # three posts of at most 1 s each (the trickle alone would hold one post for 3 minutes)
        assert slow_sink.failed >= 3, f"{slow_sink.failed} posts ended in 8 s with a 1 s deadline"
        assert slow_sink.sent == 0
    finally:
        good_sink.close(2.0)
        slow_sink.close(2.0)
        good.close()


def test_a_redirect_is_not_followed(servers: list[RawServer], caplog: pytest.LogCaptureFixture) -> None:
    """A 302 would turn the POST into a body-less GET to wherever it points, counted as delivered: it is a failed
    notification instead, with a log line, and the place it points to hears nothing."""
    target = _serve(servers, lambda req: [response("200 OK", {}, b"ok")])
    redirector = _serve(servers, lambda req: [response("302 Found", {"Location": target.url + "/elsewhere"})])
    sink = WebhookSink(redirector.url + "/hook", timeout_s=2.0, retries=2, backoff_s=0.05)
    with caplog.at_level(logging.WARNING, logger="fabricd.watchdog.webhook"):
        sink(_event(1))
        sink.close(5.0)
    assert target.requests == []
    assert len(redirector.requests) == 1  # not retried: a redirect will not change
    assert (sink.sent, sink.failed) == (0, 1)
    assert any("redirect" in r.getMessage() and target.url in r.getMessage() for r in caplog.records)


def test_a_full_queue_drops_with_a_count_a_log_line_each_and_metrics(
    servers: list[RawServer], caplog: pytest.LogCaptureFixture
) -> None:
    slow = _serve(servers, _hang, hold=True)
    sink = WebhookSink(slow.url + "/hook", timeout_s=0.5, retries=0, max_queue=4)
    with caplog.at_level(logging.WARNING, logger="fabricd.watchdog.webhook"):
        for i in range(20):
            sink(_event(i))
        t0 = time.monotonic()
        sink.close(2.0)
        took = time.monotonic() - t0
    assert took < 3.5, f"close() took {took:.1f} s with a hanging receiver and a full queue"
    # every alert is accounted for: sent, failed (not delivered) or dropped (queue full or shut down)
    assert sink.queued == 20
    assert sink.sent + sink.failed + sum(sink.dropped.values()) == 20
    assert sink.dropped.get("queue_full", 0) >= 12
    dropped_lines = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped_lines) == sum(sink.dropped.values())
    failed_lines = [r for r in caplog.records if "not delivered" in r.getMessage()]
    assert len(failed_lines) == sink.failed

    from fabricd.collectors.webhook import WebhookCollector  # here, so that the other tests run on older code

    text = Registry([WebhookCollector([sink])]).exposition()
    receiver = f"http://127.0.0.1:{slow.port}"
    assert f'fabricd_webhook_notifications_queued_total{{receiver="{receiver}"}} 20' in text
    assert (
        f'fabricd_webhook_notifications_dropped_total{{receiver="{receiver}",reason="queue_full"}} '
        f"{sink.dropped['queue_full']}" in text
    )
    assert f'fabricd_webhook_notifications_failed_total{{receiver="{receiver}"}} {sink.failed}' in text
    assert f'fabricd_webhook_notifications_sent_total{{receiver="{receiver}"}} 0' in text
    assert "# HELP fabricd_webhook_notifications_dropped_total " in text


def test_close_flushes_a_good_receiver_and_stops_at_once_on_a_dead_one(servers: list[RawServer]) -> None:
    good = Receiver()
    slow = _serve(servers, _hang, hold=True)
    good_sink = WebhookSink(good.url + "/hook", timeout_s=1.0)
    slow_sink = WebhookSink(slow.url + "/hook", timeout_s=30.0, retries=3)
    for i in range(5):
        good_sink(_event(i))
        slow_sink(_event(i))
    good_sink.close(5.0)
    t0 = time.monotonic()
    slow_sink.close(1.0)  # the post in flight has a 30 s deadline: close cuts it
    assert time.monotonic() - t0 < 2.0
    good.close()
    assert good_sink.sent == 5 and len(good.bodies) == 5
    assert slow_sink.sent == 0 and slow_sink.failed + sum(slow_sink.dropped.values()) == 5


def test_receiver_labels_keep_secrets_out() -> None:
    """The receiver label is the URL's scheme, host and port: a path or query may hold a token (Slack's hook URLs do),
    and user:password must never reach a metric. Two receivers on one host:port are numbered."""
    from fabricd.watchdog.webhook import receiver_names

    names = receiver_names(
        [
            "https://user:secret@hooks.example:8443/services/T0/B0/XYZ?token=abc",
            "http://127.0.0.1:5001/a",
            "http://127.0.0.1:5001/b",
            "http://[::1]/x",
        ]
    )
    assert names == [
        "https://hooks.example:8443",
        "http://127.0.0.1:5001#1",
        "http://127.0.0.1:5001#2",
        "http://[::1]:80",
    ]


def test_serve_exports_the_webhook_counts_and_hides_credentials() -> None:
    """`fabricd serve`'s registry has the webhook family for each --webhook, and /status shows no password."""
    from fabricd.service.serve import ServeOptions, Service

    svc = Service(
        None,
        ServeOptions(
            webhooks=["http://u:pw@127.0.0.1:9/a?t=1", "http://127.0.0.1:9/b"],
            switches=False,
            drift=False,
            export_host=False,
        ),
    )
    try:
        text = svc.metrics()
        for receiver in ("http://127.0.0.1:9#1", "http://127.0.0.1:9#2"):
            assert f'fabricd_webhook_queue_capacity{{receiver="{receiver}"}} 1000' in text
        assert "pw" not in text and "t=1" not in text
        status = svc.status()["webhooks"]
        assert [w["url"] for w in status] == ["http://***@127.0.0.1:9/a?t=1", "http://127.0.0.1:9/b"]
    finally:
        for w in svc.webhooks:
            w.close(1.0)
