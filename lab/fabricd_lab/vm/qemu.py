"""Boot and stop lab VMs with qemu-system-x86_64, and pick the accelerator that really works here.

Boot line (measured on the project's CI-class machine): ``-cpu max -smp 1 -m 1024``, Debian's kernel and initrd given
directly (no bootloader), the shared ext4 image with ``snapshot=on`` (writes go to a temporary overlay, so both VMs
use one pristine file), ``clocksource=tsc tsc=reliable`` (without it perftest's MHz calibration fails under TCG and
every bandwidth reads 0), and a virtio-net NIC on a wire (:attr:`VmSpec.wire`): by default one end of a unix
socketpair passed as ``-netdev socket,fd=`` (frames are never dropped; a full socket back-pressures the sender), or
``-netdev socket,udp=``, each Ethernet frame one UDP datagram between two ports on 127.0.0.1 (``--wire udp``).

Each VM also gets a virtio-serial port for qemu-guest-agent (``<run>/<role>.qga``), a QMP monitor
(``<run>/<role>.qmp``) used to power it off, its serial console in ``<run>/<role>.serial`` and a 9p share of
``<run>/share`` mounted at ``/mnt/fabricd`` in the guest.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fabricd.errors import UsageError

from .image import Image, VmError

log = logging.getLogger(__name__)

QEMU = "qemu-system-x86_64"
KVM_PROBE_TIMEOUT_S = 8.0
"""How long the KVM probe waits for the kernel's first console line (a working KVM prints it in well under 1 s)."""


@dataclass(frozen=True)
class VmSpec:
    """One VM to boot. ``role`` is ``a`` or ``b``; ``hostname`` is the inventory host it plays."""

    role: str
    hostname: str
    mac: str
    run_dir: Path
    wire: str = "stream"
    """``stream``: one end of a unix socketpair (lossless, back-pressured); ``udp``: datagrams on 127.0.0.1."""
    wire_fd: int | None = None
    wire_local_port: int = 0
    wire_peer_port: int = 0
    accel: str = "tcg"
    memory_mib: int = 1024
    cpus: int = 1

    @property
    def qga_socket(self) -> Path:
        return self.run_dir / f"{self.role}.qga"

    @property
    def qmp_socket(self) -> Path:
        return self.run_dir / f"{self.role}.qmp"

    @property
    def serial_log(self) -> Path:
        return self.run_dir / f"{self.role}.serial"

    @property
    def qemu_log(self) -> Path:
        return self.run_dir / f"{self.role}.qemu.log"

    @property
    def pidfile(self) -> Path:
        return self.run_dir / f"{self.role}.pid"

    @property
    def share_dir(self) -> Path:
        return self.run_dir / "share"


def qemu_argv(spec: VmSpec, image: Image) -> list[str]:
    """The qemu command line for ``spec`` (pure; unit-tested)."""
    cpu = "host" if spec.accel == "kvm" else "max"
    append = (
        "root=/dev/vda rw rootfstype=ext4 console=ttyS0 panic=-1 quiet clocksource=tsc tsc=reliable "
        f"init=/sbin/fabricd-init fabricd.name={spec.hostname} fabricd.role={spec.role}"
    )
    return [
        QEMU,
        "-name",
        f"fabricd-lab-{spec.role},process=fabricd-lab-{spec.role}",
        "-accel",
        spec.accel,
        "-cpu",
        cpu,
        "-smp",
        str(spec.cpus),
        "-m",
        str(spec.memory_mib),
        "-nodefaults",
        "-display",
        "none",
        "-no-reboot",
        "-serial",
        f"file:{spec.serial_log}",
        "-kernel",
        str(image.kernel),
        "-initrd",
        str(image.initrd),
        "-append",
        append,
        "-drive",
        f"file={image.rootfs},format=raw,if=virtio,snapshot=on",
        "-virtfs",
        f"local,path={spec.share_dir},mount_tag=share,security_model=none",
        "-chardev",
        f"socket,id=qga0,path={spec.qga_socket},server=on,wait=off",
        "-device",
        "virtio-serial-pci",
        "-device",
        "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0",
        "-qmp",
        f"unix:{spec.qmp_socket},server=on,wait=off",
        "-pidfile",
        str(spec.pidfile),
        "-netdev",
        _netdev(spec),
        "-device",
        f"virtio-net-pci,netdev=n0,mac={spec.mac},host_mtu=9000",
    ]


def _netdev(spec: VmSpec) -> str:
    if spec.wire == "stream":
        if spec.wire_fd is None:
            raise VmError("internal: a stream wire needs a socket fd")
        return f"socket,id=n0,fd={spec.wire_fd}"
    if spec.wire == "udp":
        return f"socket,id=n0,udp=127.0.0.1:{spec.wire_peer_port},localaddr=127.0.0.1:{spec.wire_local_port}"
    raise UsageError(f"unknown lab wire {spec.wire!r}", hint="use --wire stream or --wire udp")


def require_qemu() -> str:
    """Path of qemu-system-x86_64, or a UsageError saying how to install it."""
    path = shutil.which(QEMU)
    if path is None:
        raise UsageError(
            f"{QEMU} is not installed",
            hint="as root: apt-get install qemu-system-x86 qemu-utils debootstrap",
        )
    return path


