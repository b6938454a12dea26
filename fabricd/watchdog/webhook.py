"""Watchdog events as Alertmanager webhook notifications, posted from a background thread.

The payload is Alertmanager's webhook format (version 4: ``status``, ``receiver``, ``groupLabels``,
``commonLabels``, ``commonAnnotations``, ``externalURL``, ``alerts[]`` with ``status``, ``labels``, ``annotations``,
``startsAt``, ``endsAt``, ``generatorURL``, ``fingerprint``), so any receiver written for Alertmanager takes
fabricd's sub-second storm events too. Alert names match the shipped rules: a watchdog storm is
``FabricPfcStormActive`` (firing on ``storm_detected``, resolved on ``storm_restored``), a drop
``FabricLosslessDrops``, a stuck switch watchdog ``FabricPfcWatchdogStuck``.

Posting never blocks detection, and one receiver never delays another: each receiver (:class:`WebhookSink`) has its
own bounded queue and its own sender thread. A full queue drops the oldest notification. Each post has an overall
deadline (connect to answer, :func:`fabricd.httpclient.request`: a receiver that never answers, or trickles its
answer a byte at a time, holds its sender that long and no longer). A redirect is not followed: urllib would turn the
POST into a body-less GET to wherever it points and count that as delivered; a 3xx is a failed notification, not
retried. A failed post (unreachable, deadline, 429 or 5xx) is retried with exponential back-off and jitter
(tenacity), never back to back. Every notification that is not delivered (dropped from a full queue, still queued at
shutdown, or failed after its retries) is one WARNING line naming the alert, and counted per receiver
(:class:`fabricd.collectors.webhook.WebhookCollector` exports the counts).
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import socket
import threading
import urllib.parse
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import tenacity

from fabricd.httpclient import HttpError, Reading, request

from .types import Event, EventKind

log = logging.getLogger(__name__)

ALERT_NAMES: dict[EventKind, tuple[str, str]] = {
    EventKind.STORM_DETECTED: ("FabricPfcStormActive", "critical"),
    EventKind.STORM_RESTORED: ("FabricPfcStormActive", "critical"),
    EventKind.LOSSLESS_DROP: ("FabricLosslessDrops", "warning"),
    EventKind.WATCHDOG_STUCK: ("FabricPfcWatchdogStuck", "critical"),
}
ZERO_TIME = "0001-01-01T00:00:00Z"
"""Alertmanager's "no end time" for a firing alert."""


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _describe(ev: Event) -> tuple[str, str]:
    port = f"{ev.device} {ev.interface}"
    if ev.event in (EventKind.STORM_DETECTED, EventKind.STORM_RESTORED):
        side = "is being paused" if ev.direction == "rx" else "sends pause (its receiver does not drain)"
        if ev.event is EventKind.STORM_DETECTED:
            summary = f"PFC storm on {port} priority {ev.priority} ({ev.direction})"
            desc = f"The fabricd watchdog saw {port} priority {ev.priority} {side} for {ev.paused_ms} ms continuously."
            if ev.origin:
                desc += f" Most likely origin: {ev.origin} ({ev.origin_kind})."
        else:
            summary = f"PFC storm over on {port} priority {ev.priority} ({ev.direction})"
            desc = f"No pause for the restoration time; the storm lasted {ev.storm_duration_s} s."
        return summary, desc
    if ev.event is EventKind.LOSSLESS_DROP:
        return (
            f"Drops on the lossless path at {port}",
            f"{ev.count} packets dropped ({ev.reason}) on priority {ev.priority}.",
        )
    return (
        f"Switch PFC watchdog on {port} priority {ev.priority} detected a storm and never restored",
        f"detected {ev.detected}, restored {ev.restored}, outstanding for {ev.stuck_s} s.",
    )


