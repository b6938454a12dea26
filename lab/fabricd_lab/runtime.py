"""Run a set of simulated switches on one asyncio loop: in the foreground (the ``lab up`` daemon) or in a background
thread (tests, benchmarks)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import asyncssh

from fabricd.model import Fabric, Platform, Switch

from .cabling import neighbors_of
from .device import DeviceSpec, SimSwitch
from .faults import Fault
from .ssh import generate_host_key, known_hosts_entry, listen

if TYPE_CHECKING:
    from .gnmi import GnmiTarget, LabTls

log = logging.getLogger(__name__)
T = TypeVar("T")


def switch_class(platform: Platform) -> type[SimSwitch]:
    """The simulator class of a platform id."""
    from .eos import EosSwitch
    from .nvue import NvueSwitch
    from .nxos import NxosSwitch
    from .sonic import SonicSwitch

    classes: dict[Platform, type[SimSwitch]] = {
        Platform.ARISTA_EOS: EosSwitch,
        Platform.CISCO_NXOS: NxosSwitch,
        Platform.SONIC: SonicSwitch,
        Platform.CUMULUS_NVUE: NvueSwitch,
    }
    return classes[platform]


def spec_for(
    switch: Switch,
    *,
    password: str,
    faults: Iterable[Fault] = (),
    port: int | None = None,
    host: str | None = None,
    fabric: Fabric | None = None,
) -> DeviceSpec:
    """A lab spec from an inventory switch; ``port``/``host`` override its management address (tests use port 0).
    With ``fabric``, the switch hears its inventory neighbours over LLDP (``swap-cables`` faults applied)."""
    faults = tuple(faults)
    return DeviceSpec(
        name=switch.name,
        platform=switch.platform,
        host=host or switch.mgmt.host,
        port=switch.mgmt.port if port is None else port,
        username=switch.credentials.username,
        password=password,
        ports=tuple((p.name, p.speed.bps) for p in switch.ports),
        faults=tuple(f for f in faults if f.device == switch.name),
        neighbors=neighbors_of(fabric, switch.name, faults) if fabric is not None else (),
    )


@dataclass(frozen=True)
class Endpoint:
    """Where one simulated switch listens."""

    name: str
    platform: Platform
    host: str
    port: int
    username: str
    gnmi_port: int | None = None


class Lab:
    """Simulated switches sharing one host key and one event loop. With ``gnmi_tls``, every switch whose spec has a
    ``gnmi_port`` also serves gNMI (:mod:`fabricd_lab.gnmi`) with that TLS material."""

    def __init__(
        self, specs: Iterable[DeviceSpec], *, host_key: asyncssh.SSHKey | None = None, gnmi_tls: LabTls | None = None
    ) -> None:
        self.host_key = host_key or generate_host_key()
        self.switches: dict[str, SimSwitch] = {}
        for spec in specs:
            self.switches[spec.name] = switch_class(spec.platform)(spec)
        self._acceptors: list[asyncssh.SSHAcceptor] = []
        self.endpoints: dict[str, Endpoint] = {}
        self.gnmi_tls = gnmi_tls
        self.gnmi_targets: dict[str, GnmiTarget] = {}
        self._gnmi_servers: list[Any] = []

    async def start(self) -> None:
        for name, sw in self.switches.items():
            acceptor, port = await listen(sw, self.host_key)
            self._acceptors.append(acceptor)
            gnmi_port = None
            if self.gnmi_tls is not None and sw.spec.gnmi_port is not None:
                from .gnmi import serve

                server, gnmi_port, target = await serve(
                    sw, self.gnmi_tls, password=sw.spec.password, host=sw.spec.host, port=sw.spec.gnmi_port
                )
                self._gnmi_servers.append(server)
                self.gnmi_targets[name] = target
            self.endpoints[name] = Endpoint(name, sw.platform, sw.spec.host, port, sw.spec.username, gnmi_port)
        log.info("lab: %d switches listening (%d with gNMI)", len(self.switches), len(self._gnmi_servers))

    async def stop(self) -> None:
        for acceptor in self._acceptors:
            acceptor.close()
        for acceptor in self._acceptors:
            await acceptor.wait_closed()
        self._acceptors.clear()
        for server in self._gnmi_servers:
            await server.stop(grace=0.5)
        self._gnmi_servers.clear()

    def known_hosts(self) -> str:
        return "".join(known_hosts_entry(e.host, e.port, self.host_key) + "\n" for e in self.endpoints.values())


class LabThread:
    """A :class:`Lab` on its own event loop in a daemon thread: ``with LabThread(specs) as lab: ...``.

    :meth:`call` runs a function on the loop thread (the simulators are not thread-safe) and returns its result.
    """

    def __init__(
        self, specs: Iterable[DeviceSpec], *, host_key: asyncssh.SSHKey | None = None, gnmi_tls: LabTls | None = None
    ) -> None:
        self.lab = Lab(specs, host_key=host_key, gnmi_tls=gnmi_tls)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="fabricd-lab", daemon=True)
        self._ready: Future[None] = Future()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.lab.start())
            self._ready.set_result(None)
        except BaseException as exc:
            self._ready.set_exception(exc)
            return
        self._loop.run_forever()
        self._loop.run_until_complete(self.lab.stop())
        if self.lab.gnmi_tls is not None:  # the gNMI servers' RPC tasks end after their stop: let them, then close
            from fabricd.platforms.gnmi import settle

            self._loop.run_until_complete(settle())
        self._loop.close()

    def __enter__(self) -> LabThread:
        self._thread.start()
        self._ready.result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def call(self, fn: Callable[[], T]) -> T:
        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=30)

    def switch(self, name: str) -> SimSwitch:
        return self.lab.switches[name]

    def endpoint(self, name: str) -> Endpoint:
        return self.lab.endpoints[name]

    def running_config(self, name: str) -> str:
        sw = self.lab.switches[name]
        return self.call(sw.running_config)

    def known_hosts(self) -> str:
        return self.lab.known_hosts()
