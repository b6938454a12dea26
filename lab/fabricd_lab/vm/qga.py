"""Run commands in a lab guest without a login, through qemu-guest-agent (QGA) on a virtio-serial port.

QEMU exposes the port on the host as a unix socket (``-chardev socket,server=on``); the guest runs Debian's
``qemu-ga``. The protocol is QMP-style JSON, one object per line (QEMU docs: "QEMU Guest Agent Protocol Reference",
qga/qapi-schema.json of QEMU 7.2):

* ``guest-sync-delimited {id}`` after connecting: the agent answers ``0xFF`` then ``{"return": id}``, which flushes any
  half-read request a previous client left behind;
* ``guest-exec {path, arg, env, input-data, capture-output}`` starts a process and returns its ``pid``;
* ``guest-exec-status {pid}`` returns ``exited``, ``exitcode``, ``signal`` and, once exited, base64 ``out-data`` /
  ``err-data``. A finished process's status can be read once.

The chardev accepts one client at a time, so every request holds an ``flock`` on ``<socket>.lock`` from connect to
close; several fabricd processes (a CLI call, a test, a benchmark) can then share one guest safely.
"""

from __future__ import annotations

import base64
import fcntl
import json
import logging
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fabricd.traffic.remote import CommandResult

from .image import VmError

log = logging.getLogger(__name__)


ExecResult = CommandResult
"""A finished guest process (the traffic layer's :class:`~fabricd.traffic.remote.CommandResult`)."""


class AgentError(VmError):
    """The guest agent could not be reached or answered with an error."""


