"""Watchdog events as Alertmanager webhook notifications, posted from a background thread.

The payload is Alertmanager's webhook format (version 4: ``status``, ``receiver``, ``groupLabels``,
``commonLabels``, ``commonAnnotations``, ``externalURL``, ``alerts[]`` with ``status``, ``labels``, ``annotations``,
``startsAt``, ``endsAt``, ``generatorURL``, ``fingerprint``), so any receiver written for Alertmanager takes
fabricd's sub-second storm events too. Alert names match the shipped rules: a watchdog storm is
``FabricPfcStormActive`` (firing on ``storm_detected``, resolved on ``storm_restored``), a drop
``FabricLosslessDrops``, a stuck switch watchdog ``FabricPfcWatchdogStuck``.

Posting never blocks detection: events are queued; a full queue drops the oldest notification (logged). A failed post
is retried with exponential back-off and jitter (tenacity), never back to back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import queue
import socket
import threading
import urllib.error
import urllib.request
from datetime import UTC, datetime
from typing import Any

import tenacity

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
        return (f"Drops on the lossless path at {port}",
                f"{ev.count} packets dropped ({ev.reason}) on priority {ev.priority}.")
    return (f"Switch PFC watchdog on {port} priority {ev.priority} detected a storm and never restored",
            f"detected {ev.detected}, restored {ev.restored}, outstanding for {ev.stuck_s} s.")


def alert_of(ev: Event, *, detected_ts: float | None = None) -> dict[str, Any]:
    """One Alertmanager alert object for an event. ``detected_ts`` is the storm's start for a restore."""
    name, severity = ALERT_NAMES[ev.event]
    labels = {"alertname": name, "severity": severity, "scope": ev.scope.value, "device": ev.device,
              "interface": ev.interface}
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


def _retryable(exc: BaseException) -> bool:
    """Worth another try: the receiver was unreachable or timed out, or answered 429 or 5xx (a 4xx will not
    change)."""
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 429 or exc.code >= 500
    return isinstance(exc, (urllib.error.URLError, OSError))


class WebhookSink:
    """Posts each event to ``url`` as an Alertmanager webhook notification. Call :meth:`close` to flush.

    A failed post is tried again ``retries`` times, after exponential back-off with jitter (``backoff_s``, doubling,
    up to ``backoff_max_s``; tenacity), never back to back; a 4xx answer is not retried. :meth:`close` ends the
    waiting: what is still failing then is counted as failed."""

    def __init__(self, url: str, *, timeout_s: float = 5.0, max_queue: int = 1000, retries: int = 3,
                 backoff_s: float = 1.0, backoff_max_s: float = 30.0) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.sent = 0
        self.failed = 0
        self.retried = 0
        self._closing = threading.Event()
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(maxsize=max_queue)
        self._detected: dict[tuple[str, str, str, int | None, str | None], float] = {}
        self._thread = threading.Thread(target=self._run, name="wd-webhook", daemon=True)
        self._thread.start()

    def __call__(self, ev: Event) -> None:
        key = (ev.scope.value, ev.device, ev.interface, ev.priority, ev.direction.value if ev.direction else None)
        detected_ts = None
        if ev.event is EventKind.STORM_DETECTED:
            self._detected[key] = ev.ts
        elif ev.event is EventKind.STORM_RESTORED:
            detected_ts = self._detected.pop(key, None)
        body = payload_of(alert_of(ev, detected_ts=detected_ts))
        try:
            self._queue.put_nowait(body)
        except queue.Full:
            with contextlib.suppress(queue.Empty):
                self._queue.get_nowait()
            self._queue.put_nowait(body)
            log.warning("webhook %s: queue full, dropped the oldest notification", self.url)

    def _send(self, data: bytes) -> None:
        req = urllib.request.Request(self.url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "fabricd"})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
            resp.read()

    def _sleep(self, seconds: float) -> None:
        self._closing.wait(seconds)  # close() cuts the wait short (and stop_when_event_set ends the retries)

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        self.retried += 1
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        log.info("webhook %s: post failed (attempt %d): %s; retrying in %.1f s", self.url, state.attempt_number,
                 exc, wait)

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
        except (urllib.error.URLError, OSError) as exc:
            log.warning("webhook %s: notification not delivered: %s", self.url, exc)
            return False
        return True

    def _run(self) -> None:
        while True:
            body = self._queue.get()
            if body is None:
                return
            if self._post(body):
                self.sent += 1
            else:
                self.failed += 1

    def close(self, timeout_s: float = 10.0) -> None:
        """Send what is queued (up to ``timeout_s``; no more waiting between retries) and stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout_s / 2)
        self._closing.set()
        self._thread.join(timeout_s / 2)
