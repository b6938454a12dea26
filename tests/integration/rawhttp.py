"""A misbehaving HTTP(S) server for the hardening tests: it reads a request, then writes whatever bytes the test's
script says, at the pace it says (a float in the script is a pause in seconds), and closes or holds the
connection. Real sockets on 127.0.0.1, real TLS when given a context; nothing in the client is mocked."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

Piece = bytes | float
Script = Callable[["Request"], Iterable[Piece]]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class RawServer:
    """``script(request)`` gives the answer, piece by piece. ``hold`` keeps the socket open after the script
    (until the client goes away or the server stops) instead of closing it."""

    script: Script
    context: ssl.SSLContext | None = None
    hold: bool = False
    requests: list[Request] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)
        self._accept.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.context else 'http'}://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            t = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _read_request(self, conn: socket.socket) -> Request | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(rest) < n:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        return Request(method, path, headers, rest)

    def _handle(self, raw: socket.socket) -> None:
        conn: socket.socket = raw
        try:
            raw.settimeout(10.0)
            if self.context is not None:
                conn = self.context.wrap_socket(raw, server_side=True)
            req = self._read_request(conn)
            if req is None:
                return
            self.requests.append(req)
            conn.settimeout(None)
            for piece in self.script(req):
                if isinstance(piece, float):
                    if self.stop.wait(piece):
                        return
                else:
                    conn.sendall(piece)
            if self.hold:
                conn.settimeout(0.2)
                while not self.stop.is_set():
                    try:
                        if not conn.recv(1):
                            return
                    except TimeoutError:
                        continue
        except (OSError, ValueError):
            return  # the client went away (the point of most tests)
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def close(self) -> None:
        self.stop.set()
        self._accept.join(2.0)
        self.sock.close()
        for t in self._threads:
            t.join(2.0)


def response(status: str, headers: dict[str, str] | None = None, body: bytes = b"", *, length: bool = True) -> bytes:
    """A response's bytes: the status line (``"200 OK"``), headers, Content-Length unless ``length`` is False."""
    h = dict(headers or {})
    if length and "Content-Length" not in h and "Transfer-Encoding" not in h:
        h["Content-Length"] = str(len(body))
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in h.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes, size: int = 1024) -> bytes:
    out = b""
    for i in range(0, len(body), size):
        part = body[i : i + size]
        out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
    return out + b"0\r\n\r\n"


def trickle(data: bytes, every_s: float) -> Iterator[Piece]:
    """``data`` one byte at a time, ``every_s`` apart."""
    for i in range(len(data)):
        yield data[i : i + 1]
        yield every_s
