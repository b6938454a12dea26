"""Fault injection for the lab switches: ``DEVICE:KIND[=ARG]`` (``fabricd lab up --fault``).

Kinds:

- ``disconnect-after-lines=N``: when the device has received its N-th input line (counted over all its SSH sessions
  since the lab started, empty lines included), it processes that line and then drops the TCP connection without
  answering. One-shot: the fault fires once per lab run, like a flaky link, so a client can reconnect and recover.
- ``reject-line=REGEX``: every configuration unit matching REGEX (Python ``re.search``) is rejected with the NOS's
  own invalid-input wording: an EOS/NX-OS config line, an NVUE ``nv set``/``nv unset`` line, or one SONiC JSON-patch
  operation (``op path value`` as one line) or ``config`` command.
- ``commit-fails``: the change mechanism's commit fails: EOS ``commit``, NX-OS ``copy running-config
  startup-config``, SONiC ``config apply-patch`` (after applying half of the operations, as a real mid-patch failure
  would), NVUE ``nv config apply``.
- ``slow-ms=N``: every answer is delayed by N ms (0-60000), echo stays immediate.
- ``auth-fail``: password authentication always fails (SSH and gNMI).
- ``swap-cables=P,Q``: the cables in ports P and Q of the device trade places (a miswire): both ends of both cables
  hear the other neighbour over LLDP (:mod:`fabricd_lab.cabling`).
- ``degrade-optic=PORT``: the transceiver in PORT degrades from the lab's start: its received power falls by 0.5 dB
  a second (below -10 dBm after 16 s), and its pre-FEC BER and FEC counters rise with the loss (SONiC simulator).
- ``flap=PORT``: the link in PORT flaps from the lab's start: down and up again every FLAP_PERIOD_S (2 s) of lab
  time, two carrier transitions each (EOS ``linkStatusChanges``, NVUE ``carrier-transitions``).
- ``gnmi-stall``: the device's first gNMI Subscribe stream sends its first sample and then nothing, while staying
  open (SONiC's SAMPLE stall, sonic-net/sonic-buildimage#22201). One-shot: a re-subscription streams normally, so a
  collector that notices the stall and re-subscribes recovers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from fabricd.errors import UsageError


class FaultKind(StrEnum):
    DISCONNECT_AFTER_LINES = "disconnect-after-lines"
    REJECT_LINE = "reject-line"
    COMMIT_FAILS = "commit-fails"
    SLOW_MS = "slow-ms"
    AUTH_FAIL = "auth-fail"
    SWAP_CABLES = "swap-cables"
    DEGRADE_OPTIC = "degrade-optic"
    GNMI_STALL = "gnmi-stall"
    FLAP = "flap"


_NEEDS_ARG = {
    FaultKind.DISCONNECT_AFTER_LINES,
    FaultKind.REJECT_LINE,
    FaultKind.SLOW_MS,
    FaultKind.SWAP_CABLES,
    FaultKind.DEGRADE_OPTIC,
    FaultKind.FLAP,
}


@dataclass(frozen=True)
class Fault:
    """One injected fault on one device. ``arg`` is the text after ``=`` (None for kinds without an argument)."""

    device: str
    kind: FaultKind
    arg: str | None = None

    def __str__(self) -> str:
        return f"{self.device}:{self.kind.value}" + (f"={self.arg}" if self.arg is not None else "")


def parse_fault(text: str) -> Fault:
    """Parse ``DEVICE:KIND[=ARG]``; raises :class:`UsageError` naming what is wrong and the expected form."""
    form = "DEVICE:KIND[=ARG] with KIND one of " + ", ".join(k.value for k in FaultKind)
    device, sep, rest = text.partition(":")
    if not sep or not device or not rest:
        raise UsageError(f"--fault {text!r}: expected {form}", hint="e.g. --fault leaf2-eos:reject-line='^mtu'")
    kind_text, eq, arg = rest.partition("=")
    try:
        kind = FaultKind(kind_text)
    except ValueError:
        raise UsageError(f"--fault {text!r}: unknown kind {kind_text!r}; expected {form}") from None
    if kind in _NEEDS_ARG and not eq:
        raise UsageError(f"--fault {text!r}: {kind.value} needs an argument (={kind.value.split('-')[-1].upper()})")
    if kind not in _NEEDS_ARG and eq:
        raise UsageError(f"--fault {text!r}: {kind.value} takes no argument")
    if kind in (FaultKind.DISCONNECT_AFTER_LINES, FaultKind.SLOW_MS):
        if not arg.isdigit():
            raise UsageError(f"--fault {text!r}: {kind.value} expects a whole number, got {arg!r}")
        limit = 60_000 if kind is FaultKind.SLOW_MS else 1_000_000
        if int(arg) > limit or (kind is FaultKind.DISCONNECT_AFTER_LINES and int(arg) < 1):
            raise UsageError(f"--fault {text!r}: {kind.value} expects 1..{limit}, got {arg}")
    if kind is FaultKind.SWAP_CABLES:
        ports = [p.strip() for p in arg.split(",")]
        if len(ports) != 2 or not all(ports) or ports[0] == ports[1]:
            raise UsageError(
                f"--fault {text!r}: swap-cables expects two different ports, PORT,PORT",
                hint="e.g. --fault leaf1-sonic:swap-cables=Ethernet0,Ethernet8",
            )
    if kind is FaultKind.REJECT_LINE:
        try:
            re.compile(arg)
        except re.error as exc:
            raise UsageError(f"--fault {text!r}: reject-line is not a valid regular expression: {exc}") from None
    return Fault(device, kind, arg if eq else None)


@dataclass
class FaultPlan:
    """The faults of one device, with the one-shot state of ``disconnect-after-lines``."""

    faults: tuple[Fault, ...] = ()
    disconnect_fired: bool = False
    gnmi_stall_fired: bool = False
    _reject: tuple[re.Pattern[str], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        self._reject = tuple(re.compile(f.arg or "") for f in self.faults if f.kind is FaultKind.REJECT_LINE)

    def _first(self, kind: FaultKind) -> Fault | None:
        return next((f for f in self.faults if f.kind is kind), None)

    @property
    def auth_fails(self) -> bool:
        return self._first(FaultKind.AUTH_FAIL) is not None

    @property
    def commit_fails(self) -> bool:
        return self._first(FaultKind.COMMIT_FAILS) is not None

    def take_gnmi_stall(self) -> bool:
        """True once (the first gNMI stream of the lab run) when the device has the ``gnmi-stall`` fault."""
        if self._first(FaultKind.GNMI_STALL) is None or self.gnmi_stall_fired:
            return False
        self.gnmi_stall_fired = True
        return True

    @property
    def slow_s(self) -> float:
        fault = self._first(FaultKind.SLOW_MS)
        return int(fault.arg or 0) / 1000.0 if fault else 0.0

    @property
    def disconnect_after(self) -> int | None:
        """The line count at which to drop the session, or None (no fault, or it already fired)."""
        fault = self._first(FaultKind.DISCONNECT_AFTER_LINES)
        if fault is None or self.disconnect_fired:
            return None
        return int(fault.arg or 0)

    def rejects(self, unit: str) -> bool:
        return any(p.search(unit) for p in self._reject)