def alert_of(ev: Event, *, detected_ts: float | None = None) -> dict[str, Any]:
    """One Alertmanager alert object for an event. ``detected_ts`` is the storm's start for a restore."""
    name, severity = ALERT_NAMES[ev.event]
    labels = {
        "alertname": name,
        "severity": severity,
        "scope": ev.scope.value,
        "device": ev.device,
        "interface": ev.interface,
    }
    if ev.priority is not None:
        labels["priority"] = str(ev.priority)
    if ev.direction is not None:
        labels["direction"] = ev.direction.value
    if ev.reason is not None:
        labels["reason"] = ev.reason
    summary, description = _describe(ev)
    annotations = {"summary": summary, "description": description, "event": json.dumps(ev.as_dict())}
    if ev.origin:
        annotations["origin"] = ev.origin
    resolved = ev.event is EventKind.STORM_RESTORED
    starts = detected_ts if (resolved and detected_ts is not None) else ev.ts
    fingerprint = hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "status": "resolved" if resolved else "firing",
        "labels": labels,
        "annotations": annotations,
        "startsAt": _rfc3339(starts),
        "endsAt": _rfc3339(ev.ts) if resolved else ZERO_TIME,
        "generatorURL": "",
        "fingerprint": fingerprint,
    }


def payload_of(alert: dict[str, Any], *, receiver: str = "fabricd", external_url: str | None = None) -> dict[str, Any]:
    """Wrap one alert in Alertmanager's webhook envelope (one alert per notification: events are sub-second)."""
    labels = alert["labels"]
    return {
        "version": "4",
        "groupKey": "{}:{alertname=%s}" % json.dumps(labels["alertname"]),  # noqa: UP031
        "truncatedAlerts": 0,
        "status": alert["status"],
        "receiver": receiver,
        "groupLabels": {"alertname": labels["alertname"]},
        "commonLabels": labels,
        "commonAnnotations": alert["annotations"],
        "externalURL": external_url or f"fabricd://{socket.gethostname()}",
        "alerts": [alert],
    }


class PostError(Exception):
    """One post that did not deliver: ``retryable`` when another try may succeed (unreachable, deadline, 429,
    5xx), not for a 3xx (never followed) or another 4xx."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, PostError) and exc.retryable


def receiver_names(urls: Sequence[str]) -> list[str]:
    """The ``receiver`` label of each webhook URL: ``scheme://host:port`` only (a path or query may hold a token,
    as Slack's hook URLs do, and ``user:password@`` must never reach a metric), numbered ``#1``, ``#2`` ... when
    several URLs share one."""
    origins = []
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            port = 0
        origins.append(f"{parts.scheme}://{host}:{port}")
    out = []
    for i, origin in enumerate(origins):
        if origins.count(origin) > 1:
            out.append(f"{origin}#{origins[:i].count(origin) + 1}")
        else:
            out.append(origin)
    return out


def redacted_url(url: str) -> str:
    """``url`` without ``user:password@`` (for ``/status``; the query is kept, the password never)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]))


def _what(body: dict[str, Any]) -> str:
    """An alert in a log line: name, status and where (the labels that say which port)."""
    alert = body["alerts"][0]
    labels = alert["labels"]
    where = " ".join(str(labels[k]) for k in ("device", "interface", "priority", "direction") if k in labels)
    return f"{labels['alertname']} ({alert['status']}) {where}"


