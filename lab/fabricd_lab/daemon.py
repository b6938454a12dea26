"""``fabricd lab up`` / ``down`` / ``status``: the simulators as a detached background process.

``up`` writes into ``<state_dir>/lab`` (mode 0700):

- ``password`` (0600): one random password for every lab switch;
- ``host_key`` (0600): the lab's ed25519 host key; ``known_hosts``: one line per switch (``[127.0.0.1]:port``);
- ``gnmi-ca.pem``: the CA of every switch's gNMI certificate (``gnmi-cert.pem``, ``gnmi-key.pem`` 0600); each switch
  serves gNMI on its inventory's ``telemetry.gnmi.port`` or, without one, a free port (``gnmi_port`` in lab.json);
- ``spec.json``: the switches and faults to simulate; ``lab.pid``; ``lab.json`` once every switch listens;
- ``lab.log``: the daemon's log; ``control.sock``: a Unix socket to drive counters and read configs.

- ``written.json``: the files below that ``up`` wrote outside this directory, which ``down`` removes.

fabricd itself reads none of this: the inventory says where a switch's password and known_hosts live
(``credentials.password_file``, ``credentials.known_hosts``; the lab inventory names
``${FABRICD_STATE_DIR}/lab/password`` and ``.../known_hosts``), and ``up`` writes the password and each switch's
known_hosts line into exactly those files, as an operator's tooling would on a real fabric. It refuses to
overwrite a file it did not write before (``~/.ssh/known_hosts`` named by mistake stays as it was). A switch whose
credentials name ``password_env`` instead gets the ``export`` line to run.

Then ``up`` starts ``python -m fabricd_lab.cli.lab_daemon --dir DIR`` (the entry point; the daemon is :func:`run`)
in a new session (detached from the terminal) and waits for ``lab.json``. ``down`` stops exactly that process: it checks
that the pid's command line is this daemon for this directory before signalling it, then removes the state files
(the log stays).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import asyncssh

from fabricd import settings
from fabricd.errors import FabricdError, UsageError
from fabricd.model import Fabric, Platform
from fabricd.safepath import private_fd, write_private

from .cabling import LabNeighbor, neighbors_of
from .counters import UnknownPortError
from .device import DeviceSpec
from .faults import Fault, FaultKind
from .latency import parse_latency
from .runtime import Lab
from .ssh import generate_host_key, known_hosts_entry

log = logging.getLogger(__name__)

LAB_STATE_FILE = "lab.json"
LAB_PID_FILE = "lab.pid"
LAB_KNOWN_HOSTS = "known_hosts"
LAB_PASSWORD_FILE = "password"
LAB_LOG_FILE = "lab.log"
LAB_CONTROL_SOCKET = "control.sock"
WRITTEN_FILE = "written.json"
SPEC_FILE = "spec.json"
HOST_KEY_FILE = "host_key"
GNMI_CA_FILE = "gnmi-ca.pem"
"""The CA that signed every lab switch's gNMI certificate (the lab inventory's ``telemetry.gnmi.tls_ca``)."""
GNMI_CERT_FILE = "gnmi-cert.pem"
GNMI_KEY_FILE = "gnmi-key.pem"
DAEMON_MODULE = "fabricd_lab.cli.lab_daemon"
"""The entry point ``start`` runs (``python -m``) and ``down`` recognises in the pid's command line."""


class LabError(FabricdError):
    """The lab could not be started, stopped or reached."""


