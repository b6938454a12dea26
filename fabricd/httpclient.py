"""One bounded HTTP(S) request: an overall deadline, a body size limit, length framing checked, no redirects.

``urllib.request`` gives none of these: its ``timeout`` is per socket operation (a server that sends one byte a
second holds a read for ever), it reads any body size into memory, it accepts a close-delimited body that a dropped
connection cut short (Python's TLS treats an EOF without ``close_notify`` as a clean end), it follows a redirect from
``https://`` to ``http://``, and ``http.client``'s own exceptions (``IncompleteRead``, ``BadStatusLine``,
``LineTooLong``, ``RemoteDisconnected``) escape its ``URLError``. :func:`request` is used where the answer matters or
where a stuck peer must not hold a thread: the agent's intent fetch (``fabricd.service.intent_source``) and the
watchdog's webhooks (``fabricd.watchdog.webhook``).

- **Deadline.** ``deadline_s`` bounds the whole request: connect, TLS handshake, request, status line, headers and
  body. When it passes (or ``abort`` is set) the socket is shut down from a watcher thread, which ends any read in
  progress at once, whatever the peer is doing. (A host name's lookup, before there is a socket, is bounded by the
  resolver's own timeout, not by this one.)
- **Size.** A body larger than ``read.max_bytes`` is refused: at once when its Content-Length says so, else as soon
  as that many bytes have been read (memory stays bounded).
- **Framing.** With ``read.require_framing`` (the default), a body must carry a Content-Length (and arrive in full:
  a short body is a failure) or be chunked (and end with its last chunk). A close-delimited body is refused, since a
  cut connection cannot be told from its end. Conflicting Content-Length headers are refused.
- **Redirects** are never followed: a 3xx is returned to the caller like any other status, with its ``Location``.

Every failure is one :class:`HttpError` (a :class:`~fabricd.errors.FabricdError` with ``kind``), never an
``http.client``, ``ssl`` or ``socket`` exception.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Literal

from .errors import FabricdError

FailureKind = Literal["deadline", "too_large", "unframed", "length", "transport", "tls", "url"]
_CHUNK = 64 * 1024
_ABORT_POLL_S = 0.1


class HttpError(FabricdError):
    """A request that did not complete: ``kind`` says how (deadline, too_large, unframed, length, transport, tls,
    url)."""

    def __init__(self, message: str, kind: FailureKind, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


@dataclass(frozen=True)
class HttpResponse:
    """A complete response. ``body`` is empty when the caller did not ask for it (``Reading(body=False)``), for a
    304 or 204, and for a status outside 2xx."""

    status: int
    reason: str
    headers: Message
    body: bytes

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")


class _Watch:
    """Shuts the connection's socket down when the deadline passes or ``abort`` is set, from its own thread.

    The socket is a ``dup`` of the connected one: ``shutdown`` acts on the connection, not the descriptor, so it
    ends a read blocked on the original (plain or TLS, handshake included) and leaves closing to its owner."""

    def __init__(self, deadline: float, abort: threading.Event | None) -> None:
        self.deadline = deadline
        self.abort = abort
        self.fired: str | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, name="http-deadline", daemon=True)
        self._thread.start()

    def arm(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock.dup()
            if self.fired is not None:
                self._kill()

    def _kill(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)

    def _run(self) -> None:
        while not self._done.is_set():
            left = self.deadline - time.monotonic()
            aborted = self.abort is not None and self.abort.is_set()
            if left <= 0 or aborted:
                with self._lock:
                    if self._done.is_set():
                        return
                    self.fired = "aborted" if aborted else "deadline"
                    self._kill()
                return
            self._done.wait(min(left, _ABORT_POLL_S) if self.abort is not None else left)

    def close(self) -> None:
        with self._lock:
            self._done.set()
            if self._sock is not None:
                self._sock.close()
                self._sock = None
        self._thread.join()


def _connect(
    url: urllib.parse.SplitResult, deadline: float, context: ssl.SSLContext | None, watch: _Watch
) -> http.client.HTTPConnection:
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed before connecting")
    raw = socket.create_connection((host, port), timeout=left)
    try:
        watch.arm(raw)
        sock: socket.socket = raw
        if url.scheme == "https":
            ctx = context if context is not None else ssl.create_default_context()
            sock = ctx.wrap_socket(raw, server_hostname=host)
    except BaseException:
        raw.close()
        raise
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection(host, port) if url.scheme == "https" else http.client.HTTPConnection(host, port)
    )
    conn.sock = sock  # connected and (for https) verified: request() does not connect again
    return conn


def _content_length(resp: http.client.HTTPResponse) -> int | None:
    values = {v.strip() for v in resp.headers.get_all("Content-Length") or []}
    if len(values) > 1:
        raise HttpError(f"conflicting Content-Length headers {sorted(values)}", "length")
    if not values:
        return None
    value = values.pop()
    if not value.isdigit():
        raise HttpError(f"invalid Content-Length {value!r}", "length")
    return int(value)


def _read_body(resp: http.client.HTTPResponse, max_body_bytes: int, require_framing: bool) -> bytes:
    length = None if resp.chunked else _content_length(resp)
    if require_framing and not resp.chunked and length is None:
        raise HttpError(
            "the body has no Content-Length and is not chunked (its end cannot be told from a cut connection)",
            "unframed",
            hint="serve the file with a Content-Length (any static file server does)",
        )
    if length is not None and length > max_body_bytes:
        raise HttpError(f"the body is {length} bytes (Content-Length), over the limit of {max_body_bytes}", "too_large")
    out = bytearray()
    while True:
        piece = resp.read(min(_CHUNK, max_body_bytes + 1 - len(out)))
        if not piece:
            break
        out += piece
        if len(out) > max_body_bytes:
            raise HttpError(f"the body is over the limit of {max_body_bytes} bytes", "too_large")
    if length is not None and len(out) != length:
        raise HttpError(f"the body ended after {len(out)} of {length} bytes (Content-Length)", "length")
    return bytes(out)


@dataclass(frozen=True)
class Reading:
    """How the answer's body is read: at all (``body``; else only the status and headers), up to ``max_bytes``, and
    whether it must be framed (Content-Length or chunked)."""

    body: bool = True
    max_bytes: int = 1 << 20
    require_framing: bool = True


def request(
    url: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    deadline_s: float,
    read: Reading = Reading(),
    context: ssl.SSLContext | None = None,
    abort: threading.Event | None = None,
) -> HttpResponse:
    """Send one request and read its response within ``deadline_s`` seconds; see the module docstring.

    The body of a 2xx answer is read (unless ``read.body`` is False); of any other status, only the status and
    headers. Raises :class:`HttpError`."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError(f"{url}: not an http(s) URL", "url")
    try:
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError:
        raise HttpError(f"{url}: invalid port", "url") from None
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    send = {"Connection": "close", **(headers or {})}
    deadline = time.monotonic() + deadline_s
    watch = _Watch(deadline, abort)
    conn: http.client.HTTPConnection | None = None
    try:
        conn = _connect(parts, deadline, context, watch)
        conn.request(method, target, body=body, headers=send)
        resp = conn.getresponse()
        data = b""
        if read.body and 200 <= resp.status < 300 and resp.status != 204 and method != "HEAD":
            data = _read_body(resp, read.max_bytes, read.require_framing)
        if watch.fired is not None:  # the last read may have ended at the shutdown, looking like a clean EOF
            raise TimeoutError
        return HttpResponse(resp.status, resp.reason, resp.headers, data)
    except HttpError as exc:
        if watch.fired is not None:
            raise _late(watch, deadline_s) from None
        raise exc from None
    except ssl.SSLCertVerificationError as exc:
        raise HttpError(
            f"TLS certificate not accepted (CERTIFICATE_VERIFY_FAILED): {exc.verify_message or exc}", "tls"
        ) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if watch.fired is not None:
            raise _late(watch, deadline_s) from None
        kind: FailureKind = "tls" if isinstance(exc, ssl.SSLError) else "transport"
        raise HttpError(f"{_describe(exc)}", kind) from None
    finally:
        watch.close()
        if conn is not None:
            conn.close()


def _late(watch: _Watch, deadline_s: float) -> HttpError:
    if watch.fired == "aborted":
        return HttpError("cancelled", "deadline")
    return HttpError(f"no complete answer within the {deadline_s:g} s deadline", "deadline")


def _describe(exc: BaseException) -> str:
    """``http.client``'s exceptions name themselves poorly (``IncompleteRead(0 bytes read)``, ``''``)."""
    name = type(exc).__name__
    if isinstance(exc, http.client.IncompleteRead):
        return f"the body was cut short ({name}: {len(exc.partial)} bytes read)"
    if isinstance(exc, http.client.LineTooLong):
        return f"a header or status line is too long ({name}: {exc})"
    if isinstance(exc, http.client.RemoteDisconnected):
        return f"the server closed the connection without an answer ({name})"
    if isinstance(exc, http.client.BadStatusLine):
        return f"not an HTTP status line ({name}: {str(exc)[:80]!r})"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"timed out ({name})"
    text = str(exc) or name
    return text if name in text else f"{name}: {text}"
