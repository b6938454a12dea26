"""``fabricd lab vm up | down | status | exec``: two Soft-RoCE endpoints as two VMs on one virtual wire.

Why two VMs and not one VM with namespaces (lab.md): rxe in Linux 6.1 opens its RoCE UDP socket (port 4791) in the
initial network namespace only, so an rxe device on a veth inside another namespace would not receive its packets.
Two VMs give two kernels, a real wire and independent counters on each side.

Each VM *plays* an inventory host: its virtio NIC is renamed to the host's NIC netdev, an rxe device named after the
NIC's ``rdma_device`` is added on it, the RDMA VLAN (``<netdev>.<vid>``, 8021q) is created when the NIC has one, and
the NIC's address goes on the VLAN (or on the NIC). Commands reach the guests through qemu-guest-agent, so no login,
no SSH and no management network are needed.

State lives in ``<state_dir>/vm/run/<name>/`` (``instance.json``, consoles, sockets, the share with fabricd's code).
"""

from __future__ import annotations

import fcntl
import functools
import ipaddress
import json
import logging
import os
import shlex
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabricd.errors import UsageError
from fabricd.intent.host import vlan_netdev_name
from fabricd.inventory import Inventory
from fabricd.model import Fabric, Host, Nic
from fabricd.model.topology import split_endpoint
from fabricd.traffic.remote import CommandResult

from . import qemu
from .image import (
    Image,
    ImageRecipe,
    VmError,
    build_image,
    copy_fabricd_tree,
    find_image,
    prune_images,
    vm_state_dir,
)
from .qga import AgentError, GuestAgent

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

DEFAULT_NAME = "lab"
ROLES = ("a", "b")
BOOT_TIMEOUT_S = float(os.environ.get("FABRICD_VM_BOOT_TIMEOUT", "300"))
"""Seconds to wait for the guest agent after starting qemu (TCG boot is 10-15 s idle, minutes on a loaded host)."""
SETUP_TIMEOUT_S = 120.0
GUEST_SHARE = "/mnt/fabricd"
"""Where the guests mount ``<run>/share`` (fabricd's code is in ``code/`` there)."""


@dataclass(frozen=True)
class Endpoint:
    """One lab VM as the inventory host it plays. Addresses are ``ip/prefix`` strings."""

    role: str
    host: str
    netdev: str
    rdma_device: str
    rdma_port: int
    ip: str
    vlan: int | None
    ip_netdev: str
    mtu: int
    mac: str
    peer_ip: str

    @property
    def address(self) -> str:
        """The bare IPv4 address (no prefix)."""
        return str(ipaddress.IPv4Interface(self.ip).ip)


@dataclass
class Instance:
    """A running (or stopped) pair of lab VMs, as saved in ``instance.json``."""

    name: str
    run_dir: Path
    accel: str
    accel_reason: str
    image_dir: str
    image_key: str
    inventory: str
    endpoints: list[Endpoint]
    pids: dict[str, int]
    wire: str
    wire_ports: dict[str, int]
    started_at: float
    timings: dict[str, float] = field(default_factory=dict)
    stopped: bool = False

    def save(self) -> None:
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        tmp = self.run_dir / "instance.json.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(self.run_dir / "instance.json")

    @classmethod
    def load(cls, run_dir: Path) -> Instance:
        data = json.loads((run_dir / "instance.json").read_text())
        data["run_dir"] = Path(data["run_dir"])
        data["endpoints"] = [Endpoint(**e) for e in data["endpoints"]]
        data.setdefault("wire", "udp")
        return cls(**data)

    def endpoint(self, which: str) -> Endpoint:
        """The endpoint by role (``a``/``b``) or inventory host name; UsageError listing the choices otherwise."""
        for ep in self.endpoints:
            if which in (ep.role, ep.host):
                return ep
        names = ", ".join(f"{e.role}/{e.host}" for e in self.endpoints)
        raise UsageError(f"lab VM '{self.name}' has no endpoint {which!r}", hint=f"use one of: {names}")

    def agent(self, which: str, *, io_timeout_s: float = 30.0) -> GuestAgent:
        ep = self.endpoint(which)
        return GuestAgent(self.run_dir / f"{ep.role}.qga", name=ep.host, io_timeout_s=io_timeout_s)

    def runner(self, which: str) -> VmRunner:
        """A :class:`~fabricd.traffic.remote.Runner` for the endpoint (role or host name)."""
        return VmRunner(self.agent(which))

    def alive(self) -> dict[str, bool]:
        return {role: qemu.pid_alive(pid) for role, pid in self.pids.items()}

    def share(self, name: str, data: bytes | str) -> str:
        """Put a file in the share both guests mount; returns its path in the guests (``/mnt/fabricd/<name>``)."""
        if "/" in name or name.startswith("."):
            raise UsageError(f"share file name {name!r} must be a plain file name")
        path = self.run_dir / "share" / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return f"{GUEST_SHARE}/{name}"


