"""The pieces every simulated switch shares: its spec, its shells, timers, pipes and the counter model."""

from __future__ import annotations

import asyncio
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from fabricd.model import Platform

from .cabling import LabNeighbor, link_model
from .counters import DeviceCounters
from .faults import Fault, FaultPlan
from .latency import Latency


@dataclass(frozen=True)
class DeviceSpec:
    """What the lab needs to run one switch: identity, where it listens, its login and its ports.

    ``ports`` holds (name, speed in bits/s). ``port`` 0 asks the OS for a free port (tests).
    """

    name: str
    platform: Platform
    host: str = "127.0.0.1"
    port: int = 0
    username: str = "admin"
    password: str = ""
    ports: tuple[tuple[str, int], ...] = ()
    faults: tuple[Fault, ...] = ()
    latency: Latency = field(default_factory=Latency)
    """Round trip and per-line processing time (:mod:`fabricd_lab.latency`); none by default."""
    neighbors: tuple[LabNeighbor, ...] = ()
    """What the switch hears over LLDP (:mod:`fabricd_lab.cabling`); none by default."""
    gnmi_port: int | None = None
    """Where the switch serves gNMI (:mod:`fabricd_lab.gnmi`; 0: a free port); None: no gNMI target."""


@dataclass
class Reply:
    """A shell's answer to one line: the text to print before the next prompt, and whether to hang up."""

    output: str = ""
    close: bool = False


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class Shell(ABC):
    """One interactive CLI session on a simulated switch (its mode stack, terminal settings...)."""

    def greeting(self) -> str:
        """Text printed once after login, before the first prompt."""
        return ""

    @abstractmethod
    def prompt(self) -> str: ...

    @abstractmethod
    def handle(self, line: str) -> Reply: ...

    def closed(self) -> None:  # noqa: B027 - optional hook, most shells keep nothing per session
        """The SSH session ended (hang-up, disconnect or fault)."""


class SimSwitch(ABC):
    """One simulated switch: state shared by all its SSH sessions.

    Everything runs on the lab's event loop thread, so no locking is needed. ``clock`` returns monotonic seconds
    and drives the counter model; timers (commit-confirm) use the running asyncio loop.
    """

    platform: ClassVar[Platform]

    def __init__(self, spec: DeviceSpec, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        self.name = spec.name
        self.faults = FaultPlan(spec.faults)
        self.counters = DeviceCounters(spec.ports, clock=clock)
        self.port_names = [name for name, _ in spec.ports]
        self.lines_received = 0
        self.sessions = 0
        self.clock = clock
        self.link = link_model(self.port_names, spec.faults, clock())

    @abstractmethod
    def open_shell(self) -> Shell: ...

    @abstractmethod
    def running_config(self) -> str:
        """The running configuration as the device shows it (used by tests to compare before/after)."""

    def schedule(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` after ``delay_s`` seconds on the lab's loop (commit timers)."""
        return asyncio.get_running_loop().call_later(delay_s, callback)


def apply_filters(text: str, filters: list[str]) -> str:
    """EOS/NX-OS output pipes: ``include``/``grep``, ``exclude``, ``begin``, ``section``, ``no-more``.

    ``json`` is handled by the command itself. Unknown filters are ignored, as ``no-more`` is on most devices.
    """
    lines = text.splitlines()
    for raw in filters:
        verb, _, arg = raw.strip().partition(" ")
        arg = arg.strip()
        if verb in ("include", "i", "inc", "grep"):
            lines = [ln for ln in lines if re.search(arg, ln)]
        elif verb in ("exclude", "e", "exc"):
            lines = [ln for ln in lines if not re.search(arg, ln)]
        elif verb in ("begin", "b"):
            start = next((i for i, ln in enumerate(lines) if re.search(arg, ln)), len(lines))
            lines = lines[start:]
        elif verb in ("section", "sec"):
            out: list[str] = []
            keep = False
            for ln in lines:
                if ln and not ln[0].isspace():
                    keep = bool(re.search(arg, ln))
                if keep and ln.strip() != "!":
                    out.append(ln)
            lines = out
    return "\n".join(lines)


@dataclass
class Terminal:
    """Per-session terminal settings: ``terminal length`` (0 = no paging) and ``terminal width``."""

    length: int = 24
    width: int = 80
    history: list[str] = field(default_factory=list)
