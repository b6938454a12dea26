"""A traffic :class:`~fabricd.traffic.remote.Runner` over SSH: ``validate-fabric`` on real hosts.

One SSH connection per host (asyncssh, host key verified as for the fan-out: :mod:`fabricd.deploy.hostfanout`), on
an event loop of its own thread, so that the synchronous Runner calls (``run``, ``start`` then ``wait``/``kill``) of
the traffic code can be made from any thread. ``env`` is passed with ``env NAME=VALUE`` in front of the command (an
SSH server accepts few variables through the protocol). The traffic command on the host is ``fabricd traffic``
(``--remote-fabricd`` changes it).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import asyncssh

from fabricd.traffic.oob import TrafficError
from fabricd.traffic.remote import CommandResult

from .hostfanout import FanoutOptions, SshTarget, connect_kwargs, known_hosts_of


def _command(argv: Sequence[str], env: Mapping[str, str] | None) -> str:
    prefix = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    return shlex.join([*prefix, *argv])


def _text(data: Any) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else str(data)


class _Started:
    def __init__(self, runner: SshRunner, argv: Sequence[str], proc: Any) -> None:
        self.runner, self.argv, self.proc, self.t0 = runner, tuple(argv), proc, time.monotonic()

    def wait(self, timeout_s: float) -> CommandResult:
        async def collect() -> tuple[Any, str, str]:
            out, err = await asyncio.gather(self.proc.stdout.read(), self.proc.stderr.read())
            await self.proc.wait_closed()
            return self.proc.exit_status, _text(out), _text(err)

        try:
            rc, out, err = self.runner._call(collect(), timeout_s)
        except TimeoutError:
            self.kill()
            raise TrafficError(f"{self.runner.name}: {shlex.join(self.argv)} still runs after {timeout_s:g} s; "
                               "killed it") from None
        return CommandResult(self.argv, rc if rc is not None else 255, out, err, time.monotonic() - self.t0)

    def kill(self) -> None:
        async def close() -> None:
            with contextlib.suppress(OSError, asyncssh.Error):
                self.proc.send_signal("KILL")
            self.proc.close()

        with contextlib.suppress(TimeoutError, OSError, asyncssh.Error):
            self.runner._call(close(), 10)


class SshRunner:
    """Runs commands on one host over SSH (implements :class:`fabricd.traffic.remote.Runner`)."""

    def __init__(self, target: SshTarget, opts: FanoutOptions, traffic_command: Sequence[str] | None = None) -> None:
        self.name = target.name
        self.target = target
        self.opts = opts
        self.traffic_command = tuple(traffic_command or (opts.remote_fabricd, "traffic"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"ssh-{target.name}", daemon=True)
        self._thread.start()
        self._conn: Any = None

    def _call(self, coro: Any, timeout_s: float) -> Any:
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout_s)
        except TimeoutError:
            fut.cancel()
            raise

    async def _connection(self) -> Any:
        if self._conn is None:
            known = known_hosts_of(self.opts)
            try:
                self._conn = await asyncssh.connect(self.target.address, self.target.port,
                                                    **connect_kwargs(self.opts, known))
            except (OSError, asyncssh.Error) as exc:
                reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
                raise TrafficError(f"{self.name}: SSH to {self.target.address}:{self.target.port} failed: "
                                   f"{reason}") from None
        return self._conn

    def run(self, argv: Sequence[str], *, timeout_s: float, stdin: bytes | None = None,
            env: Mapping[str, str] | None = None) -> CommandResult:
        t0 = time.monotonic()

        async def go() -> Any:
            conn = await self._connection()
            return await conn.run(_command(argv, env), input=stdin, check=False, encoding=None)

        try:
            res = self._call(go(), timeout_s)
        except TimeoutError:
            return CommandResult(tuple(argv), 124, "", f"timed out after {timeout_s:g} s", time.monotonic() - t0)
        rc = res.exit_status if res.exit_status is not None else 255
        return CommandResult(tuple(argv), rc, _text(res.stdout), _text(res.stderr), time.monotonic() - t0)

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> _Started:
        async def go() -> Any:
            conn = await self._connection()
            proc = await conn.create_process(_command(argv, env), encoding=None)
            proc.stdin.write_eof()
            return proc

        return _Started(self, argv, self._call(go(), self.opts.connect_timeout_s + 30))

    def close(self) -> None:
        async def close() -> None:
            if self._conn is not None:
                self._conn.close()
                await self._conn.wait_closed()

        with contextlib.suppress(TimeoutError, OSError, asyncssh.Error):
            self._call(close(), 10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
