"""The exporter's HTTP server: ``/metrics`` (Prometheus text format, gzip when asked), TLS and basic auth from a
web config, loopback by default. Scrapes are serialised, because collectors keep state between scrapes (resets)."""

from __future__ import annotations

import gzip
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .webconfig import WebConfig

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_LISTEN = "127.0.0.1:9860"
_LANDING = (
    "<html><head><title>fabricd exporter</title></head><body><h1>fabricd exporter</h1>"
    '<p><a href="/metrics">Metrics</a></p></body></html>'
)


def parse_listen(value: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) -> (host, port). Raises ValueError with the expected form."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT such as 127.0.0.1:9860, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


class ExporterServer(ThreadingHTTPServer):
    """Serves ``render()`` output on /metrics. ``render`` is called under a lock, once per request."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], render: Callable[[], str], web: WebConfig | None = None) -> None:
        self.render = render
        self.web = web or WebConfig()
        self.scrape_lock = threading.Lock()
        super().__init__(address, _Handler)
        if self.web.tls is not None:
            self.socket = self.web.tls.wrap_socket(self.socket, server_side=True)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        scheme = "https" if self.web.tls is not None else "http"
        shown = f"[{host}]" if ":" in host else host
        return f"{scheme}://{shown}:{port}/metrics"


class _Handler(BaseHTTPRequestHandler):
    server: ExporterServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall on keep-alive

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        if not self.server.web.authorized(self.headers.get("Authorization")):
            self._send(401, b"Unauthorized\n", headers={"WWW-Authenticate": 'Basic realm="fabricd"'})
            return
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            with self.server.scrape_lock:
                text = self.server.render()
            body = text.encode()
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                self._send(200, gzip.compress(body, compresslevel=1), CONTENT_TYPE, {"Content-Encoding": "gzip"})
            else:
                self._send(200, body, CONTENT_TYPE)
        elif path == "/":
            self._send(200, _LANDING.encode(), "text/html; charset=utf-8")
        else:
            self._send(404, b"Not Found\n")

    def do_HEAD(self) -> None:
        self.do_GET()