class WebhookSink:
    """Posts each event to ``url`` as an Alertmanager webhook notification, from its own thread and bounded queue
    (``max_queue`` notifications; when full, the oldest is dropped). Call :meth:`close` to flush.

    Each post has an overall deadline of ``timeout_s`` seconds, whatever the receiver does. A failed post is tried
    again ``retries`` times, after exponential back-off with jitter (``backoff_s``, doubling, up to
    ``backoff_max_s``; tenacity), never back to back; a 3xx or another 4xx answer is not retried. :meth:`close`
    ends the waiting: what is still failing then is counted as failed, what is still queued as dropped.

    Counts (read by the webhook collector and ``/status``): ``queued`` (accepted), ``sent``, ``failed`` (not
    delivered after its tries), ``dropped`` by reason (``queue_full``, ``shutdown``), ``retried``."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 5.0,
        max_queue: int = 1000,
        retries: int = 3,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        receiver: str | None = None,
    ) -> None:
        self.url = url
        self.receiver = receiver or receiver_names([url])[0]
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.capacity = max_queue
        self.queued = 0
        self.sent = 0
        self.failed = 0
        self.retried = 0
        self.dropped: dict[str, int] = {}
        self._count_lock = threading.Lock()
        self._closed = False
        self._draining = threading.Event()
        """Set by close(): the thread ends once the queue is empty."""
        self._closing = threading.Event()
        """Set by close() when its time is up: no more waiting, the post in flight is cut."""
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=max_queue)
        self._detected: dict[tuple[str, str, str, int | None, str | None], float] = {}
        self._thread = threading.Thread(target=self._run, name=f"wd-webhook {self.receiver}", daemon=True)
        self._thread.start()

    @property
    def queue_length(self) -> int:
        return self._queue.qsize()

    def _drop(self, body: dict[str, Any], reason: str) -> None:
        with self._count_lock:
            self.dropped[reason] = self.dropped.get(reason, 0) + 1
        why = {
            "queue_full": "the queue is full (the receiver is slower than the alerts)",
            "shutdown": "still queued at shutdown",
        }.get(reason, reason)
        log.warning("webhook %s: dropped %s: %s", self.receiver, _what(body), why)

    def __call__(self, ev: Event) -> None:
        key = (ev.scope.value, ev.device, ev.interface, ev.priority, ev.direction.value if ev.direction else None)
        detected_ts = None
        if ev.event is EventKind.STORM_DETECTED:
            self._detected[key] = ev.ts
        elif ev.event is EventKind.STORM_RESTORED:
            detected_ts = self._detected.pop(key, None)
        body = payload_of(alert_of(ev, detected_ts=detected_ts))
        with self._count_lock:
            self.queued += 1
        if self._closed:
            self._drop(body, "shutdown")
            return
        while True:
            try:
                self._queue.put_nowait(body)
                return
            except queue.Full:
                try:
                    oldest = self._queue.get_nowait()
                except queue.Empty:
                    continue
                self._drop(oldest, "queue_full")

    def _send(self, data: bytes) -> None:
        try:
            resp = request(
                self.url,
                method="POST",
                body=data,
                deadline_s=self.timeout_s,
                read=Reading(body=False),
                headers={"Content-Type": "application/json", "User-Agent": "fabricd"},
                abort=self._closing,
            )
        except HttpError as exc:
            raise PostError(exc.message, retryable=exc.kind != "url") from None
        if 200 <= resp.status < 300:
            return
        if 300 <= resp.status < 400:
            raise PostError(
                f"HTTP {resp.status} {resp.reason}: redirect to {resp.location or '(no Location)'} "
                "not followed (give the receiver's final URL)",
                retryable=False,
            )
        raise PostError(f"HTTP {resp.status} {resp.reason}", retryable=resp.status == 429 or resp.status >= 500)

    def _sleep(self, seconds: float) -> None:
        self._closing.wait(seconds)  # close() cuts the wait short (and stop_when_event_set ends the retries)

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        with self._count_lock:
            self.retried += 1
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        log.info(
            "webhook %s: post failed (attempt %d): %s; retrying in %.1f s",
            self.receiver,
            state.attempt_number,
            exc,
            wait,
        )

    def _post(self, body: dict[str, Any]) -> bool:
        data = json.dumps(body).encode()
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retries + 1) | tenacity.stop_when_event_set(self._closing),
            wait=tenacity.wait_exponential(multiplier=self.backoff_s, max=self.backoff_max_s)
            + tenacity.wait_random(0, self.backoff_s),
            retry=tenacity.retry_if_exception(_retryable),
            sleep=self._sleep,
            before_sleep=self._before_sleep,
            reraise=True,
        )
        try:
            retrying(self._send, data)
        except PostError as exc:
            log.warning("webhook %s: %s not delivered: %s", self.receiver, _what(body), exc)
            return False
        return True

    def _run(self) -> None:
        while not self._closing.is_set():
            try:
                body = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self._draining.is_set():
                    return
                continue
            ok = self._post(body)
            with self._count_lock:
                if ok:
                    self.sent += 1
                else:
                    self.failed += 1

    def close(self, timeout_s: float = 10.0) -> None:
        """Send what is queued (up to ``timeout_s / 2``), then stop waiting, cut the post in flight, and drop (with a
        log line each) what is still queued. Returns within about ``timeout_s``. Idempotent."""
        self._closed = True
        self._draining.set()
        self._thread.join(timeout_s / 2)
        self._closing.set()
        self._thread.join(timeout_s / 2)
        while True:
            try:
                body = self._queue.get_nowait()
            except queue.Empty:
                break
            self._drop(body, "shutdown")
