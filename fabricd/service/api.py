"""The service's HTTP endpoint: ``/metrics`` (Prometheus text) and a small JSON status API.

- ``GET /metrics``: every collector of the service (host, switches, watchdog, drift);
- ``GET /healthz``: ``200 ok`` while every watchdog source polled successfully within the last 10 polls (or
  switch poll periods), ``503`` with the reasons otherwise;
- ``GET /status``: JSON: version, uptime, watchdog timers, per-source health, active storms, storm origins, drift;
- ``GET /events[?since=EPOCH]``: JSON list of the watchdog's recent events (newest last, up to 1000).

Binds 127.0.0.1 by default; TLS and basic auth come from an exporter-toolkit web config (``--web-config``).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Callable
from typing import Any

from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.server import WebHandler, WebServer
from fabricd.collectors.webconfig import WebConfig

log = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:9862"


class ServiceHandlers:
    """What the endpoints return; the service provides them."""

    def __init__(
        self,
        metrics: Callable[[], str],
        health: Callable[[], tuple[bool, list[str]]],
        status: Callable[[], dict[str, Any]],
        events: Callable[[float], list[dict[str, Any]]],
    ) -> None:
        self.metrics = metrics
        self.health = health
        self.status = status
        self.events = events


class ApiServer(WebServer):
    def __init__(
        self,
        address: tuple[str, int],
        handlers: ServiceHandlers,
        web: WebConfig | None = None,
        limits: ConnLimits | None = None,
    ) -> None:
        self.handlers = handlers
        super().__init__(address, _Handler, web, limits)

    @property
    def base_url(self) -> str:
        return self.origin


class _Handler(WebHandler):
    server: ApiServer

    def _json(self, code: int, data: Any) -> None:
        self.send_body(code, (json.dumps(data, indent=1, default=str) + "\n").encode(), "application/json")

    def do_GET(self) -> None:  # noqa: N802 (http.server names the method)
        if not self.authorized():
            return
        url = urllib.parse.urlsplit(self.path)
        h = self.server.handlers
        try:
            if url.path == "/metrics":
                self.send_metrics(h.metrics())
            elif url.path == "/healthz":
                ok, reasons = h.health()
                text = "ok\n" if ok else "unhealthy: " + "; ".join(reasons) + "\n"
                self.send_body(200 if ok else 503, text.encode())
            elif url.path == "/status":
                self._json(200, h.status())
            elif url.path == "/events":
                query = urllib.parse.parse_qs(url.query)
                try:
                    since = float(query.get("since", ["0"])[0])
                except ValueError:
                    self._json(400, {"error": "since must be epoch seconds, e.g. /events?since=1700000000.5"})
                    return
                self._json(200, h.events(since))
            elif url.path == "/":
                self.send_body(200, _LANDING.encode(), "text/html; charset=utf-8")
            else:
                self.send_body(404, b"Not Found\n")
        except Exception:  # never let one request kill the server thread; the log has the details
            log.exception("request %s failed", url.path)
            self.send_body(500, b"internal error (see the service log)\n")


_LANDING = (
    "<html><head><title>fabricd serve</title></head><body><h1>fabricd serve</h1><ul>"
    '<li><a href="/metrics">/metrics</a></li><li><a href="/healthz">/healthz</a></li>'
    '<li><a href="/status">/status</a></li><li><a href="/events">/events</a></li></ul></body></html>'
)
