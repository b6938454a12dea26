"""``fabricd audit cabling``: the cables the devices see over LLDP against the inventory's (``links:`` and
``nics[].peer``).

Every switch is read with its platform's LLDP command (``PlatformSpec.lldp``) through the same read-back the switch
audit uses (the platform driver over SSH, host keys verified, or a ``fabricd capture`` folder with ``--replay``).
Hosts are read from ``lldpctl -f json`` files when given (``--host-lldp DIR``); otherwise a host cable is checked
from the switch's side only. That is also the only side there is when the NIC runs LLDP in firmware (Intel E810's
FW-LLDP agent, on by default, consumes the switch's frames before the kernel sees them; lldpd on that host lists
nothing).

Checks (codes):

- ``CAB-READ``: every device's LLDP neighbours could be read (a failure is a finding and the CLI exits 3);
- ``CAB-PARSE``: every output parsed (a non-empty output its parser reads nothing from is an unknown shape);
- ``CAB-MISWIRE``: a port hears a neighbour other than the inventory's. Two ports of one device that each hear the
  other's intended neighbour are **one** finding, "swap the cables in D P and D Q" (confirmed from the far ends when
  those were read); any other wrong neighbour is "move the cable in D P ... to ...";
- ``CAB-MISSING``: an inventory cable not heard at a read end (no neighbour on the port: unplugged, down, or LLDP
  off there); a switch-to-switch cable is checked from both ends;
- ``CAB-UNEXPECTED``: a neighbour on a port the inventory cables to nothing (ports the inventory does not name,
  like a management port, are left out unless the neighbour is an inventory device).

:func:`evaluate` is pure (fabric + observations in, report out); :func:`read_lldp` does the I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fabricd.errors import FabricdError, Fix
from fabricd.model import Fabric, Switch
from fabricd.model.checks import by_code
from fabricd.model.topology import split_endpoint
from fabricd.nos.registry import spec_of
from fabricd.readers.lldp import LldpNeighbor, canonical_port, is_mac, names_port, same_system
from fabricd.readers.switch.empty import cli_error
from fabricd.readers.textparse import TextParseError

from .report import AuditReport, CheckSpec, Finding, Results
from .switch import ReadBack, ReadBackFactory

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class End:
    """One end of a cable: a switch port or a host NIC (netdev)."""

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device} {self.port}"


@dataclass
class DeviceLldp:
    """What one device said over LLDP: its neighbours, the outputs that parsed to nothing, or why it could not be
    read. ``source`` says where from (an SSH endpoint, a capture folder, a file)."""

    device: str
    source: str
    neighbors: list[LldpNeighbor] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    error: str | None = None


def _cab(code: str, title: str, hint: str) -> CheckSpec:
    return CheckSpec(code=code, title=title, subject="cabling", hint=hint)


CHECKS: tuple[CheckSpec, ...] = (
    _cab(
        "CAB-READ",
        "LLDP neighbours read from every device",
        "check the device is reachable and LLDP runs on it (SONiC: the lldp feature; EOS/NX-OS: `lldp run`/`feature "
        "lldp`; NVUE: `nv show service lldp`)",
    ),
    _cab("CAB-PARSE", "every LLDP output parsed", "capture it and report the output shape"),
    _cab(
        "CAB-MISWIRE",
        "every port hears the inventory's neighbour (no miswired cable)",
        "move the cable to the port the inventory names, or fix the inventory",
    ),
    _cab(
        "CAB-MISSING",
        "every inventory cable heard at each read end",
        "check the cable is plugged and the link is up (the port's oper status); a host NIC with firmware LLDP "
        "(E810) still answers the switch",
    ),
    _cab(
        "CAB-UNEXPECTED",
        "no neighbour on a port the inventory cables to nothing",
        "unplug it, or add the cable to the inventory (`links:` or the NIC's `peer`)",
    ),
)
CHECK_BY_CODE = by_code(CHECKS)


# ------------------------------------------------------------------------------------------------------------
# The intended cabling
# ------------------------------------------------------------------------------------------------------------


def intended_cables(fabric: Fabric) -> dict[End, End]:
    """Both directions of every inventory cable: ``links:`` (switch to switch) and each NIC's ``peer``."""
    out: dict[End, End] = {}
    for link in fabric.links:
        a, b = End(*split_endpoint(link.a)), End(*split_endpoint(link.b))
        out[a], out[b] = b, a
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.peer:
                sw = End(*split_endpoint(nic.peer))
                nic_end = End(host.name, nic.netdev)
                out[nic_end], out[sw] = sw, nic_end
    return out


