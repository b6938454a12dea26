"""Real SSH servers on 127.0.0.1 that run commands, one per simulated host (lab-only test machinery).

Each server is an asyncssh server with its own host key; it accepts one client public key and runs the requested
command with ``/bin/sh -c`` in an environment given per host (e.g. ``FABRICD_NETNS`` and ``FABRICD_ROOT`` naming the
namespace host it stands for, as /etc/environment would on a real host). All servers share one event loop on a
background thread. This is an SSH server implementation (asyncssh), not OpenSSH's sshd, which is not installed here;
the client side under test (fabricd.deploy.hostfanout, or OpenSSH's ssh client driven by Ansible in
bench/fleet_fanout.py) does not know the difference. The client's stdin is passed to the command.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh


def client_identity(path: Path) -> str:
    """A fresh ed25519 client key: writes the private key to ``path`` (0600, for ``--identity``) and returns the
    public key line that :class:`SshHosts` accepts."""
    key = asyncssh.generate_private_key("ssh-ed25519")
    path.write_bytes(key.export_private_key())
    path.chmod(0o600)
    return str(key.export_public_key("openssh").decode())


@dataclass
class SshHost:
    name: str
    port: int
    host_key: asyncssh.SSHKey


class SshHosts:
    """``with SshHosts(client_pub, tmp) as hosts: hosts.add("gpu1", env)`` -> a listener on 127.0.0.1."""

    def __init__(self, client_public_key: str, workdir: Path) -> None:
        self.client_key = asyncssh.import_authorized_keys(client_public_key)
        self.workdir = workdir
        self.hosts: dict[str, SshHost] = {}
        self.commands: list[tuple[str, str]] = []
        self._servers: list[Any] = []
        self._procs: set[Any] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="ssh-hosts")

    def __enter__(self) -> SshHosts:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            for s in self._servers:
                s.close()
                await s.wait_closed()
            for p in list(self._procs):  # commands whose client went away (killed by the test)
                if p.returncode is None:
                    p.kill()
                    await p.wait()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def add(self, name: str, env: Mapping[str, str]) -> SshHost:
        key = asyncssh.generate_private_key("ssh-ed25519")
        authorized = self.client_key
        record = self.commands
        procs = self._procs

        async def run(process: asyncssh.SSHServerProcess[str]) -> None:
            record.append((name, process.command or ""))
            proc = await asyncio.create_subprocess_shell(
                process.command or "true",
                env=dict(env),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            procs.add(proc)

            async def feed() -> None:  # the client's stdin until EOF (Ansible pipelines its modules this way)
                assert proc.stdin is not None
                try:
                    while data := await process.stdin.read(65536):
                        proc.stdin.write(data.encode() if isinstance(data, str) else data)
                        await proc.stdin.drain()
                except (asyncssh.Error, BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    proc.stdin.close()

            feeder = asyncio.ensure_future(feed())
            out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())  # type: ignore[union-attr]
            await proc.wait()
            procs.discard(proc)
            feeder.cancel()
            process.stdout.write(out.decode(errors="replace"))
            process.stderr.write(err.decode(errors="replace"))
            process.exit(proc.returncode or 0)

        class Server(asyncssh.SSHServer):
            def begin_auth(self, username: str) -> bool:
                self._conn.set_authorized_keys(authorized)
                return True

            def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
                self._conn = conn

            def password_auth_supported(self) -> bool:
                return False

        async def start() -> Any:
            return await asyncssh.create_server(
                Server, "127.0.0.1", 0, server_host_keys=[key], process_factory=run, encoding="utf-8"
            )

        server = asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        self._servers.append(server)
        port = server.sockets[0].getsockname()[1]
        host = self.hosts[name] = SshHost(name, port, key)
        return host

    def known_hosts(self, path: Path, *, wrong: frozenset[str] = frozenset()) -> Path:
        """A known_hosts file with every host's key; hosts in ``wrong`` get some other key (an impostor)."""
        lines = []
        for h in self.hosts.values():
            key = asyncssh.generate_private_key("ssh-ed25519") if h.name in wrong else h.host_key
            lines.append(f"[127.0.0.1]:{h.port} " + key.export_public_key("openssh").decode().strip())
        path.write_text("\n".join(lines) + "\n")
        return path
