"""A traffic :class:`~fabricd.traffic.remote.Runner` over SSH: ``validate-fabric`` on real hosts.

One SSH connection per host (paramiko, opened on first use; host key verified as for the fan-out and the switches:
:func:`fabricd.deploy.hostfanout.connect`), one channel per command, so the synchronous Runner calls (``run``,
``start`` then ``wait``/``kill``) of the traffic code can be made from any thread. A started command's output is
drained by a thread of its own while it runs (a command that writes much never stalls on a full SSH window).
``env`` is passed with ``env NAME=VALUE`` in front of the command (an SSH server accepts few variables through the
protocol). ``kill`` sends the SSH ``signal`` request (RFC 4254 6.9, ``KILL``), then closes the channel. The traffic
command on the host is ``fabricd traffic`` (``--remote-fabricd`` changes it).
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
from collections.abc import Mapping, Sequence

import paramiko

from fabricd.traffic.oob import TrafficError
from fabricd.traffic.remote import CommandResult

from .hostfanout import FanoutOptions, SshError, SshTarget, collect, connect

_MSG_CHANNEL_REQUEST = 98  # RFC 4254 5.4 (paramiko.common.MSG_CHANNEL_REQUEST)


def _command(argv: Sequence[str], env: Mapping[str, str] | None) -> str:
    prefix = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    return shlex.join([*prefix, *argv])


def _text(data: bytes) -> str:
    return data.decode(errors="replace")


def _signal(chan: paramiko.Channel, name: str) -> None:
    """RFC 4254 6.9 ``signal`` request (paramiko has no call for it; OpenSSH's sshd honours it since 7.9)."""
    m = paramiko.Message()
    m.add_byte(bytes([_MSG_CHANNEL_REQUEST]))
    m.add_int(chan.remote_chanid)
    m.add_string("signal")
    m.add_boolean(False)
    m.add_string(name)
    chan.transport._send_user_message(m)


class _Started:
    def __init__(self, runner: SshRunner, argv: Sequence[str], chan: paramiko.Channel) -> None:
        self.runner, self.argv, self.chan, self.t0 = runner, tuple(argv), chan, time.monotonic()
        self._result: tuple[int | None, bytes, bytes] | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._reader = threading.Thread(target=self._drain, name=f"ssh-{runner.name}-out", daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        try:
            self._result = collect(self.chan, None)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            self._error = exc
        finally:
            self._done.set()

    def wait(self, timeout_s: float) -> CommandResult:
        if not self._done.wait(timeout_s):
            self.kill()
            raise TrafficError(
                f"{self.runner.name}: {shlex.join(self.argv)} still runs after {timeout_s:g} s; killed it"
            ) from None
        self.chan.close()
        if self._result is None:
            raise TrafficError(f"{self.runner.name}: the SSH session of {shlex.join(self.argv)} failed: {self._error}")
        rc, out, err = self._result
        return CommandResult(
            self.argv, rc if rc is not None else 255, _text(out), _text(err), time.monotonic() - self.t0
        )

    def kill(self) -> None:
        with contextlib.suppress(OSError, EOFError, paramiko.SSHException, AttributeError):
            if not self.chan.closed:
                _signal(self.chan, "KILL")
        self.chan.close()
        self._done.wait(5)  # the reader ends once the channel is closed


class SshRunner:
    """Runs commands on one host over SSH (implements :class:`fabricd.traffic.remote.Runner`)."""

    def __init__(self, target: SshTarget, opts: FanoutOptions, traffic_command: Sequence[str] | None = None) -> None:
        self.name = target.name
        self.target = target
        self.opts = opts
        self.traffic_command = tuple(traffic_command or (opts.remote_fabricd, "traffic"))
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    def _channel(self, command: str) -> paramiko.Channel:
        """A channel running ``command``, on the host's one connection (opened on first use). Raises TrafficError."""
        with self._lock:
            if self._client is None:
                try:
                    self._client = connect(self.target, self.opts)
                except SshError as exc:
                    where = f"{self.target.address}:{self.target.port}"
                    reason = str(exc).removeprefix(f"{where}: ")
                    raise TrafficError(f"{self.name}: SSH to {where} failed: {reason}") from None
            client = self._client
        try:
            chan = client.get_transport().open_session(timeout=self.opts.connect_timeout_s)
            chan.exec_command(command)
        except (OSError, EOFError, paramiko.SSHException, AttributeError) as exc:
            with self._lock:  # the connection dropped: the next call reconnects
                if self._client is client:
                    self._client = None
            with contextlib.suppress(Exception):
                client.close()
            raise TrafficError(
                f"{self.name}: SSH session to {self.target.address}:{self.target.port} failed: "
                f"{str(exc) or type(exc).__name__}"
            ) from None
        return chan

    def run(
        self, argv: Sequence[str], *, timeout_s: float, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        t0 = time.monotonic()
        deadline = t0 + timeout_s
        chan = self._channel(_command(argv, env))
        try:
            if stdin:
                chan.settimeout(max(0.001, deadline - time.monotonic()))
                chan.sendall(stdin)
            chan.shutdown_write()
            rc, out, err = collect(chan, deadline)
        except TimeoutError:
            return CommandResult(tuple(argv), 124, "", f"timed out after {timeout_s:g} s", time.monotonic() - t0)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise TrafficError(
                f"{self.name}: the SSH session of {shlex.join(argv)} failed: {str(exc) or type(exc).__name__}"
            ) from None
        finally:
            chan.close()
        return CommandResult(tuple(argv), rc if rc is not None else 255, _text(out), _text(err), time.monotonic() - t0)

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> _Started:
        chan = self._channel(_command(argv, env))
        try:
            chan.shutdown_write()
        except (OSError, EOFError, paramiko.SSHException) as exc:
            chan.close()
            raise TrafficError(f"{self.name}: the SSH session of {shlex.join(argv)} failed: {exc}") from None
        return _Started(self, argv, chan)

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