def qemu_version() -> str:
    """``7.2.22`` etc. (first line of ``qemu-system-x86_64 --version``)."""
    out = subprocess.run([require_qemu(), "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else "unknown"


def free_udp_ports(count: int) -> list[int]:
    """``count`` distinct UDP ports on 127.0.0.1 that were free a moment ago (bound to port 0, then released)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass(frozen=True)
class AccelChoice:
    """The accelerator to use and why (shown by ``up`` and ``status``)."""

    accel: str
    reason: str


def probe_kvm(image: Image, *, timeout_s: float = KVM_PROBE_TIMEOUT_S) -> AccelChoice:
    """Boot the lab kernel under KVM for at most ``timeout_s`` and watch for its first console line.

    ``/dev/kvm`` existing is not enough: on this machine it is ``kvm_pvm`` (nested PVM), which only runs PVM-enabled
    guest kernels; a stock Debian kernel spins in its decompressor forever (lab.md). Returns kvm only when the kernel
    printed ``Linux version`` in time, else tcg with the reason.
    """
    if not os.path.exists("/dev/kvm"):
        return AccelChoice("tcg", "no /dev/kvm on this host")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return AccelChoice("tcg", "/dev/kvm is not accessible to this user")
    argv = [
        require_qemu(),
        "-accel",
        "kvm",
        "-cpu",
        "host",
        "-m",
        "256",
        "-nodefaults",
        "-display",
        "none",
        "-no-reboot",
        "-serial",
        "stdio",
        "-kernel",
        str(image.kernel),
        "-append",
        "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 loglevel=7",
    ]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    seen = b""
    try:
        while time.monotonic() - t0 < timeout_s:
            chunk = proc.stdout.read(65536)
            if chunk:
                seen += chunk
                if b"Linux version" in seen:
                    return AccelChoice("kvm", f"KVM booted the lab kernel in {time.monotonic() - t0:.1f}s")
            if proc.poll() is not None:
                tail = seen.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                return AccelChoice("tcg", f"qemu -accel kvm failed at once ({tail[0][:160]})")
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    pvm = (
        " (/dev/kvm is kvm_pvm, nested PVM, which runs only PVM-enabled guest kernels)"
        if os.path.isdir("/sys/module/kvm_pvm")
        else ""
    )
    return AccelChoice("tcg", f"KVM did not boot the stock kernel within {timeout_s:.0f}s{pvm}")


def choose_accel(image: Image, state_vm_dir: Path, *, forced: str | None = None) -> AccelChoice:
    """``forced`` (kvm|tcg) wins; else the cached probe result for this host kernel, qemu and image; else probe."""
    if forced:
        if forced not in ("kvm", "tcg"):
            raise UsageError(f"unknown accelerator {forced!r}", hint="use --accel kvm or --accel tcg")
        return AccelChoice(forced, "chosen with --accel / FABRICD_VM_ACCEL")
    key = f"{os.uname().release}|{qemu_version()}|{image.manifest.get('key', image.dir.name)}"
    cache = state_vm_dir / "accel.json"
    try:
        cached = json.loads(cache.read_text())
        if cached.get("key") == key:
            return AccelChoice(cached["accel"], cached["reason"] + " (probe cached)")
    except (OSError, ValueError, KeyError):
        pass
    choice = probe_kvm(image)
    state_vm_dir.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "accel": choice.accel, "reason": choice.reason}) + "\n")
    return choice


def launch(spec: VmSpec, image: Image) -> int:
    """Start one VM in its own session (it outlives this process); return the qemu pid."""
    spec.share_dir.mkdir(parents=True, exist_ok=True)
    for stale in (spec.qga_socket, spec.qmp_socket, spec.pidfile):
        stale.unlink(missing_ok=True)
    argv = qemu_argv(spec, image)
    (spec.run_dir / f"{spec.role}.argv.json").write_text(json.dumps(argv) + "\n")
    with spec.qemu_log.open("w") as out:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(spec.wire_fd,) if spec.wire_fd is not None else (),
        )
    deadline = time.monotonic() + 5
    while not pid_alive(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # until the child has exec'd qemu (pid_alive checks the command line)
    if proc.poll() is not None:
        tail = spec.qemu_log.read_text(errors="replace").strip()[-600:]
        raise VmError(
            f"qemu for VM {spec.role} ({spec.hostname}) exited at once (rc {proc.returncode}): {tail}",
            hint=f"the full command line is in {spec.run_dir / (spec.role + '.argv.json')}",
        )
    log.info("started VM %s (%s) pid %s", spec.role, spec.hostname, proc.pid)
    return proc.pid


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs and is a qemu process (not a zombie, not a recycled pid)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            return False
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"qemu-system" in fh.read()
    except (OSError, IndexError):
        return False


def qmp_quit(qmp_socket: Path, *, timeout_s: float = 5.0) -> bool:
    """Ask qemu to exit through its QMP monitor (the image is snapshot=on: nothing to flush). True if sent."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(str(qmp_socket))
            s.recv(65536)  # greeting
            s.sendall(b'{"execute": "qmp_capabilities"}\n')
            s.recv(65536)
            s.sendall(b'{"execute": "quit"}\n')
            with contextlib.suppress(OSError):
                s.recv(65536)
        return True
    except OSError as exc:
        log.debug("QMP quit via %s failed: %s", qmp_socket, exc)
        return False


def stop(pid: int, qmp_socket: Path, *, timeout_s: float = 10.0) -> str:
    """Stop a VM: QMP quit, then SIGTERM, then SIGKILL. Returns how it ended (for messages)."""
    if not pid_alive(pid):
        return "not running"
    how = "quit via QMP" if qmp_quit(qmp_socket) else ""
    for sig, label in ((None, how), (signal.SIGTERM, "SIGTERM"), (signal.SIGKILL, "SIGKILL")):
        if sig is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return label or "exited"
        deadline = time.monotonic() + timeout_s / 2
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                _reap(pid)
                return label or "exited"
            time.sleep(0.1)
    if pid_alive(pid):
        raise VmError(f"qemu pid {pid} survived SIGKILL", hint=f"check 'ps -p {pid}'")
    return "SIGKILL"


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