def _ports(fabric: Fabric, cables: dict[End, End]) -> dict[str, list[str]]:
    """Device -> every port name the inventory knows on it (switch ports, cable ends, NIC netdevs)."""
    ports: dict[str, list[str]] = {}
    for sw in fabric.switches:
        ports.setdefault(sw.name, []).extend(p.name for p in sw.ports)
    for host in fabric.hosts:
        ports.setdefault(host.name, []).extend(n.netdev for n in host.nics)
    for end in cables:
        names = ports.setdefault(end.device, [])
        if end.port not in names:
            names.append(end.port)
    return ports


@dataclass(frozen=True)
class Heard:
    """A neighbour resolved against the inventory: the inventory end it is (``end``), or only its device
    (``end.port`` is what it advertised), or nothing known (``end`` None, ``label`` what it advertised)."""

    end: End | None
    label: str
    known_port: bool

    def __str__(self) -> str:
        return str(self.end) if self.end is not None else self.label


def resolve(nb: LldpNeighbor, ports: dict[str, list[str]], hosts: set[str]) -> Heard:
    """Which inventory end ``nb`` is: its System Name names a device, and its port id or description names one of
    that device's ports. A host whose lldpd advertises its MAC as the port id and that has one NIC is that NIC."""
    advertised = nb.port_descr if nb.port_id and is_mac(nb.port_id) and nb.port_descr else nb.port_id
    label = " ".join(x for x in (nb.system_name or f"chassis {nb.chassis_id or '?'}", advertised or "") if x)
    device = next((d for d in ports if same_system(nb.system_name, d)), None)
    if device is None:
        return Heard(None, label, False)
    port = next((p for p in ports[device] if names_port(nb, p)), None)
    if port is None and device in hosts and len(ports[device]) == 1 and (not nb.port_id or is_mac(nb.port_id)):
        port = ports[device][0]
    if port is None:
        return Heard(End(device, advertised or "?"), label, False)
    return Heard(End(device, port), label, True)


# ------------------------------------------------------------------------------------------------------------
# Evaluation (pure)
# ------------------------------------------------------------------------------------------------------------


def _finding(
    code: str, obj: str, message: str, *, expected: Any, got: Any, hint: str | None = None, fixes: Iterable[Fix] = ()
) -> Finding:
    return CHECK_BY_CODE[code].finding(
        obj=obj, path="lldp", message=message, expected=expected, got=got, hint=hint, fixes=fixes
    )


@dataclass
class _Cabling:
    """One evaluation: the intended cables, what each read end heard, and the findings so far."""

    fabric: Fabric
    devices: list[DeviceLldp]
    cables: dict[End, End] = field(init=False)
    ports: dict[str, list[str]] = field(init=False)
    read_ok: set[str] = field(init=False)
    heard: dict[End, list[Heard]] = field(init=False)
    wrong: dict[End, Heard] = field(default_factory=dict)
    """Read ends that hear a neighbour, but not their intended one."""
    explained: set[End] = field(default_factory=set)
    results: Results = field(default_factory=lambda: Results(CHECKS))

    def __post_init__(self) -> None:
        self.cables = intended_cables(self.fabric)
        self.ports = _ports(self.fabric, self.cables)
        self.read_ok = {d.device for d in self.devices if d.error is None}
        self.heard = self._heard()

    @property
    def switch_names(self) -> set[str]:
        return {sw.name for sw in self.fabric.switches}

    def _heard(self) -> dict[End, list[Heard]]:
        host_names = {h.name for h in self.fabric.hosts}
        heard: dict[End, list[Heard]] = {}
        for d in self.devices:
            if d.error is not None:
                continue
            spelled = {canonical_port(p): p for p in self.ports.get(d.device, [])}
            for nb in d.neighbors:
                local = spelled.get(canonical_port(nb.local_port), nb.local_port)  # the inventory's spelling
                heard.setdefault(End(d.device, local), []).append(resolve(nb, self.ports, host_names))
        return heard

    def audit_switch(self, device: str, text: str) -> list[Fix]:
        return [Fix(("audit", "switch"), {"device": device}, text)] if device in self.switch_names else []

    def add(self, finding: Finding) -> None:
        self.results.add(finding)


