"""The exporter's HTTP server: ``/metrics`` (Prometheus text format, gzip when asked), TLS and basic auth from a
web config, loopback by default. Scrapes are serialised, because collectors keep state between scrapes (resets)."""

from __future__ import annotations

import errno
import gzip
import logging
import ssl
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fabricd.errors import UsageError

from .httplimits import (
    HANDSHAKE,
    HANDSHAKE_TIMEOUT_S,
    HEADERS,
    IDLE,
    RESPONSE,
    AuthGate,
    ConnLimits,
    ConnTable,
    RateLog,
)
from .webconfig import WebConfig

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_LISTEN = "127.0.0.1:9860"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
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


def listen_option(value: str, example: str = DEFAULT_LISTEN) -> tuple[str, int]:
    """:func:`parse_listen` of a ``--listen`` option: a bad value is a located :class:`UsageError` (exit 2)."""
    try:
        return parse_listen(value)
    except ValueError as exc:
        raise UsageError(f"--listen: {exc}", hint=f"e.g. --listen {example}") from None


def bind_error(listen: str, exc: OSError) -> UsageError:
    """The located error for a ``--listen`` address that cannot be bound (port taken, not an address of this host)."""
    return UsageError(
        f"--listen {listen}: cannot bind: {exc.strerror or exc}",
        hint="pick a free port on an address of this host, or stop what listens there",
    )


_OUT_OF_FDS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 31\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\ntoo many connections, try again\n"
)