class GuestAgent:
    """Client for one guest's qemu-guest-agent socket. ``name`` labels messages (the endpoint's host name)."""

    def __init__(self, path: Path, *, name: str = "guest", io_timeout_s: float = 30.0) -> None:
        self.path = path
        self.name = name
        self.io_timeout_s = io_timeout_s
        self._sync_id = int(time.time() * 1000) & 0x3FFFFFFF

    @contextmanager
    def _session(self) -> Iterator[socket.socket]:
        lock = self.path.with_name(self.path.name + ".lock")
        with lock.open("a") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.io_timeout_s)
            try:
                sock.connect(str(self.path))
                self._sync(sock)
                yield sock
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                raise AgentError(
                    f"{self.name}: guest agent socket {self.path} is not accepting connections ({exc.strerror})",
                    hint="is the VM up? see 'fabricd lab vm status'",
                ) from exc
            except TimeoutError as exc:
                raise AgentError(
                    f"{self.name}: guest agent on {self.path} did not answer within {self.io_timeout_s:.0f}s",
                    hint="the guest may still be booting or be overloaded; see its console log in the run directory",
                ) from exc
            finally:
                sock.close()
                fcntl.flock(lf, fcntl.LOCK_UN)

    def _sync(self, sock: socket.socket) -> None:
        self._sync_id = (self._sync_id + 1) & 0x3FFFFFFF
        req = json.dumps({"execute": "guest-sync-delimited", "arguments": {"id": self._sync_id}})
        sock.sendall(b"\xff" + req.encode() + b"\n")
        buf = b""
        while True:  # skip everything up to the 0xFF sentinel, then read the matching line
            chunk = sock.recv(4096)
            if not chunk:
                raise AgentError(f"{self.name}: guest agent closed the connection during sync")
            buf += chunk
            if b"\xff" in buf:
                buf = buf.split(b"\xff")[-1]
                break
        while True:
            while b"\n" not in buf:
                chunk = sock.recv(4096)
                if not chunk:
                    raise AgentError(f"{self.name}: guest agent closed the connection during sync")
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            # Answers to earlier sessions' syncs (queued while the agent was starting) come with their own 0xFF
            # sentinels: keep what follows the last one, and skip whatever is not the answer to this sync.
            line = line.rsplit(b"\xff", 1)[-1].strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("return") == self._sync_id:
                return

    def _call(self, sock: socket.socket, command: str, arguments: Mapping[str, Any] | None = None) -> Any:
        req: dict[str, Any] = {"execute": command}
        if arguments:
            req["arguments"] = dict(arguments)
        sock.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while True:
            while b"\n" not in buf:
                chunk = sock.recv(65536)
                if not chunk:
                    raise AgentError(f"{self.name}: guest agent closed the connection during {command}")
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            line = line.strip(b"\xff \r\t")
            if not line:
                continue
            msg = json.loads(line)
            if "error" in msg:
                err = msg["error"]
                raise AgentError(f"{self.name}: guest agent: {command}: {err.get('class')}: {err.get('desc')}")
            if "return" in msg:
                return msg["return"]

    def call(self, command: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """One QGA command in its own session (sync, request, response)."""
        with self._session() as sock:
            return self._call(sock, command, arguments)

    def ping(self) -> None:
        """Raise AgentError unless the agent answers ``guest-ping``."""
        self.call("guest-ping")

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> int:
        """Start ``argv`` in the guest (as root) with captured output; return its guest pid."""
        args: dict[str, Any] = {"path": argv[0], "arg": list(argv[1:]), "capture-output": True}
        if env is not None:
            args["env"] = [f"{k}={v}" for k, v in env.items()]
        if stdin is not None:
            args["input-data"] = base64.b64encode(stdin).decode()
        ret = self.call("guest-exec", args)
        return int(ret["pid"])

    def status(self, pid: int) -> dict[str, Any]:
        """Raw ``guest-exec-status`` of a started pid (``exited`` false while it runs)."""
        return dict(self.call("guest-exec-status", {"pid": pid}))

    def wait(self, pid: int, argv: Sequence[str], *, timeout_s: float, started: float | None = None) -> ExecResult:
        """Poll until ``pid`` exits (0.05 s rising to 0.5 s between polls); kill it and raise on timeout."""
        t0 = started if started is not None else time.monotonic()
        delay = 0.05
        while True:
            st = self.status(pid)
            if st.get("exited"):
                rc = int(st.get("exitcode", 0)) if "exitcode" in st else 128 + int(st.get("signal", 0))
                return ExecResult(
                    argv=tuple(argv),
                    rc=rc,
                    stdout=base64.b64decode(st.get("out-data", "")).decode(errors="replace"),
                    stderr=base64.b64decode(st.get("err-data", "")).decode(errors="replace"),
                    seconds=round(time.monotonic() - t0, 3),
                    truncated=bool(st.get("out-truncated") or st.get("err-truncated")),
                )
            if time.monotonic() - t0 > timeout_s:
                self.kill(pid)
                raise AgentError(
                    f"{self.name}: '{' '.join(argv)}' did not finish within {timeout_s:.0f}s (killed)",
                    hint="raise the timeout, or check the guest with 'fabricd lab vm exec'",
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        timeout_s: float = 120.0,
    ) -> ExecResult:
        """Run ``argv`` in the guest and wait for it; the result carries the exit code (never raised on rc != 0)."""
        t0 = time.monotonic()
        pid = self.start(argv, env=env, stdin=stdin)
        return self.wait(pid, argv, timeout_s=timeout_s, started=t0)

    def kill(self, pid: int, sig: str = "KILL") -> None:
        """Send a signal to a guest process (best effort; the process may have exited meanwhile)."""
        try:
            kpid = self.start(["/bin/kill", f"-{sig}", str(pid)])
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not self.status(kpid).get("exited"):
                time.sleep(0.1)
            # reap the killed process's status so the agent forgets it
            self.status(pid)
        except AgentError as exc:
            log.debug("%s: kill %s failed: %s", self.name, pid, exc)

    def wait_ready(self, *, timeout_s: float, alive: Any = None) -> float:
        """Wait until the agent answers ``guest-ping``; return seconds waited.

        ``alive`` is an optional callable returning False when the VM process died, so a crashed boot fails fast.
        """
        t0 = time.monotonic()
        last: Exception | None = None
        while time.monotonic() - t0 < timeout_s:
            if alive is not None and not alive():
                raise AgentError(f"{self.name}: the VM exited while booting")
            if self.path.exists():
                try:
                    saved = self.io_timeout_s
                    self.io_timeout_s = 2.0
                    try:
                        self.ping()
                    finally:
                        self.io_timeout_s = saved
                    return time.monotonic() - t0
                except (AgentError, OSError) as exc:
                    last = exc
            time.sleep(0.5)
        raise AgentError(
            f"{self.name}: guest agent did not answer within {timeout_s:.0f}s of boot (last error: {last})",
            hint="see the serial console log in the run directory ('fabricd lab vm status' prints its path)",
        )
