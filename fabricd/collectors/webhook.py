"""Webhook collector: delivery of the watchdog's notifications, per receiver (``fabricd serve --webhook``).

Families (built fresh on every scrape from the senders' counts):

- ``fabricd_webhook_notifications_{queued,sent,failed}_total{receiver}``: notifications accepted into the receiver's
  queue, delivered (2xx), and not delivered after their retries;
- ``fabricd_webhook_notifications_dropped_total{receiver,reason}``: dropped unsent, ``queue_full`` (the oldest, when
  the queue was full) or ``shutdown`` (still queued when the service stopped);
- ``fabricd_webhook_retries_total{receiver}``: posts tried again after a failure;
- ``fabricd_webhook_queue_length{receiver}`` / ``fabricd_webhook_queue_capacity{receiver}``: queued now, and the
  bound.

``receiver`` is the URL's ``scheme://host:port`` (never its path, query or user:password, which may hold a token),
numbered ``#1``, ``#2`` when several URLs share it (``fabricd.watchdog.webhook.receiver_names``).

This module does not import :mod:`fabricd.watchdog` (import-linter keeps L2 siblings independent): it reads any
object with the :class:`WebhookView` shape, which ``fabricd.watchdog.webhook.WebhookSink`` has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .core import MetricSpec, Scrape

SRC = "fabricd watchdog webhook senders (fabricd serve --webhook)"
DROP_REASONS = ("queue_full", "shutdown")

QUEUED = MetricSpec(
    "fabricd_webhook_notifications_queued_total",
    "counter",
    "Watchdog notifications handed to this webhook receiver's queue since the service started.",
    ("receiver",),
    SRC,
)
SENT = MetricSpec(
    "fabricd_webhook_notifications_sent_total",
    "counter",
    "Notifications the receiver accepted (a 2xx answer within the post's deadline).",
    ("receiver",),
    SRC,
)
FAILED = MetricSpec(
    "fabricd_webhook_notifications_failed_total",
    "counter",
    "Notifications not delivered after their retries: unreachable, past the post's deadline, a 3xx (redirects are "
    "not followed), a 4xx, or 429/5xx on every try. Each is also a WARNING log line.",
    ("receiver",),
    SRC,
)
DROPPED = MetricSpec(
    "fabricd_webhook_notifications_dropped_total",
    "counter",
    "Notifications dropped unsent: reason queue_full (the oldest, when the receiver's queue was full) or shutdown "
    "(still queued when the service stopped). Each is also a WARNING log line.",
    ("receiver", "reason"),
    SRC,
)
RETRIES = MetricSpec(
    "fabricd_webhook_retries_total",
    "counter",
    "Posts to this receiver tried again after a failure (exponential back-off with jitter).",
    ("receiver",),
    SRC,
)
QUEUE_LENGTH = MetricSpec(
    "fabricd_webhook_queue_length", "gauge", "Notifications waiting in this receiver's queue now.", ("receiver",), SRC
)
QUEUE_CAPACITY = MetricSpec(
    "fabricd_webhook_queue_capacity",
    "gauge",
    "The bound of this receiver's queue: past it, the oldest notification is dropped.",
    ("receiver",),
    SRC,
)

METRICS: tuple[MetricSpec, ...] = (QUEUED, SENT, FAILED, DROPPED, RETRIES, QUEUE_LENGTH, QUEUE_CAPACITY)


class WebhookView(Protocol):
    """What the collector reads from one receiver's sender."""

    @property
    def receiver(self) -> str: ...
    @property
    def queued(self) -> int: ...
    @property
    def sent(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def retried(self) -> int: ...
    @property
    def dropped(self) -> dict[str, int]: ...
    @property
    def queue_length(self) -> int: ...
    @property
    def capacity(self) -> int: ...


class WebhookCollector:
    """Exposes the webhook senders. Register it in the service's :class:`~fabricd.collectors.core.Registry`."""

    name = "webhook"
    metrics = METRICS

    def __init__(self, sinks: Sequence[WebhookView]) -> None:
        self.sinks = list(sinks)

    def collect(self, scrape: Scrape) -> None:
        for s in self.sinks:
            r = (s.receiver,)
            scrape.family(QUEUED).add(r, s.queued)
            scrape.family(SENT).add(r, s.sent)
            scrape.family(FAILED).add(r, s.failed)
            dropped = dict(s.dropped)
            for reason in DROP_REASONS:
                scrape.family(DROPPED).add((s.receiver, reason), dropped.get(reason, 0))
            scrape.family(RETRIES).add(r, s.retried)
            scrape.family(QUEUE_LENGTH).add(r, s.queue_length)
            scrape.family(QUEUE_CAPACITY).add(r, s.capacity)