class WebServer(ThreadingHTTPServer):
    """A threaded HTTP server under an exporter-toolkit web config; handlers check basic auth with
    :meth:`WebHandler.authorized`. Shared by the exporters (:class:`ExporterServer`) and ``fabricd serve``'s API.

    The accept loop only accepts: each connection gets its own thread, which completes the TLS handshake (bounded
    by :data:`HANDSHAKE_TIMEOUT_S`) and then serves requests, so a client that connects and never sends a
    ClientHello, or idles, holds only its own thread and never delays another scrape. What a client can hold
    (connections, deadlines, requests in flight, failed authentications) is bounded by :class:`ConnLimits`
    (:mod:`fabricd.collectors.httplimits`).
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # listen() backlog: a burst of scrapers (the default of 5 stalls at ~20 clients)

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        web: WebConfig | None = None,
        limits: ConnLimits | None = None,
    ) -> None:
        self.web = web or WebConfig()
        self.limits = (limits or ConnLimits()).fitted()
        self.conns = ConnTable(self.limits)
        self.auth = AuthGate(self.web.authorized, self.limits.auth_failures)
        self._fd_log = RateLog(logging.WARNING)
        self._accept_backoff = 0.0
        self._next_reap = 0.0
        super().__init__(address, handler)

    def get_request(self) -> tuple[Any, Any]:
        """``accept()``; when descriptors run out (EMFILE/ENFILE), close an idle connection, back off (doubling up
        to 1 s) and log once a minute, instead of spinning on a listening socket that stays readable."""
        try:
            pair = super().get_request()
        except OSError as exc:
            if exc.errno in _OUT_OF_FDS:
                freed = self.conns.free_one()
                self._accept_backoff = min(max(self._accept_backoff * 2, 0.01), 1.0)
                self._fd_log.event(
                    "cannot accept HTTP connections: %s (%d connections open%s); backing off %.2f "
                    "s; raise the open-file limit (LimitNOFILE=) or lower --max-connections",
                    exc.strerror or exc,
                    len(self.conns),
                    ", closed an idle one" if freed else "",
                    self._accept_backoff,
                )
                time.sleep(self._accept_backoff)
            raise
        self._accept_backoff = 0.0
        return pair

    def process_request(self, request: Any, client_address: Any) -> None:
        """Admit the connection under the cap (closing an idle one to make room) or refuse it, then hand it to a
        thread."""
        peer = str(client_address[0]) if isinstance(client_address, tuple) else str(client_address)
        tls = self.web.tls is not None
        conn = self.conns.admit(
            request, peer, HANDSHAKE if tls else IDLE, HANDSHAKE_TIMEOUT_S if tls else self.limits.idle_timeout_s
        )
        if conn is None:
            if not tls:
                try:
                    request.setblocking(False)
                    request.send(_BUSY)
                except OSError:
                    pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.conns.release(request)
            raise

    def service_actions(self) -> None:
        """Between accepts (at least every poll interval): shut down connections past their deadline."""
        now = time.monotonic()
        if now >= self._next_reap:
            self._next_reap = now + 0.2
            self.conns.reap()

    def finish_request(self, request: Any, client_address: Any) -> None:
        """In the connection's own thread: the TLS handshake (when configured), then the request handler."""
        try:
            self._finish(request, client_address)
        finally:
            self.conns.release(request)

    def _finish(self, request: Any, client_address: Any) -> None:
        tls = self.web.tls
        if tls is None:
            request.settimeout(self.limits.idle_timeout_s)
            super().finish_request(request, client_address)
            return
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            conn = tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        except OSError as exc:
            log.debug("TLS from %s: %s", client_address, exc)
            return
        self.conns.rebind(request, conn)
        try:
            try:
                conn.do_handshake()
            except (OSError, ssl.SSLError) as exc:  # timeout, reset, a plain-HTTP client, a bad certificate
                log.debug("TLS handshake from %s failed: %s", client_address, exc)
                return
            conn.settimeout(self.limits.idle_timeout_s)
            super().finish_request(conn, client_address)
        finally:
            self.conns.release(conn)
            conn.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One log line, never a traceback on stderr (socketserver's default prints one for every client that
        resets its connection mid-request: any neighbour could fill the journal with them). A client going away
        is DEBUG; anything else is an ERROR line, with the traceback at DEBUG."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # reset, broken pipe, timeout, TLS alert
            log.debug("connection from %s ended: %s", client_address, exc)
            return
        log.error(
            "request from %s failed: %s: %s",
            client_address,
            type(exc).__name__,
            exc,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )

    @property
    def origin(self) -> str:
        """``scheme://host:port`` of the bound socket (an IPv6 host in brackets)."""
        host, port = str(self.server_address[0]), int(self.server_address[1])
        scheme = "https" if self.web.tls is not None else "http"
        shown = f"[{host}]" if ":" in host else host
        return f"{scheme}://{shown}:{port}"

    @property
    def exposed(self) -> bool:
        """True when it listens beyond loopback with neither TLS nor basic auth (the caller should warn)."""
        host = str(self.server_address[0])
        return host not in LOOPBACK and self.web.tls is None and not self.web.users


