"""Helpers for the switch-lab integration tests: simulators of inventory/lab on ephemeral ports, in this process.

Every test gets its own simulators (port 0), its own known_hosts file and its own state dir, so parallel test runs
never collide. The drivers connect over real SSH (netmiko/paramiko -> asyncssh) with host-key verification on.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fabricd.deploy.pipeline import DriverFactory, PushOptions
from fabricd.deploy.targets import render_candidates
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Switch
from fabricd.platforms.access import Access
from fabricd.platforms.base import DriverOptions
from fabricd.platforms.netmiko_base import NetmikoDriver
from fabricd.platforms.registry import make_driver
from fabricd.platforms.secrets import Secret
from fabricd_lab.faults import Fault
from fabricd_lab.latency import Latency
from fabricd_lab.runtime import LabThread, spec_for

REPO = Path(__file__).resolve().parents[2]
LAB_INVENTORY = REPO / "inventory" / "lab"
LEAVES = ("leaf1-sonic", "leaf2-eos", "leaf3-nxos", "leaf4-nvue")
"""One switch per platform: sonic, arista_eos, cisco_nxos, cumulus_nvue."""
PORT_MTU = {"leaf1-sonic": "9216", "leaf2-eos": "9214", "leaf3-nxos": "9216", "leaf4-nvue": "9216"}
"""Each leaf's port MTU in inventory/lab (EOS's `mtu` stops at 9214, FAB142)."""


def lab_fabric() -> Fabric:
    return load_inventory(LAB_INVENTORY).fabric


def write_lab_credentials(state_dir: Path, password: str, known_hosts: Path | None = None) -> Path:
    """Write what ``fabricd lab up`` writes for inventory/lab, whose switches name
    ``${FABRICD_STATE_DIR}/lab/password`` and ``.../known_hosts``: for tests whose simulators run in-process (set
    FABRICD_STATE_DIR to ``state_dir`` for the commands under test). Returns the password file."""
    lab = state_dir / "lab"
    lab.mkdir(parents=True, exist_ok=True, mode=0o700)
    pw = lab / "password"
    pw.write_text(password + "\n")
    pw.chmod(0o600)
    if known_hosts is not None:
        (lab / "known_hosts").write_text(known_hosts.read_text())
    return pw


@dataclass
class SwitchLab:
    """Running simulators plus everything needed to drive them: retargeted switches, candidates, options."""

    thread: LabThread
    switches: dict[str, Switch]
    candidates: dict[str, str]
    password: str
    known_hosts: Path
    state_dir: Path
    options: PushOptions = field(init=False)

    def __post_init__(self) -> None:
        self.options = self.push_options()

    def push_options(self, **kw: object) -> PushOptions:
        base: dict[str, object] = {
            "known_hosts": (self.known_hosts,),
            "driver": DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0),
            "confirm_timeout_s": 60,
        }
        base.update(kw)
        return PushOptions(**base)  # type: ignore[arg-type]

    def access(self, name: str, *, known_hosts: tuple[Path, ...] | None = None, verify: bool = True) -> Access:
        sw = self.switches[name]
        return Access(
            name,
            sw.mgmt.host,
            sw.mgmt.port,
            sw.credentials.username,
            Secret(self.password),
            known_hosts if known_hosts is not None else (self.known_hosts,),
            verify_host_key=verify,
        )

    def driver(self, name: str, options: DriverOptions | None = None) -> NetmikoDriver:
        return make_driver(
            self.switches[name], self.access(name), options or DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0)
        )

    def factory(self, options: DriverOptions | None = None) -> DriverFactory:
        return lambda sw: self.driver(sw.name, options)

    def running(self, name: str) -> str:
        return self.thread.running_config(name)

    def targets(self, names: Sequence[str] | None = None) -> list[Switch]:
        return [self.switches[n] for n in (names or list(self.switches))]


@contextmanager
def switch_lab(
    tmp: Path, names: Sequence[str] = LEAVES, faults: Sequence[Fault] = (), latency: Latency | None = None
) -> Iterator[SwitchLab]:
    """Simulate ``names`` from inventory/lab on ephemeral 127.0.0.1 ports (optionally with faults and latency)."""
    fabric = lab_fabric()
    password = secrets.token_urlsafe(12)
    originals = [fabric.switch(n) for n in names]
    specs = [
        spec_for(sw, password=password, faults=faults, port=0, fabric=fabric) for sw in originals if sw is not None
    ]
    if latency is not None:
        specs = [dataclasses.replace(spec, latency=latency) for spec in specs]
    with LabThread(specs) as thread:
        switches = {}
        for sw in originals:
            assert sw is not None
            port = thread.endpoint(sw.name).port
            switches[sw.name] = sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"port": port})})
        tmp.mkdir(parents=True, exist_ok=True)
        kh = tmp / "known_hosts"
        kh.write_text(thread.known_hosts())
        state = tmp / "state"
        state.mkdir(exist_ok=True)
        candidates = render_candidates(fabric, [s for s in originals if s is not None])
        yield SwitchLab(thread, switches, candidates, password, kh, state)
