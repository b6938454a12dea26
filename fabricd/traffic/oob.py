"""The out-of-band channel: a TCP connection over which client and server trade what RC needs to connect.

RC QPs need each side's QPN, starting PSN, GID and path MTU, and one-sided operations need the peer's buffer address
and rkey (rdma-core pyverbs docs; perftest exchanges the same over TCP port 18515). Messages are JSON objects framed
by a 4-byte big-endian length. A session:

1. client -> ``hello``: protocol, fabricd version, the :class:`~fabricd.traffic.spec.TrafficSpec`, its QPs and MR;
2. server -> ``accept`` (its QPs, MR, GID) after moving its QPs to RTR/RTS, or ``error`` (protocol mismatch, spec
   the server cannot serve, verbs failure);
3. per (op, size): client -> ``phase`` (op, size, seed), server -> ``ready``; traffic; client -> ``done`` (messages
   per QP), server -> ``verified`` (its payload check);
4. client -> ``bye``.

A peer that speaks another protocol version is refused with both versions named.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import time
from typing import Any

from fabricd.errors import FabricdError

PROTOCOL = 1
"""Bumped on any incompatible change of the messages above."""
MAX_MESSAGE = 16 << 20


class TrafficError(FabricdError):
    """Traffic could not run or complete: peer unreachable, peer refused, verbs failure (exit 3)."""

    exit_code = 3


class PeerRefusedError(TrafficError):
    """The peer answered with an ``error`` message (its text is in the message)."""


class Channel:
    """A framed JSON connection. ``peer`` labels errors (``host:port``)."""

    def __init__(self, sock: socket.socket, peer: str, *, timeout_s: float = 60.0) -> None:
        self.sock = sock
        self.peer = peer
        sock.settimeout(timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg, separators=(",", ":")).encode()
        try:
            self.sock.sendall(struct.pack("!I", len(data)) + data)
        except OSError as exc:
            raise TrafficError(f"out-of-band connection to {self.peer} broke while sending: {exc}") from exc

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except TimeoutError as exc:
                raise TrafficError(
                    f"{self.peer} sent nothing for {self.sock.gettimeout():.0f}s on the out-of-band connection",
                    hint="the peer may be stuck or overloaded; check its log",
                ) from exc
            except OSError as exc:
                raise TrafficError(f"out-of-band connection to {self.peer} broke: {exc}") from exc
            if not chunk:
                raise TrafficError(
                    f"{self.peer} closed the out-of-band connection", hint="see the peer's output for its error"
                )
            buf += chunk
        return bytes(buf)

    def recv(self, expect: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        """The next message; ``error`` messages raise PeerRefusedError, an unexpected type raises TrafficError."""
        (n,) = struct.unpack("!I", self._recv_exact(4))
        if n > MAX_MESSAGE:
            raise TrafficError(f"{self.peer} sent a {n}-byte message (limit {MAX_MESSAGE}); not a fabricd peer?")
        try:
            msg = json.loads(self._recv_exact(n))
        except ValueError as exc:
            raise TrafficError(f"{self.peer} sent a message that is not JSON; not a fabricd traffic peer?") from exc
        if not isinstance(msg, dict) or "type" not in msg:
            raise TrafficError(f"{self.peer} sent a message without a type; not a fabricd traffic peer?")
        if msg["type"] == "error":
            raise PeerRefusedError(
                f"{self.peer} refused: {msg.get('message', 'no reason given')}", hint=msg.get("hint")
            )
        wanted = (expect,) if isinstance(expect, str) else expect
        if wanted is not None and msg["type"] not in wanted:
            raise TrafficError(f"{self.peer} sent '{msg['type']}' where '{'/'.join(wanted)}' was expected")
        return msg

    def readable(self) -> bool:
        """True when a message (or EOF) is waiting, without blocking."""
        r, _, _ = select.select([self.sock], [], [], 0)
        return bool(r)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def check_hello(msg: dict[str, Any], our_version: str) -> None:
    """Refuse a hello of another protocol version, naming both sides' fabricd versions."""
    theirs = msg.get("protocol")
    if theirs != PROTOCOL:
        raise TrafficError(
            f"peer speaks traffic protocol {theirs} (fabricd {msg.get('fabricd', '?')}), this side speaks "
            f"{PROTOCOL} (fabricd {our_version})",
            hint="run the same fabricd version on both hosts",
        )


def connect(host: str, port: int, *, timeout_s: float = 15.0) -> Channel:
    """Connect to a traffic server, retrying refused connections until ``timeout_s`` (the server may be starting).

    Raises TrafficError saying what failed (refused, unreachable, unknown name, timeout) and how to fix it.
    """
    deadline = time.monotonic() + timeout_s
    last: OSError | None = None
    while True:
        remaining = deadline - time.monotonic()
        try:
            sock = socket.create_connection((host, port), timeout=max(0.5, min(5.0, remaining)))
            return Channel(sock, f"{host}:{port}")
        except socket.gaierror as exc:
            raise TrafficError(
                f"cannot resolve traffic peer {host!r}: {exc.strerror}",
                hint="pass the peer's RDMA address (an IP) with --peer",
            ) from exc
        except OSError as exc:
            last = exc
            if time.monotonic() >= deadline:
                break
            time.sleep(0.2)
    reason = "timed out" if isinstance(last, TimeoutError) else (last.strerror if last and last.strerror else str(last))
    raise TrafficError(
        f"cannot reach traffic server {host}:{port} within {timeout_s:.0f}s: {reason}",
        hint=f"start 'fabricd traffic server' on {host} (same --port), check the address and any firewall",
    )


def listen(bind: str, port: int) -> socket.socket:
    """A listening socket on ``bind:port`` (port 0 picks a free one). UsageError-worthy failures become
    TrafficError with the address named."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bind, port))
    except OSError as exc:
        sock.close()
        raise TrafficError(
            f"cannot listen on {bind}:{port}: {exc.strerror}",
            hint="pick another --port, or --bind an address of this host",
        ) from exc
    sock.listen(4)
    return sock
