"""asyncssh plumbing: one SSH listener per simulated switch, many switches per event loop.

The session is a raw :class:`asyncssh.SSHServerSession` (no asyncssh line editor, no per-session task): input is
echoed at once as a terminal does, split into lines on CR or LF, and each line is handed to the switch's
:class:`~fabricd_lab.device.Shell`; its answer and the next prompt are written back. This keeps the per-byte cost
low enough for 200 switches in one process (docs/PERFORMANCE.md). Paging (``terminal length``) and echo wrapping
(``terminal width``) are done here for shells that ask for them. Faults (:mod:`fabricd_lab.faults`) hook in here:
``auth-fail``, ``slow-ms`` and ``disconnect-after-lines``; so does the optional per-command latency
(:mod:`fabricd_lab.latency`: a round trip on every echo and answer, one line processed at a time).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections import deque
from typing import Any

import asyncssh

from .device import Shell, SimSwitch

log = logging.getLogger(__name__)

PAGER_MORE = " --More-- "


class _Session(asyncssh.SSHServerSession[str]):
    def __init__(self, switch: SimSwitch) -> None:
        self._switch = switch
        self._chan: Any = None
        self._shell: Shell | None = None
        self._buffer = ""
        self._echoed = 0
        self._after_cr = False
        self._lines = 0
        self._next_write = 0.0
        self._paged: list[str] = []
        self._closing = False
        self._term_size = (0, 0)
        self._queue: deque[tuple[float, str]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._busy_until = 0.0
        self._processing = 0.0

    # -- asyncssh callbacks ------------------------------------------------------------------------------------

    def connection_made(self, chan: Any) -> None:
        self._chan = chan

    def pty_requested(self, term_type: str, term_size: tuple[int, int, int, int], term_modes: Any) -> bool:
        self._term_size = (term_size[0], term_size[1])
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        return False

    def session_started(self) -> None:
        self._switch.sessions += 1
        self._shell = self._switch.open_shell()
        term = getattr(self._shell, "term", None)
        if term is not None and self._term_size[0] > 0:
            term.width, term.length = self._term_size
        self._write(self._shell.greeting() + self._shell.prompt(), delayed=False)

    def data_received(self, data: str, datatype: Any) -> None:
        if self._shell is None or self._closing:
            return
        if self._paged:
            self._page_key(data)
            return
        if "\x00" in data:
            data = data.replace("\x00", "")
        if not data:
            return
        if self._after_cr and data[0] == "\n":
            data = data[1:]
        self._after_cr = data.endswith("\r")
        text = data.replace("\r\n", "\n").replace("\r", "\n")
        # A network CLI echoes a line when it reads it, so replies interleave with echoes as on a real device:
        # echo(line 1) reply(line 1) prompt echo(line 2) ...  The unfinished tail is echoed at once (typing).
        parts = text.split("\n")
        for i, piece in enumerate(parts[:-1]):
            line = self._buffer + piece
            echoed = self._echoed if i == 0 else 0
            self._buffer = ""
            self._echoed = 0
            self._echo(line[echoed:] + "\n")
            self._line(line)
            if self._closing:
                return
        tail = parts[-1]
        if tail:
            self._buffer += tail
            self._echo(tail)
            self._echoed = len(self._buffer)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self._shell is not None:
            self._shell.closed()
            self._shell = None

    # -- internals ---------------------------------------------------------------------------------------------

    def _echo(self, text: str) -> None:
        shell = self._shell
        width = getattr(shell, "echo_width", 0)
        if width and shell is not None and text.endswith("\n") and len(text) - 1 > width - len(shell.prompt()):
            # A narrow terminal wraps the echo; netmiko's echo check then fails, as on real devices.
            room = max(1, width - len(shell.prompt()))
            seg = text[:-1]
            text = "\n".join(seg[i : i + room] for i in range(0, len(seg), room)) + "\n"
        self._write(text, delayed=False)

    def _line(self, line: str) -> None:
        shell = self._shell
        assert shell is not None
        self._lines += 1
        self._switch.lines_received += 1
        latency = self._switch.spec.latency
        self._processing = latency.processing(self._switch.spec.platform, line) if latency else 0.0
        reply = shell.handle(line)
        limit = self._switch.faults.disconnect_after
        if limit is not None and self._switch.lines_received >= limit:
            self._switch.faults.disconnect_fired = True
            log.info("lab %s: fault disconnect-after-lines=%s fired", self._switch.name, limit)
            self._drop()
            return
        if reply.close:
            self._write(reply.output + ("\n" if reply.output else ""), delayed=True)
            self._closing = True
            self._close_later()
            return
        self._emit(reply.output)

    def _emit(self, output: str) -> None:
        shell = self._shell
        assert shell is not None
        length = getattr(shell, "page_length", 0)
        text = output + ("\n" if output and not output.endswith("\n") else "")
        if length and text.count("\n") > length:
            lines = text.split("\n")
            self._paged = lines[length - 1 :]
            self._write("\n".join(lines[: length - 1]) + "\n" + PAGER_MORE, delayed=True)
            return
        self._write(text + shell.prompt(), delayed=True)

    def _page_key(self, data: str) -> None:
        shell = self._shell
        assert shell is not None
        key = data[:1]
        self._chan.write("\r" + " " * len(PAGER_MORE) + "\r")
        if key in ("q", "Q", "\x03"):
            self._paged = []
            self._write(shell.prompt(), delayed=True)
            return
        length = getattr(shell, "page_length", 0) or 24
        take = 1 if key in ("\r", "\n") else length - 1
        chunk, self._paged = self._paged[:take], self._paged[take:]
        rest = "\n".join(chunk)
        if self._paged and any(self._paged):
            self._write(rest + "\n" + PAGER_MORE, delayed=True)
        else:
            self._paged = []
            self._write(rest + ("\n" if rest else "") + shell.prompt(), delayed=True)

    def _write(self, text: str, *, delayed: bool) -> None:
        """Write in order; with ``slow-ms`` replies wait that long and later writes queue behind them (a FIFO
        drained by one timer: asyncio does not keep call_at order for equal times)."""
        data = text.replace("\n", "\r\n")
        slow = self._switch.faults.slow_s
        latency = self._switch.spec.latency
        if not slow and not latency and not self._queue:
            self._chan.write(data)
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if latency:
            # the line reached the switch half a round trip ago from the client's view; it is handled after the
            # lines before it, and its answer takes the other half back
            half = latency.rtt_s / 2.0
            if delayed:
                start = max(now + half, self._busy_until)
                self._busy_until = start + self._processing + (slow or 0.0)
                self._processing = 0.0
                at = max(self._busy_until + half, self._next_write)
            else:
                at = max(now + latency.rtt_s, self._next_write)
        else:
            at = max(now, self._next_write) + (slow if delayed else 0.0)
        self._next_write = at
        self._queue.append((at, data))
        if self._timer is None:
            self._timer = loop.call_at(self._queue[0][0], self._drain)

    def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = None
        now = loop.time()
        while self._queue and self._queue[0][0] <= now + 0.0005:
            _, data = self._queue.popleft()
            try:
                self._chan.write(data)
            except (OSError, asyncssh.Error, BrokenPipeError):
                log.debug("lab %s: late write after close", self._switch.name)
        if self._queue:
            self._timer = loop.call_at(self._queue[0][0], self._drain)

    def _close_later(self) -> None:
        loop = asyncio.get_running_loop()
        at = max(loop.time(), self._next_write) + 0.01
        loop.call_at(at, self._chan.close)

    def _drop(self) -> None:
        self._closing = True
        conn = self._chan.get_extra_info("connection")
        if conn is not None:
            conn.abort()
        else:
            self._chan.close()


class _Server(asyncssh.SSHServer):
    def __init__(self, switch: SimSwitch) -> None:
        self._switch = switch

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        spec = self._switch.spec
        if self._switch.faults.auth_fails:
            log.info("lab %s: fault auth-fail rejected %s", self._switch.name, username)
            return False
        return username == spec.username and hmac.compare_digest(password.encode(), spec.password.encode())

    def session_requested(self) -> _Session:
        return _Session(self._switch)


async def listen(switch: SimSwitch, host_key: asyncssh.SSHKey) -> tuple[asyncssh.SSHAcceptor, int]:
    """Start the SSH listener of one switch; returns the acceptor and the bound port."""
    acceptor = await asyncssh.listen(
        switch.spec.host,
        switch.spec.port,
        server_factory=lambda: _Server(switch),
        server_host_keys=[host_key],
        line_editor=False,
        encoding="utf-8",
        reuse_address=True,
        backlog=256,
        keepalive_interval=0,
        login_timeout=30,
    )
    return acceptor, int(acceptor.get_port())


def generate_host_key() -> asyncssh.SSHKey:
    """A fresh ed25519 host key (one per lab run; every switch of the lab presents it)."""
    return asyncssh.generate_private_key("ssh-ed25519", comment="fabricd-lab")


def public_key_line(key: asyncssh.SSHKey) -> str:
    """``ssh-ed25519 AAAA...`` for known_hosts."""
    text: bytes = key.export_public_key("openssh")
    parts = text.decode().split()
    return f"{parts[0]} {parts[1]}"


def known_hosts_entry(host: str, port: int, key: asyncssh.SSHKey) -> str:
    """One known_hosts line; non-22 ports use OpenSSH's ``[host]:port`` form, which paramiko also reads."""
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} {public_key_line(key)}"