class _StartedInGuest:
    def __init__(self, agent: GuestAgent, pid: int, argv: Sequence[str]) -> None:
        self.agent, self.pid, self.argv, self.t0 = agent, pid, tuple(argv), time.monotonic()

    def wait(self, timeout_s: float) -> CommandResult:
        return self.agent.wait(self.pid, self.argv, timeout_s=timeout_s, started=self.t0)

    def kill(self) -> None:
        self.agent.kill(self.pid)


class VmRunner:
    """Runs commands in one lab guest through its agent (implements :class:`fabricd.traffic.remote.Runner`)."""

    traffic_command: tuple[str, ...] = ("fabricd-traffic",)
    """The image's wrapper for ``python3 -m fabricd.cli.traffic`` (4 s to start under TCG instead of 20 s)."""

    def __init__(self, agent: GuestAgent) -> None:
        self.agent = agent
        self.name = agent.name

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        return self.agent.run(argv, timeout_s=timeout_s, stdin=stdin, env=env)

    def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> _StartedInGuest:
        return _StartedInGuest(self.agent, self.agent.start(argv, env=env), argv)


# ----------------------------------------------------------------------------------------------------------------
# Endpoints from the inventory (pure)
# ----------------------------------------------------------------------------------------------------------------


def _rdma_nic(host: Host) -> Nic | None:
    return next((n for n in host.nics if n.rdma_device and n.ip is not None), None)


def _leaf_of(nic: Nic) -> str | None:
    if not nic.peer:
        return None
    try:
        return split_endpoint(nic.peer)[0]
    except ValueError:
        return None


def pick_hosts(fabric: Fabric, wanted: Sequence[str] = ()) -> tuple[Host, Host]:
    """The two hosts the VMs play: ``wanted`` (exactly two names) or, by default, the first RDMA host and the first
    RDMA host cabled to another leaf (so traffic would cross the spine on the real fabric)."""
    rdma_hosts = [h for h in fabric.hosts if _rdma_nic(h) is not None]
    if wanted:
        if len(wanted) != 2 or wanted[0] == wanted[1]:
            raise UsageError(
                f"the lab has two endpoints; got --host {' --host '.join(wanted)}",
                hint="give --host twice with two different inventory hosts, or omit it",
            )
        picked = []
        for name in wanted:
            host = fabric.host(name)
            if host is None:
                known = ", ".join(h.name for h in fabric.hosts) or "none"
                raise UsageError(f"host {name!r} is not in the inventory", hint=f"known hosts: {known}")
            if _rdma_nic(host) is None:
                raise UsageError(
                    f"host {name!r} has no NIC with both rdma_device and ip set",
                    hint="the lab VM needs an RDMA device name and an address to configure",
                )
            picked.append(host)
        return picked[0], picked[1]
    if len(rdma_hosts) < 2:
        raise UsageError(
            f"the inventory has {len(rdma_hosts)} host(s) with an RDMA NIC and an address; the lab needs two",
            hint="add hosts with nics[].rdma_device and nics[].ip, or start from `fabricd init --example softroce DIR`",
        )
    first = rdma_hosts[0]
    first_leaf = _leaf_of(_rdma_nic(first))  # type: ignore[arg-type]
    other = next((h for h in rdma_hosts[1:] if _leaf_of(_rdma_nic(h)) != first_leaf), rdma_hosts[1])  # type: ignore[arg-type]
    return first, other


