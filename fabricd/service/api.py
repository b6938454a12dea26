"""The service's HTTP endpoint: ``/metrics`` (Prometheus text) and a small JSON status API.

- ``GET /metrics``: every collector of the service (host, switches, watchdog, drift);
- ``GET /healthz``: ``200 ok`` while every watchdog source polled successfully within the last 10 polls (or
  switch poll periods), ``503`` with the reasons otherwise;
- ``GET /status``: JSON: version, uptime, watchdog timers, per-source health, active storms, storm origins, drift;
- ``GET /events[?since=EPOCH]``: JSON list of the watchdog's recent events (newest last, up to 1000).

Binds 127.0.0.1 by default; TLS and basic auth come from an exporter-toolkit web config (``--web-config``).
"""

from __future__ import annotations

import gzip
import json
import logging
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fabricd.collectors.server import CONTENT_TYPE
from fabricd.collectors.webconfig import WebConfig

log = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:9862"


class ServiceHandlers:
    """What the endpoints return; the service provides them."""

    def __init__(self, metrics: Callable[[], str], health: Callable[[], tuple[bool, list[str]]],
                 status: Callable[[], dict[str, Any]], events: Callable[[float], list[dict[str, Any]]]) -> None:
        self.metrics = metrics
        self.health = health
        self.status = status
        self.events = events


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handlers: ServiceHandlers, web: WebConfig | None = None) -> None:
        self.handlers = handlers
        self.web = web or WebConfig()
        super().__init__(address, _Handler)
        if self.web.tls is not None:
            self.socket = self.web.tls.wrap_socket(self.socket, server_side=True)

    @property
    def base_url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        scheme = "https" if self.web.tls is not None else "http"
        shown = f"[{host}]" if ":" in host else host
        return f"{scheme}://{shown}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: ApiServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, data: Any) -> None:
        self._send(code, (json.dumps(data, indent=1, default=str) + "\n").encode(), "application/json")

    def do_GET(self) -> None:
        if not self.server.web.authorized(self.headers.get("Authorization")):
            self._send(401, b"Unauthorized\n", "text/plain; charset=utf-8",
                       {"WWW-Authenticate": 'Basic realm="fabricd"'})
            return
        url = urllib.parse.urlsplit(self.path)
        h = self.server.handlers
        try:
            if url.path == "/metrics":
                body = h.metrics().encode()
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    self._send(200, gzip.compress(body, compresslevel=1), CONTENT_TYPE, {"Content-Encoding": "gzip"})
                else:
                    self._send(200, body, CONTENT_TYPE)
            elif url.path == "/healthz":
                ok, reasons = h.health()
                text = "ok\n" if ok else "unhealthy: " + "; ".join(reasons) + "\n"
                self._send(200 if ok else 503, text.encode(), "text/plain; charset=utf-8")
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
                self._send(200, _LANDING.encode(), "text/html; charset=utf-8")
            else:
                self._send(404, b"Not Found\n", "text/plain; charset=utf-8")
        except Exception:  # never let one request kill the server thread; the log has the details
            log.exception("request %s failed", url.path)
            self._send(500, b"internal error (see the service log)\n", "text/plain; charset=utf-8")

    def do_HEAD(self) -> None:
        self.do_GET()


_LANDING = (
    "<html><head><title>fabricd serve</title></head><body><h1>fabricd serve</h1><ul>"
    '<li><a href="/metrics">/metrics</a></li><li><a href="/healthz">/healthz</a></li>'
    '<li><a href="/status">/status</a></li><li><a href="/events">/events</a></li></ul></body></html>'
)