class WebHandler(BaseHTTPRequestHandler):
    """Request handler base: HTTP/1.1 keep-alive, debug-level access log, basic auth, Prometheus text with gzip
    when the client accepts it. Subclasses override ``do_GET`` (this one serves nothing: 404); HEAD answers as GET
    without the body."""

    server: WebServer
    _slot = False  # holds one of the server's request slots
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall on keep-alive

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def send_body(
        self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8", headers: dict[str, str] | None = None
    ) -> None:
        """Status line, headers and body in one write (one TCP segment train instead of two, and no per-header
        buffering): the response of every request this server answers."""
        self.log_request(code)
        extra = "".join(f"{k}: {v}\r\n" for k, v in {**self.server.web.headers, **(headers or {})}.items())
        if self.close_connection:
            extra += "Connection: close\r\n"
        head = (
            f"{self.protocol_version} {code} {self.responses[code][0]}\r\nDate: {self.date_time_string()}\r\n"
            f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
        ).encode("latin-1")
        self.wfile.write(head if self.command == "HEAD" else head + body)

    def handle_one_request(self) -> None:
        """One request under the connection's deadlines: idle until its first byte, then
        :attr:`ConnLimits.header_timeout_s` for the request line and headers (enforced by the accept loop, which
        shuts the socket down), then the response, with at most :attr:`ConnLimits.max_requests` answered at once."""
        conn = self.server.conns.get(self.connection)
        limits = self.server.limits
        if conn is not None:
            conn.enter(IDLE, limits.idle_timeout_s)
        try:
            first = self.rfile.peek(1)  # type: ignore[attr-defined]  # a BufferedReader (rbufsize -1)
        except OSError:  # idle timeout, reset, shut down for a new connection
            self.close_connection = True
            return
        if not first or (conn is not None and conn.closed):
            self.close_connection = True
            return
        if conn is not None:
            conn.enter(HEADERS, limits.header_timeout_s)
        self._slot = False
        try:
            super().handle_one_request()
        finally:
            if self._slot:
                self.server.conns.requests.release()

    def parse_request(self) -> bool:
        """The request line and headers have arrived: start the response deadline and take a request slot (503 when
        none frees up within it). A request announcing a body is answered and its connection closed, unread."""
        if not super().parse_request():
            return False
        limits = self.server.limits
        conn = self.server.conns.get(self.connection)
        if conn is not None:
            conn.enter(RESPONSE, limits.response_timeout_s)
        if self.headers.get("Content-Length", "0").strip() not in ("", "0") or "Transfer-Encoding" in self.headers:
            self.close_connection = True
        if not self.server.conns.requests.acquire(timeout=limits.response_timeout_s):
            self.close_connection = True
            self.send_body(503, b"too many requests in flight, try again\n", headers={"Retry-After": "1"})
            return False
        self._slot = True
        return True

    def authorized(self) -> bool:
        """Whether the request passes the web config's basic auth, through the server's :class:`AuthGate`; if not,
        a 401 (429 after too many failures from this address, 503 when the check is busy) has been sent."""
        verdict = self.server.auth.verdict(self.headers.get("Authorization"), str(self.client_address[0]))
        if verdict == AuthGate.OK:
            return True
        if verdict == AuthGate.DENIED:
            self.send_body(401, b"Unauthorized\n", headers={"WWW-Authenticate": 'Basic realm="fabricd"'})
        elif verdict == AuthGate.LIMITED:
            self.close_connection = True
            self.send_body(
                429,
                b"too many failed authentications, try again later\n",
                headers={"Retry-After": str(int(AuthGate.WINDOW_S))},
            )
        else:
            self.close_connection = True
            self.send_body(503, b"authentication busy, try again\n", headers={"Retry-After": "1"})
        return False

    def send_metrics(self, text: str) -> None:
        """A Prometheus exposition, gzip-compressed (level 1) when the client accepts it."""
        body = text.encode()
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            self.send_body(200, gzip.compress(body, compresslevel=1), CONTENT_TYPE, {"Content-Encoding": "gzip"})
        else:
            self.send_body(200, body, CONTENT_TYPE)

    def do_GET(self) -> None:
        self.send_body(404, b"Not Found\n")

    def do_HEAD(self) -> None:
        self.do_GET()


class ExporterServer(WebServer):
    """Serves ``render()`` output on /metrics. ``render`` is called under a lock, once per request."""

    def __init__(
        self,
        address: tuple[str, int],
        render: Callable[[], str],
        web: WebConfig | None = None,
        limits: ConnLimits | None = None,
    ) -> None:
        self.render = render
        self.scrape_lock = threading.Lock()
        super().__init__(address, _Handler, web, limits)

    @property
    def url(self) -> str:
        return f"{self.origin}/metrics"


class _Handler(WebHandler):
    server: ExporterServer

    def do_GET(self) -> None:
        if not self.authorized():
            return
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            with self.server.scrape_lock:
                text = self.server.render()
            self.send_metrics(text)
        elif path == "/":
            self.send_body(200, _LANDING.encode(), "text/html; charset=utf-8")
        else:
            self.send_body(404, b"Not Found\n")