def endpoints_for(fabric: Fabric, wanted: Sequence[str] = ()) -> list[Endpoint]:
    """The two endpoints (roles a and b) for the hosts :func:`pick_hosts` chooses."""
    hosts = pick_hosts(fabric, wanted)
    nics = [_rdma_nic(h) for h in hosts]
    out = []
    for i, (host, nic) in enumerate(zip(hosts, nics, strict=True)):
        assert nic is not None and nic.ip is not None and nic.rdma_device is not None
        peer = nics[1 - i]
        assert peer is not None and peer.ip is not None
        if peer.ip.ip == nic.ip.ip:
            raise UsageError(
                f"hosts {hosts[0].name} and {hosts[1].name} have the same address {nic.ip.ip}",
                hint="give each host's NIC its own ip in the inventory",
            )
        vlan_dev = vlan_netdev_name(nic.netdev, nic.vlan) if nic.vlan is not None else None
        out.append(
            Endpoint(
                role=ROLES[i],
                host=host.name,
                netdev=nic.netdev,
                rdma_device=nic.rdma_device,
                rdma_port=nic.rdma_port,
                ip=str(nic.ip),
                vlan=nic.vlan,
                ip_netdev=vlan_dev or nic.netdev,
                mtu=nic.mtu,
                mac=f"52:54:00:fd:00:{0x0A + i:02x}",
                peer_ip=str(peer.ip.ip),
            )
        )
    return out


def setup_script(ep: Endpoint) -> str:
    """The bash script that turns a booted guest into ``ep``'s host (pure; every value is shell-quoted).

    Order: modules, rename the NIC found by MAC, MTU, VLAN, address (+ a /32 route to the peer when it is in another
    subnet, so any addressing works on the one wire), rxe device, then wait for the port to be ACTIVE with a GID for
    the address (RoCE v2 IPv4-mapped entry), which is what traffic needs.
    """
    q = shlex.quote
    iface = ipaddress.IPv4Interface(ep.ip)
    peer_in_subnet = ipaddress.IPv4Address(ep.peer_ip) in iface.network
    mapped = "0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}".format(*iface.ip.packed)
    lines = [
        "set -eu",
        "modprobe rdma_rxe",
        "modprobe 8021q",
        "modprobe rdma_cm || true",  # RDMA-CM's configfs (default_roce_tos/mode) as on a real host
        f"mac={q(ep.mac)}; want={q(ep.netdev)}",
        'cur=""; for d in /sys/class/net/*; do [ "$(cat "$d/address")" = "$mac" ] && cur=${d##*/}; done',
        '[ -n "$cur" ] || { echo "no NIC with MAC $mac" >&2; exit 3; }',
        'if [ "$cur" != "$want" ]; then ip link set "$cur" down; ip link set "$cur" name "$want"; fi',
        f"ip link set {q(ep.netdev)} mtu {ep.mtu} txqueuelen 10000 up",
    ]
    if ep.vlan is not None:
        lines += [
            f"ip link add link {q(ep.netdev)} name {q(ep.ip_netdev)} type vlan id {ep.vlan}",
            f"ip link set {q(ep.ip_netdev)} mtu {ep.mtu} up",
        ]
    lines.append(f"ip addr add {q(ep.ip)} dev {q(ep.ip_netdev)}")
    if not peer_in_subnet:
        lines.append(f"ip route add {q(ep.peer_ip)}/32 dev {q(ep.ip_netdev)}")
    lines += [
        f"rdma link add {q(ep.rdma_device)} type rxe netdev {q(ep.netdev)}",
        f"port=/sys/class/infiniband/{q(ep.rdma_device)}/ports/{ep.rdma_port}",
        f"want_gid={q(mapped)}",
        "for i in $(seq 300); do",
        '  if grep -q ACTIVE "$port/state" && grep -qx "$want_gid" "$port"/gids/[0-9] "$port"/gids/[0-9][0-9] \\',
        "     2>/dev/null; then break; fi",
        "  sleep 0.1",
        "done",
        'grep -q ACTIVE "$port/state" || { echo "rxe port not ACTIVE: $(cat "$port/state")" >&2; exit 3; }',
        'echo "ready: $(cat "$port/state") after ${i} polls"',
    ]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# up / down / status / exec
# ----------------------------------------------------------------------------------------------------------------


def run_dir(name: str = DEFAULT_NAME, state: Path | None = None) -> Path:
    if not name.replace("-", "").replace("_", "").isalnum():
        raise UsageError(f"lab VM name {name!r} must be letters, digits, - and _", hint="e.g. --name lab")
    return vm_state_dir(state) / "run" / name