def evaluate(fabric: Fabric, observed: Iterable[DeviceLldp], *, hosts_read: bool = False) -> AuditReport:
    """The cabling report of ``fabric`` from what each device heard. Devices absent from ``observed`` (hosts
    without an lldpctl file) are checked from their peers' side only."""
    cab = _Cabling(fabric, list(observed))
    _reads(cab)
    _missing_or_wrong(cab)
    _swaps(cab)
    _moves(cab)
    _unexpected(cab)
    res = cab.results
    res.notes["CAB-READ"] = f"{len(cab.read_ok)} of {len(cab.devices)} device(s) read"
    if not hosts_read:
        res.notes["CAB-MISSING"] = (
            "host ends checked from the switch side (no host LLDP given; a NIC with firmware "
            "LLDP, such as E810, hides LLDP from the host anyway)"
        )
    if not cab.read_ok:
        for c in CHECKS[1:]:
            res.skip(c.code, "nothing could be read")
    return res.report("cabling", fabric.name, note_failures=True)


def _reads(cab: _Cabling) -> None:
    """CAB-READ and CAB-PARSE: a device that could not be read, an output that parsed to nothing."""
    for d in cab.devices:
        if d.error is not None:
            cab.add(
                _finding(
                    "CAB-READ",
                    d.device,
                    f"could not read LLDP neighbours from {d.source}",
                    expected="LLDP neighbours",
                    got=d.error,
                    fixes=cab.audit_switch(d.device, "checks it is reachable"),
                )
            )
        for command in d.unparsed:
            captured = d.device in cab.switch_names
            cab.add(
                _finding(
                    "CAB-PARSE",
                    d.device,
                    f"`{command}` printed an output fabricd does not read",
                    expected="an LLDP neighbour table",
                    got="nothing parsed",
                    hint=None if captured else "report the output shape",
                    fixes=[Fix(("capture",), {"device": d.device}, "captures it")] if captured else [],
                )
            )


def _missing_or_wrong(cab: _Cabling) -> None:
    """CAB-MISSING for a read end that hears nothing; ``cab.wrong`` for one that hears someone else (an end that
    heard its intended neighbour is right, even with extra ones)."""
    for end, other in sorted(cab.cables.items()):
        if end.device not in cab.read_ok:
            continue
        hears = cab.heard.get(end, [])
        if any(h.end == other for h in hears):
            continue
        if hears:
            cab.wrong[end] = next((h for h in hears if h.end is not None), hears[0])
            continue
        far_ok = other.device in cab.read_ok and any(h.end == end for h in cab.heard.get(other, []))
        why = f"; {other} does hear {end}, so LLDP is off or not received on {end}" if far_ok else ""
        cab.add(
            _finding(
                "CAB-MISSING",
                str(end),
                f"{end} hears no LLDP neighbour; the inventory cables it to {other}{why}",
                expected=str(other),
                got=None,
                hint=f"check the cable between {end} and {other} is plugged and the link is up (the port's oper "
                "status); a host NIC with firmware LLDP (E810) still answers the switch",
                fixes=cab.audit_switch(end.device, "audits the switch"),
            )
        )