def _pid_alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reap it if up() ran in this process (a zombie still answers kill -0)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def running_pid(state_dir: Path | None = None) -> int | None:
    """The pid of this state dir's lab daemon, if it runs (checked against its command line)."""
    d = lab_dir(state_dir)
    try:
        pid = int((d / LAB_PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    cmd = _cmdline(pid)
    if _pid_alive(pid) and DAEMON_MODULE in cmd and str(d) in cmd:
        return pid
    return None


def lab_dir(state_dir: Path | None = None) -> Path:
    """``<state_dir>/lab``: where ``fabricd lab up`` keeps its pid, host key, password and device list."""
    return (state_dir or settings.state_dir()) / "lab"


def _inventory_path(path: Path, switch: str, field: str) -> Path:
    try:
        return settings.expand_path(path)
    except settings.UnsetVariableError as exc:
        raise UsageError(f"{switch}: credentials.{field}: {exc}", hint=exc.hint) from None


def access_files(fabric: Fabric, password: str, key: asyncssh.SSHKey) -> dict[Path, str]:
    """What ``up`` writes for the inventory: each ``credentials.password_file`` (the password) and each
    ``credentials.known_hosts`` (one line per switch that names it), by expanded path."""
    files: dict[Path, list[str]] = {}
    for s in fabric.switches:
        creds = s.credentials
        if creds.password_file is not None:
            path = _inventory_path(creds.password_file, s.name, "password_file")
            if files.setdefault(path, [password]) != [password]:
                raise UsageError(
                    f"{s.name}: credentials.password_file {path} is also another switch's known_hosts",
                    hint="name different files for the password and the known_hosts",
                )
        if creds.known_hosts is not None:
            path = _inventory_path(creds.known_hosts, s.name, "known_hosts")
            lines = files.setdefault(path, [])
            if lines == [password]:
                raise UsageError(
                    f"{s.name}: credentials.known_hosts {path} is also a password_file",
                    hint="name different files for the password and the known_hosts",
                )
            lines.append(known_hosts_entry(s.mgmt.host, s.mgmt.port, key))
    return {path: "\n".join(lines) + "\n" for path, lines in files.items()}


def _written_before(d: Path) -> set[Path]:
    try:
        return {Path(p) for p in json.loads((d / WRITTEN_FILE).read_text())}
    except (OSError, ValueError, TypeError):
        return set()


def write_access_files(d: Path, files: dict[Path, str]) -> list[Path]:
    """Write ``files`` (0600, parent folders 0700), refusing any that exists and that the lab did not write
    (inside ``d`` or listed in ``written.json``); records what it wrote outside ``d``."""
    mine = _written_before(d)
    for path in files:
        if path.exists() and path.resolve().parent != d.resolve() and path not in mine:
            raise LabError(
                f"the inventory names {path} for the lab's credentials, and it exists already: the lab "
                "does not overwrite a file it did not write",
                hint="name a file of the lab's own in credentials.password_file / known_hosts, e.g. "
                "${FABRICD_STATE_DIR}/lab/known_hosts, or remove the file if it is a stale copy",
            )
    written = []
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_private(path, text)
        if path.resolve().parent != d.resolve():
            written.append(path)
    write_private(d / WRITTEN_FILE, json.dumps(sorted(str(p) for p in {*mine, *written})))
    return sorted(files)


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def up(
    fabric: Fabric,
    faults: Iterable[Fault] = (),
    *,
    state_dir: Path | None = None,
    timeout_s: float = 30.0,
    latency: str = "",
) -> dict[str, Any]:
    """Start one simulator per switch of ``fabric`` in a detached daemon; returns :func:`status`. ``latency``
    (:func:`fabricd_lab.latency.parse_latency`) gives every switch a round trip and per-line processing time."""
    latency = parse_latency(latency).to_text() if latency else ""
    d = lab_dir(state_dir)
    pid = running_pid(state_dir)
    if pid is not None:
        raise LabError(f"a lab is already running (pid {pid}, state in {d})", hint="run `fabricd lab down` first")
    fault_list = list(faults)
    names = {s.name for s in fabric.switches}
    for f in fault_list:
        if f.device not in names:
            raise UsageError(f"--fault {f}: no switch named {f.device!r}", hint=f"switches: {', '.join(sorted(names))}")
        sw = fabric.switch(f.device)
        if f.kind in (FaultKind.SWAP_CABLES, FaultKind.DEGRADE_OPTIC) and sw is not None and f.arg:
            known = [p.name for p in sw.ports]
            for port in (p.strip() for p in f.arg.split(",")):
                if port not in known:
                    raise UsageError(f"--fault {f}: {f.device} has no port {port!r}", hint=f"ports: {', '.join(known)}")
    for s in fabric.switches:
        gp = s.telemetry.gnmi.port
        if gp is not None and not _port_free(s.mgmt.host, gp):
            raise LabError(
                f"{s.name}: gNMI port {s.mgmt.host}:{gp} is already in use",
                hint="another lab or program listens there; change telemetry.gnmi.port in the inventory",
            )
        if not _port_free(s.mgmt.host, s.mgmt.port):
            raise LabError(
                f"{s.name}: {s.mgmt.host}:{s.mgmt.port} is already in use",
                hint="another lab or program listens there; `fabricd lab status`, or change mgmt.port in the inventory",
            )
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    d.chmod(0o700)
    for name in (LAB_STATE_FILE, LAB_PID_FILE, LAB_CONTROL_SOCKET):
        (d / name).unlink(missing_ok=True)
    password = secrets.token_urlsafe(18)
    key = generate_host_key()
    files = access_files(fabric, password, key)
    write_private(d / LAB_PASSWORD_FILE, password + "\n")
    write_private(d / HOST_KEY_FILE, key.export_private_key("openssh").decode())
    from .gnmi import generate_tls

    tls = generate_tls()
    write_private(d / GNMI_CA_FILE, tls.ca_pem.decode())
    write_private(d / GNMI_CERT_FILE, tls.cert_pem.decode())
    write_private(d / GNMI_KEY_FILE, tls.key_pem.decode())
    write_access_files(d, files)
    spec = {
        "fabric": fabric.name,
        "devices": [
            {
                "name": s.name,
                "platform": s.platform.value,
                "host": s.mgmt.host,
                "port": s.mgmt.port,
                "username": s.credentials.username,
                "password_file": str(
                    _inventory_path(s.credentials.password_file, s.name, "password_file")
                    if s.credentials.password_file
                    else d / LAB_PASSWORD_FILE
                ),
                "password_env": s.credentials.password_env,
                "known_hosts": str(
                    _inventory_path(s.credentials.known_hosts, s.name, "known_hosts")
                    if s.credentials.known_hosts
                    else d / LAB_KNOWN_HOSTS
                ),
                "ports": [[p.name, p.speed.bps] for p in s.ports],
                "faults": [[f.kind.value, f.arg] for f in fault_list if f.device == s.name],
                "neighbors": [n.to_json() for n in neighbors_of(fabric, s.name, fault_list)],
                "latency": latency,
                "gnmi_port": s.telemetry.gnmi.port or 0,
            }
            for s in fabric.switches
        ],
    }
    write_private(d / SPEC_FILE, json.dumps(spec, indent=2))
    log_file = os.fdopen(private_fd(d / LAB_LOG_FILE, append=True), "ab")  # 0600: it holds configs
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", DAEMON_MODULE, "--dir", str(d)],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log_file.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (d / LAB_STATE_FILE).exists():
            return status(state_dir)
        if proc.poll() is not None:
            tail = (d / LAB_LOG_FILE).read_text(errors="replace").strip().splitlines()[-3:]
            raise LabError(
                f"the lab daemon exited with status {proc.returncode}: {' / '.join(tail) or 'no output'}",
                hint=f"see {d / LAB_LOG_FILE}",
            )
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    raise LabError(f"the lab did not start within {timeout_s:.0f} s", hint=f"see {d / LAB_LOG_FILE}")


def down(state_dir: Path | None = None, timeout_s: float = 10.0) -> dict[str, Any]:
    """Stop the lab this state dir started; returns what was stopped. Not running is not an error."""
    d = lab_dir(state_dir)
    pid = running_pid(state_dir)
    stopped = False
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        stopped = True
    for path in _written_before(d):
        path.unlink(missing_ok=True)
    for name in (
        LAB_STATE_FILE,
        LAB_PID_FILE,
        LAB_CONTROL_SOCKET,
        LAB_KNOWN_HOSTS,
        LAB_PASSWORD_FILE,
        HOST_KEY_FILE,
        SPEC_FILE,
        WRITTEN_FILE,
        GNMI_CA_FILE,
        GNMI_CERT_FILE,
        GNMI_KEY_FILE,
    ):
        (d / name).unlink(missing_ok=True)
    return {"stopped": stopped, "pid": pid, "state_dir": str(d)}


def status(state_dir: Path | None = None) -> dict[str, Any]:
    """The lab's devices (platform, host, port, username, password file) and whether the daemon runs."""
    d = lab_dir(state_dir)
    pid = running_pid(state_dir)
    try:
        state = json.loads((d / LAB_STATE_FILE).read_text())
    except (OSError, ValueError):
        state = {"devices": []}
    return {
        "running": pid is not None,
        "pid": pid,
        "state_dir": str(d),
        "known_hosts": str(d / LAB_KNOWN_HOSTS),
        "fabric": state.get("fabric"),
        "devices": state.get("devices", []) if pid is not None else [],
    }


def control(request: dict[str, Any], state_dir: Path | None = None, timeout_s: float = 10.0) -> dict[str, Any]:
    """Send one request to the running lab's control socket (see :func:`_handle`)."""
    path = lab_dir(state_dir) / LAB_CONTROL_SOCKET
    if running_pid(state_dir) is None:
        raise LabError("no lab is running", hint="start one with `fabricd lab up`")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        s.connect(str(path))
        s.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data or b"{}")
    if not reply.get("ok"):
        raise LabError(f"lab: {reply.get('error', 'no reply')}")
    return reply


DRIVE_ACTIONS = ("traffic", "pause", "drop", "ecn", "buffer", "headroom", "storm-start", "storm-stop", "clear")


def _handle(lab: Lab, req: dict[str, Any]) -> dict[str, Any]:
    """Control requests: ``{"op": "running-config", "device": D}`` and
    ``{"op": "drive", "device": D, "action": A, "port": P, "priority": N, "packets": N, "fraction": F, "bytes": B}``
    (``buffer``: B bytes of the PG's shared pool and of the egress queue in use; ``headroom``: B bytes of the PG's
    headroom in use; each raises the watermark the simulators print)."""
    device = lab.switches.get(str(req.get("device")))
    if device is None:
        return {"ok": False, "error": f"no lab switch named {req.get('device')!r}"}
    if req.get("op") == "running-config":
        return {"ok": True, "config": device.running_config()}
    if req.get("op") != "drive":
        return {"ok": False, "error": f"unknown op {req.get('op')!r}"}
    c = device.counters
    action = req.get("action")
    port = str(req.get("port", ""))
    prio = int(req.get("priority", 3))
    count = int(req.get("packets", 1000))
    try:
        if action == "traffic":
            c.traffic(port, prio, count)
        elif action == "pause":
            c.pause(port, prio, count, direction=str(req.get("direction", "rx")))
        elif action == "drop":
            c.drop(port, prio, count)
        elif action == "ecn":
            c.ecn_mark(port, prio, count)
        elif action == "buffer":
            size = int(req.get("bytes", 0))
            c.buffer(port, prio, shared=size, queue=size)
        elif action == "headroom":
            c.buffer(port, prio, headroom=int(req.get("bytes", 0)))
        elif action == "storm-start":
            c.storm_start(
                port, prio, direction=str(req.get("direction", "rx")), fraction=float(req.get("fraction", 1.0))
            )
        elif action == "storm-stop":
            c.storm_stop(port, prio)
        elif action == "clear":
            c.clear()
        else:
            return {"ok": False, "error": f"unknown action {action!r}; expected one of {', '.join(DRIVE_ACTIONS)}"}
    except UnknownPortError:
        return {"ok": False, "error": f"{device.name} has no port {port!r}; ports: {', '.join(device.port_names)}"}
    return {"ok": True}


async def _serve(d: Path) -> None:
    spec = json.loads((d / SPEC_FILE).read_text())
    password = (d / LAB_PASSWORD_FILE).read_text().strip()
    key = asyncssh.import_private_key((d / HOST_KEY_FILE).read_text())
    specs = [
        DeviceSpec(
            name=dev["name"],
            platform=Platform(dev["platform"]),
            host=dev["host"],
            port=dev["port"],
            username=dev["username"],
            password=password,
            ports=tuple((p[0], int(p[1])) for p in dev["ports"]),
            faults=tuple(Fault(dev["name"], FaultKind(k), a) for k, a in dev["faults"]),
            latency=parse_latency(dev.get("latency", "")),
            neighbors=tuple(LabNeighbor.from_json(n) for n in dev.get("neighbors", [])),
            gnmi_port=int(dev.get("gnmi_port", 0)),
        )
        for dev in spec["devices"]
    ]
    from .gnmi import LabTls

    tls = LabTls((d / GNMI_CA_FILE).read_bytes(), (d / GNMI_CERT_FILE).read_bytes(), (d / GNMI_KEY_FILE).read_bytes())
    lab = Lab(specs, host_key=key, gnmi_tls=tls)
    await lab.start()
    by_name = {dev["name"]: dev for dev in spec["devices"]}

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            try:
                reply = _handle(lab, json.loads(line or b"{}"))
            except (ValueError, TypeError) as exc:
                reply = {"ok": False, "error": f"bad request: {exc}"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        finally:
            writer.close()

    sock_path = d / LAB_CONTROL_SOCKET
    sock_path.unlink(missing_ok=True)
    server = await asyncio.start_unix_server(on_client, path=str(sock_path))
    sock_path.chmod(0o600)
    (d / LAB_KNOWN_HOSTS).write_text(lab.known_hosts())
    state = {
        "fabric": spec.get("fabric"),
        "pid": os.getpid(),
        "devices": [
            {
                "name": e.name,
                "platform": e.platform.value,
                "host": e.host,
                "port": e.port,
                "gnmi_port": e.gnmi_port,
                "username": e.username,
                **{k: by_name[e.name].get(k) for k in ("password_file", "password_env", "known_hosts")},
                "faults": [str(f) for f in lab.switches[e.name].spec.faults],
            }
            for e in lab.endpoints.values()
        ],
    }
    tmp = d / (LAB_STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(d / LAB_STATE_FILE)
    log.info("lab ready: %d switches", len(specs))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    await lab.stop()
    log.info("lab stopped")


def run(d: Path) -> int:
    """Run the lab of state dir ``d`` until SIGTERM/SIGINT; the exit status for the entry point
    (:mod:`fabricd_lab.cli.lab_daemon`, which parses the command line and exits: only cli/ exits)."""
    (d / LAB_PID_FILE).write_text(f"{os.getpid()}\n")
    try:
        asyncio.run(_serve(d))
    except OSError as exc:
        log.error("lab failed: %s", exc)
        return 1
    return 0