@contextmanager
def _instance_lock(rdir: Path) -> Iterator[None]:
    rdir.parent.mkdir(parents=True, exist_ok=True)
    with (rdir.parent / f"{rdir.name}.lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load(name: str = DEFAULT_NAME, state: Path | None = None) -> Instance | None:
    """The saved instance ``name`` (running or stopped), or None when it was never started."""
    rdir = run_dir(name, state)
    if not (rdir / "instance.json").is_file():
        return None
    return Instance.load(rdir)


def require_running(name: str = DEFAULT_NAME, state: Path | None = None) -> Instance:
    """The running instance ``name``; a UsageError saying to run ``fabricd lab vm up`` otherwise."""
    inst = load(name, state)
    if inst is None or inst.stopped or not all(inst.alive().values()):
        raise UsageError(
            f"the lab VMs '{name}' are not running",
            hint="start them with 'fabricd lab vm up'" + ("" if name == DEFAULT_NAME else f" --name {name}"),
        )
    return inst


@dataclass(frozen=True)
class VmOptions:
    """How the two VMs run: the accelerator (None: the best available here), memory and vCPUs of each, and the lab
    wire between them (``stream``: a lossless unix socketpair; ``udp``: lossy)."""

    accel: str | None = None
    memory_mib: int = 1024
    cpus: int = 1
    wire: str = "stream"


def up(
    inventory: Inventory,
    *,
    recipe: ImageRecipe,
    hosts: Sequence[str] = (),
    name: str = DEFAULT_NAME,
    state: Path | None = None,
    vm: VmOptions = VmOptions(),
    progress: Progress = log.info,
) -> Instance:
    """Boot the two endpoints (building the image first if it is not cached) and configure them.

    Idempotent: when the instance already runs with the same endpoints, it is returned as is. Any failure stops
    the VMs it started and raises VmError with the console tail.
    """
    endpoints = endpoints_for(inventory.fabric, hosts)
    qemu.require_qemu()
    rdir = run_dir(name, state)
    with _instance_lock(rdir):
        existing = load(name, state)
        if existing is not None and not existing.stopped and all(existing.alive().values()):
            if [e.host for e in existing.endpoints] == [e.host for e in endpoints]:
                progress(
                    f"lab VMs '{name}' already running ({existing.endpoints[0].host}, "
                    f"{existing.endpoints[1].host}); 'fabricd lab vm down' first to restart"
                )
                return existing
            raise UsageError(
                f"lab VMs '{name}' already run as {', '.join(e.host for e in existing.endpoints)}",
                hint=f"run 'fabricd lab vm down{'' if name == DEFAULT_NAME else ' --name ' + name}' first, "
                "or use another --name",
            )
        if existing is not None:
            _stop_all(existing)
        image = find_image(recipe, state)
        if image is None:
            progress("no cached lab image for this recipe: building it (first time ~4.5 min, then cached)")
            image = build_image(recipe, state=state, progress=progress)
        else:
            for old in prune_images(image.dir.name, vm_state_dir(state)):
                progress(f"removed the superseded image {old}")
        return _boot(image, endpoints, inventory, rdir, name=name, state=state, vm=vm, progress=progress)


def _boot(
    image: Image,
    endpoints: list[Endpoint],
    inventory: Inventory,
    rdir: Path,
    *,
    name: str,
    state: Path | None,
    vm: VmOptions,
    progress: Progress,
) -> Instance:
    """Launch both VMs on a fresh run dir, wait for their agents, set up each endpoint and check the wire; on any
    failure stop them and raise VmError with their console tails."""
    t0 = time.monotonic()
    choice = qemu.choose_accel(image, vm_state_dir(state), forced=vm.accel)
    progress(f"accelerator: {choice.accel.upper()} ({choice.reason})")
    _fresh_run_dir(rdir)
    pa = pb = 0
    fds: tuple[int, int] | tuple[None, None] = (None, None)
    if vm.wire == "udp":
        pa, pb = qemu.free_udp_ports(2)
    else:
        sa, sb = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fds = (sa.detach(), sb.detach())
    specs = [
        qemu.VmSpec(
            role=role,
            hostname=ep.host,
            mac=ep.mac,
            run_dir=rdir,
            wire=vm.wire,
            wire_fd=fd,
            wire_local_port=local,
            wire_peer_port=peer,
            accel=choice.accel,
            memory_mib=vm.memory_mib,
            cpus=vm.cpus,
        )
        for role, ep, fd, local, peer in (("a", endpoints[0], fds[0], pa, pb), ("b", endpoints[1], fds[1], pb, pa))
    ]
    inst = Instance(
        name=name,
        run_dir=rdir,
        accel=choice.accel,
        accel_reason=choice.reason,
        image_dir=str(image.dir),
        image_key=str(image.manifest.get("key", image.dir.name)),
        inventory=str(inventory.path),
        endpoints=endpoints,
        pids={},
        wire=vm.wire,
        wire_ports={"a": pa, "b": pb},
        started_at=time.time(),
    )
    try:
        try:
            for spec in specs:
                inst.pids[spec.role] = qemu.launch(spec, image)
        finally:
            for fd in fds:
                if fd is not None:
                    os.close(fd)  # the VMs hold their ends now
        inst.save()
        progress(
            f"booting {endpoints[0].host} (pid {inst.pids['a']}) and {endpoints[1].host} (pid {inst.pids['b']})"
            f" on {_wire_text(inst)}"
        )
        _bring_up(inst, t0, progress)
        progress(f"lab up in {inst.timings['up_s']:.1f}s ({choice.accel.upper()})")
        return inst
    except BaseException as exc:
        tails = "; ".join(f"{s.role} console: {_tail(s.serial_log)}" for s in specs)
        _stop_all(inst)
        if isinstance(exc, VmError | UsageError):
            if isinstance(exc, VmError):
                exc.message += f" [{tails}]"
            raise
        if isinstance(exc, Exception):
            raise VmError(f"lab VM boot failed: {type(exc).__name__}: {exc} [{tails}]") from exc
        raise


def _fresh_run_dir(rdir: Path) -> None:
    """The run dir without a previous boot's share and consoles, with this fabricd tree to share."""
    for stale in ("share", "a.serial", "b.serial"):
        p = rdir / stale
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    rdir.mkdir(parents=True, exist_ok=True)
    copy_fabricd_tree(rdir / "share" / "code")


def _bring_up(inst: Instance, t0: float, progress: Progress) -> None:
    """Wait for both guest agents, set up each endpoint (NIC, VLAN, address, rxe), ping over the lab wire; record
    the timings in the instance."""
    endpoints = inst.endpoints

    def wait_agent(role: str) -> float:
        pid = inst.pids[role]
        return inst.agent(role).wait_ready(timeout_s=BOOT_TIMEOUT_S, alive=lambda: qemu.pid_alive(pid))

    def configure(ep: Endpoint) -> CommandResult:
        return inst.agent(ep.role).run(["/bin/bash", "-s"], stdin=setup_script(ep).encode(), timeout_s=SETUP_TIMEOUT_S)

    waits = _parallel({ep.role: functools.partial(wait_agent, ep.role) for ep in endpoints})
    inst.timings["boot_s"] = round(time.monotonic() - t0, 1)
    progress(f"guests up in {inst.timings['boot_s']:.1f}s; configuring NIC, VLAN, address and rxe")
    t1 = time.monotonic()
    results = _parallel({ep.role: functools.partial(configure, ep) for ep in endpoints})
    for ep in endpoints:
        r = results[ep.role]
        if not r.ok:
            raise VmError(
                f"{ep.host}: endpoint setup failed (exit {r.rc}): {(r.stderr or r.stdout).strip()}",
                hint=f"inspect with 'fabricd lab vm exec {ep.role} -- dmesg'",
            )
    ping = inst.agent("a").run(["ping", "-c", "2", "-W", "3", "-i", "0.3", endpoints[1].address], timeout_s=30)
    if not ping.ok:
        raise VmError(
            f"{endpoints[0].host} cannot ping {endpoints[1].host} ({endpoints[1].address}) over the "
            f"lab wire: {ping.stdout.strip().splitlines()[-1:] or ping.stderr.strip()}"
        )
    inst.timings["setup_s"] = round(time.monotonic() - t1, 1)
    inst.timings["up_s"] = round(time.monotonic() - t0, 1)
    inst.timings.update({f"agent_{k}_s": round(v, 1) for k, v in waits.items()})
    inst.save()
    for ep in endpoints:
        vlan = f" VLAN {ep.vlan} ({ep.ip_netdev})" if ep.vlan is not None else ""
        progress(f"{ep.role}: {ep.host} {ep.ip} on {ep.netdev}{vlan}, rxe {ep.rdma_device}")


def _wire_text(inst: Instance) -> str:
    if inst.wire == "udp":
        return f"a UDP wire 127.0.0.1:{inst.wire_ports.get('a')} <-> 127.0.0.1:{inst.wire_ports.get('b')} (lossy)"
    return "a unix stream socketpair wire (lossless: back-pressure, no drops)"


def _tail(path: Path, n: int = 3) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no console log)"
    return " | ".join(lines[-n:]) or "(empty console)"