def _swaps(cab: _Cabling) -> None:
    """CAB-MISWIRE, swaps first, over every device, so that a far end read earlier never turns a swap into two
    moves: another port of the same device hears this port's intended neighbour, and vice versa."""
    wrong, cables = cab.wrong, cab.cables
    for end in sorted(wrong):
        if end in cab.explained:
            continue
        got, intended = wrong[end], cables[end]
        mate = next(
            (
                e
                for e in sorted(wrong)
                if e != end
                and e.device == end.device
                and e not in cab.explained
                and wrong[e].end == intended
                and got.end == cables[e]
            ),
            None,
        )
        if mate is None:
            continue
        cab.explained |= {end, mate}
        confirmed = [f for f in (intended, cables[mate]) if f.device in cab.read_ok]
        cab.explained.update(f for f in confirmed if f in wrong)
        also = f"; confirmed from {' and '.join(str(f) for f in confirmed)}" if confirmed else ""
        cab.add(
            _finding(
                "CAB-MISWIRE",
                f"{end.device} {end.port},{mate.port}",
                f"cables swapped on {end.device}: {end} reaches {got} (intended {intended}), {mate} reaches "
                f"{wrong[mate]} (intended {cables[mate]}){also}",
                expected={str(end): str(intended), str(mate): str(cables[mate])},
                got={str(end): str(got), str(mate): str(wrong[mate])},
                hint=f"swap the cables in {end.device} {end.port} and {mate.port}: move the cable in {end} to "
                f"{mate.port} and the one in {mate} to {end.port}",
            )
        )


def _move_fix(end: End, got: Heard, intended: End, cables: dict[End, End]) -> str:
    """How to fix one wrong neighbour: move a cable, re-seat it, or fix the inventory."""
    target = cables.get(got.end) if got.end is not None else None
    if got.end is not None and target is not None:
        if target == end:
            return f"re-seat the cable between {end} and {intended}"
        return f"move the cable in {end} (it reaches {got.end}) to {target}, and cable {intended} to {end}"
    if got.end is not None and got.known_port:
        return (
            f"the cable in {end} reaches {got.end}, which the inventory cables to nothing: connect {intended} "
            f"to {end}, or fix the inventory"
        )
    return (
        f"the cable in {end} reaches {got}, which is not in the inventory: connect {intended} to {end}, or fix "
        "the inventory"
    )


def _moves(cab: _Cabling) -> None:
    """CAB-MISWIRE for every wrong neighbour no swap explains (a far end that sees the same cable: one finding)."""
    wrong = cab.wrong
    for end in sorted(wrong):
        if end in cab.explained:
            continue
        got, intended = wrong[end], cab.cables[end]
        cab.explained.add(end)
        if got.end is not None and got.end in wrong and wrong[got.end].end == end:
            cab.explained.add(got.end)
        cab.add(
            _finding(
                "CAB-MISWIRE",
                str(end),
                f"{end} reaches {got}; the inventory cables it to {intended}",
                expected=str(intended),
                got=str(got),
                hint=_move_fix(end, got, intended, cab.cables),
            )
        )


def _unexpected(cab: _Cabling) -> None:
    """CAB-UNEXPECTED: a neighbour on a read port the inventory cables to nothing (a management or unmanaged
    port hearing a device outside the fabric is left out, and so is the far end of a miswire already
    reported)."""
    inventory_ports = {End(sw.name, p.name) for sw in cab.fabric.switches for p in sw.ports} | set(cab.cables)
    for end in sorted(cab.heard):
        if end in cab.cables or end.device not in cab.read_ok:
            continue
        for h in cab.heard[end]:
            if h.end is None and end not in inventory_ports:
                continue
            if h.end is not None and h.end in cab.wrong and cab.wrong[h.end].end == end:
                continue
            known = h.end is not None and h.known_port
            cab.add(
                _finding(
                    "CAB-UNEXPECTED",
                    str(end),
                    f"{end} hears {h}; the inventory cables nothing to {end}",
                    expected=None,
                    got=str(h),
                    hint=f"add the cable to the inventory (`links: - {{a: {end.device}:{end.port}, b: "
                    f"{h.end.device}:{h.end.port}}}` or the NIC's `peer`)"
                    if known and h.end is not None
                    else None,
                )
            )


def unreadable(report: AuditReport) -> list[Finding]:
    """The CAB-READ findings (a device that could not be read: the CLI exits 3)."""
    return [f for c in report.checks if c.code == "CAB-READ" for f in c.findings]