def _parallel(jobs: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run the callables in threads; return their results by key, re-raising the first error."""
    results: dict[str, Any] = {}
    errors: dict[str, BaseException] = {}

    def work(key: str, fn: Callable[[], Any]) -> None:
        try:
            results[key] = fn()
        except BaseException as exc:
            errors[key] = exc

    threads = [threading.Thread(target=work, args=(k, f), daemon=True) for k, f in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key in jobs:
        if key in errors:
            raise errors[key]
    return results


def _stop_all(inst: Instance) -> dict[str, str]:
    out = {}
    for role, pid in inst.pids.items():
        out[role] = qemu.stop(pid, inst.run_dir / f"{role}.qmp")
    inst.stopped = True
    if inst.run_dir.is_dir():
        inst.save()
        code = inst.run_dir / "share" / "code"
        if code.is_dir():
            shutil.rmtree(code)
    return out


def down(name: str = DEFAULT_NAME, state: Path | None = None) -> dict[str, str]:
    """Power both VMs off (QMP quit, then signals). Returns how each ended; {} when nothing was running."""
    rdir = run_dir(name, state)
    with _instance_lock(rdir):
        inst = load(name, state)
        if inst is None:
            return {}
        return _stop_all(inst)


def status(name: str = DEFAULT_NAME, state: Path | None = None, *, probe: bool = True) -> dict[str, Any]:
    """Instance state for ``status``: per endpoint, qemu alive, agent answering, rxe port state, uptime."""
    inst = load(name, state)
    if inst is None:
        return {"name": name, "state": "never started", "run_dir": str(run_dir(name, state))}
    alive = inst.alive()
    running = not inst.stopped and all(alive.values())
    out: dict[str, Any] = {
        "name": inst.name,
        "state": "running" if running else ("stopped" if inst.stopped or not any(alive.values()) else "degraded"),
        "accel": inst.accel,
        "accel_reason": inst.accel_reason,
        "image": inst.image_dir,
        "inventory": inst.inventory,
        "run_dir": str(inst.run_dir),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(inst.started_at)),
        "timings": inst.timings,
        "wire": _wire_text(inst),
        "endpoints": [],
    }
    for ep in inst.endpoints:
        info: dict[str, Any] = {
            **asdict(ep),
            "pid": inst.pids.get(ep.role),
            "qemu_alive": alive.get(ep.role, False),
            "console": str(inst.run_dir / f"{ep.role}.serial"),
        }
        if probe and running:
            script = (
                f"cut -d' ' -f1 /proc/uptime; cat /sys/class/infiniband/{shlex.quote(ep.rdma_device)}"
                f"/ports/{ep.rdma_port}/state 2>/dev/null || echo absent"
            )
            try:
                r = inst.agent(ep.role, io_timeout_s=5).run(["/bin/sh", "-c", script], timeout_s=10)
                lines = r.stdout.split("\n")
                info["agent"] = "ok"
                info["uptime_s"] = float(lines[0]) if lines and lines[0] else None
                info["rdma_port_state"] = lines[1].strip() if len(lines) > 1 else None
            except (AgentError, ValueError) as exc:
                info["agent"] = f"not answering: {exc}"
        out["endpoints"].append(info)
    return out


def exec_in(
    which: str,
    argv: Sequence[str],
    *,
    name: str = DEFAULT_NAME,
    state: Path | None = None,
    timeout_s: float = 300.0,
    stdin: bytes | None = None,
) -> CommandResult:
    """Run ``argv`` in endpoint ``which`` (role or host name) of the running instance."""
    if not argv:
        raise UsageError("no command given", hint="e.g. fabricd lab vm exec a -- rdma link show")
    inst = require_running(name, state)
    return inst.agent(which).run(argv, timeout_s=timeout_s, stdin=stdin)