# ------------------------------------------------------------------------------------------------------------
# Reading (I/O)
# ------------------------------------------------------------------------------------------------------------


def lldp_commands(switch: Switch) -> list[tuple[str, str | None]]:
    """``(command, interface)`` pairs that list ``switch``'s LLDP neighbours (per inventory port on NVUE)."""
    table = spec_of(switch.platform).lldp
    if table is None:
        return []
    if "{interface}" in table.command:
        return [(table.command.format(interface=p.name), p.name) for p in switch.ports]
    return [(table.command, None)]


def parse_lldp(switch: Switch, outputs: dict[str, str]) -> DeviceLldp:
    """The neighbours in ``outputs`` (command -> text); a non-empty output that reads nothing and is not an empty
    table (the reader's :class:`TextParseError`) is listed in ``unparsed``; a CLI refusal of every command is an
    error."""
    table = spec_of(switch.platform).lldp
    result = DeviceLldp(switch.name, "")
    if table is None:
        result.error = f"fabricd has no LLDP reader for {switch.platform.value}"
        return result
    parse: Any = table.parse
    refused = []
    for command, interface in lldp_commands(switch):
        text = outputs.get(command)
        if text is None:
            continue
        try:
            got = parse(text, interface) if interface is not None else parse(text)
        except TextParseError:  # a non-empty output that names no neighbour and is not an empty table
            got = None
        if got:
            result.neighbors.extend(got)
        elif cli_error(text):
            refused.append(f"`{command}`: {text.strip().splitlines()[0][:120]}")
        elif got is None:  # an empty list is the reader's "no neighbour" (a bare header, an empty JSON table)
            result.unparsed.append(command)
    if refused and len(refused) == len(outputs):
        result.error = "the device refused " + "; ".join(refused[:3])
    return result


def read_lldp(switch: Switch, factory: ReadBackFactory) -> DeviceLldp:
    """Connect through ``factory`` and read the switch's LLDP neighbours."""
    where = f"{switch.name} ({switch.platform.value}) at [{switch.mgmt.host}]:{switch.mgmt.port}"
    driver: ReadBack | None = None
    try:
        driver = factory(switch)
        driver.open()
        outputs = driver.run([c for c, _ in lldp_commands(switch)])
    except FabricdError as exc:
        log.info("%s", exc.render(), extra={"target": switch.name})
        return DeviceLldp(switch.name, where, error=exc.render())
    finally:
        if driver is not None:
            driver.close()
    result = parse_lldp(switch, outputs)
    result.source = where
    return result


def read_host_lldp(host: str, path: Any) -> DeviceLldp:
    """A host's neighbours from a file holding its ``lldpctl -f json`` output, or lldpctl's text (``--host-lldp
    DIR``: DIR/<host>.json). An unreadable or unparsable file is the host's read error."""
    from fabricd.readers.lldp import parse_lldpctl_json, parse_lldpctl_text

    try:
        text = path.read_text(encoding="utf-8")
        if not text.lstrip().startswith("{"):
            try:
                found = parse_lldpctl_text(text)
            except TextParseError as exc:
                return DeviceLldp(
                    host, str(path), error=f"{path}: neither `lldpctl -f json` nor lldpctl's text ({exc})"
                )
            return DeviceLldp(host, str(path), found)
        return DeviceLldp(host, str(path), parse_lldpctl_json(text))
    except OSError as exc:
        return DeviceLldp(host, str(path), error=f"cannot read {path}: {exc.strerror or exc}")
    except FabricdError as exc:
        return DeviceLldp(host, str(path), error=f"{path}: {exc.render()}")


def read_all(switches: list[Switch], factory: ReadBackFactory, *, concurrency: int = 8) -> list[DeviceLldp]:
    """:func:`read_lldp` of every switch, at most ``concurrency`` at a time (each on its own session), in the
    order given."""
    from concurrent.futures import ThreadPoolExecutor

    if not switches:
        return []
    with ThreadPoolExecutor(
        max_workers=max(1, min(concurrency, len(switches))), thread_name_prefix="fabricd-lldp"
    ) as pool:
        return list(pool.map(lambda sw: read_lldp(sw, factory), switches))
