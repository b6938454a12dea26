"""The lab's physical cabling and the LLDP neighbour tables the simulators print from it.

The cables are the inventory's (``links:`` and each NIC's ``peer``), with the ``swap-cables=P,Q`` faults applied
(:mod:`fabricd_lab.faults`): the cables plugged into ports P and Q of that switch trade places, so both ends of both
cables see the change, as on a real miswired rack. Each switch then hears, on each cabled port, what its peer
advertises:

- a switch peer advertises its port name as the port id and the port description (the lab's SONiC ports have no
  alias, so its port id is the name as well);
- a host peer runs lldpd with its defaults: the NIC's MAC address as the port id and the netdev as the description.

The tables follow the real captures in tests/golden/readers/lldp/: SONiC ``show lldp table``, EOS ``show lldp
neighbors detail | json``, NX-OS ``show lldp neighbors detail``, NVUE ``nv show interface <port> lldp neighbor``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass

from fabricd.model import Fabric
from fabricd.model.topology import split_endpoint

from .faults import Fault, FaultKind

Cable = tuple[str, str]
"""(device, port) of one cable end."""


@dataclass(frozen=True)
class LabNeighbor:
    """What a switch hears on ``local_port`` (the fields the real tables print)."""

    local_port: str
    system_name: str
    port_id: str
    port_descr: str
    chassis_id: str
    is_switch: bool

    def to_json(self) -> list[object]:
        return [self.local_port, self.system_name, self.port_id, self.port_descr, self.chassis_id, self.is_switch]

    @classmethod
    def from_json(cls, raw: list[object]) -> LabNeighbor:
        return cls(str(raw[0]), str(raw[1]), str(raw[2]), str(raw[3]), str(raw[4]), bool(raw[5]))


def mac(*parts: str) -> str:
    """A stable locally administered MAC for a device (or a device's port)."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x02, *digest[:5]))


def physical_cables(fabric: Fabric, faults: Iterable[Fault] = ()) -> dict[Cable, Cable]:
    """Both directions of every cable in the lab, after the ``swap-cables`` faults."""
    out: dict[Cable, Cable] = {}
    for link in fabric.links:
        a, b = split_endpoint(link.a), split_endpoint(link.b)
        out[a], out[b] = b, a
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.peer:
                sw = split_endpoint(nic.peer)
                out[sw], out[(host.name, nic.netdev)] = (host.name, nic.netdev), sw
    for fault in faults:
        if fault.kind is not FaultKind.SWAP_CABLES or not fault.arg:
            continue
        p, q = fault.arg.split(",", 1)
        end_p, end_q = (fault.device, p.strip()), (fault.device, q.strip())
        far_p, far_q = out.pop(end_p, None), out.pop(end_q, None)
        for far in (far_p, far_q):
            if far is not None:
                out.pop(far, None)
        if far_q is not None:
            out[end_p], out[far_q] = far_q, end_p
        if far_p is not None:
            out[end_q], out[far_p] = far_p, end_q
    return out


def neighbors_of(fabric: Fabric, switch: str, faults: Iterable[Fault] = ()) -> tuple[LabNeighbor, ...]:
    """What ``switch`` hears over LLDP on each cabled port, in port order of the inventory."""
    cables = physical_cables(fabric, faults)
    switches = {s.name for s in fabric.switches}
    sw = fabric.switch(switch)
    order = [p.name for p in sw.ports] if sw is not None else []
    ends = sorted(
        (end for end in cables if end[0] == switch),
        key=lambda e: (order.index(e[1]) if e[1] in order else len(order), e[1]),
    )
    out = []
    for end in ends:
        device, port = cables[end]
        if device in switches:
            out.append(LabNeighbor(end[1], device, port, port, mac(device), True))
        else:
            out.append(LabNeighbor(end[1], device, mac(device, port), port, mac(device), False))
    return tuple(out)


# -- the tables -------------------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def sonic_lldp_table(neighbors: Iterable[LabNeighbor]) -> str:
    """``show lldp table`` (sonic-utilities lldpshow)."""
    rows = [[n.local_port, n.system_name, n.port_id, "BR" if n.is_switch else "", n.port_descr] for n in neighbors]
    lines = [
        "Capability codes: (R) Router, (B) Bridge, (O) Other",
        *_table(["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"], rows),
        "-" * 50,
        f"Total entries displayed:  {len(rows)}",
    ]
    return "\n".join(lines)


def _dotted(mac_text: str) -> str:
    h = mac_text.replace(":", "")
    return f"{h[0:4]}.{h[4:8]}.{h[8:12]}"


def eos_lldp_detail_json(neighbors: Iterable[LabNeighbor], ports: Iterable[str]) -> str:
    """``show lldp neighbors detail | json`` (eAPI; every port listed, empty ones with no info)."""
    table: dict[str, dict[str, list[dict[str, object]]]] = {p: {"lldpNeighborInfo": []} for p in ports}
    for n in neighbors:
        kind = "interfaceName" if n.is_switch else "macAddress"
        table.setdefault(n.local_port, {"lldpNeighborInfo": []})["lldpNeighborInfo"].append(
            {
                "chassisIdType": "macAddress",
                "chassisId": _dotted(n.chassis_id),
                "systemName": n.system_name,
                "neighborInterfaceInfo": {
                    "interfaceIdType": kind,
                    "interfaceId": json.dumps(n.port_id),
                    "interfaceId_v2": n.port_id,
                    "interfaceDescription": n.port_descr,
                },
            }
        )
    return json.dumps({"lldpNeighbors": table}, indent=2)


def nxos_lldp_detail(neighbors: Iterable[LabNeighbor]) -> str:
    """``show lldp neighbors detail`` (NX-OS text, ntc-templates' capture)."""
    lines = [
        "Capability codes:",
        "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
        "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
        "Device ID            Local Intf      Hold-time  Capability  Port ID  ",
        "",
    ]
    count = 0
    for n in neighbors:
        count += 1
        local = n.local_port.replace("Ethernet", "Eth", 1)
        caps = "B, R" if n.is_switch else "S"
        lines += [
            f"Chassis id: {_dotted(n.chassis_id)}",
            f"Port id: {n.port_id}",
            f"Local Port id: {local}",
            f"Port Description: {n.port_descr}",
            f"System Name: {n.system_name}",
            "System Description: fabricd lab",
            "Time remaining: 93 seconds",
            f"System Capabilities: {caps}",
            f"Enabled Capabilities: {caps}",
            "Management Address: not advertised",
            "Vlan ID: not advertised",
            "",
            "",
        ]
    lines.append(f"Total entries displayed: {count}")
    return "\n".join(lines)


def nvue_lldp_neighbor(neighbors: Iterable[LabNeighbor], port: str) -> str:
    """``nv show interface <port> lldp neighbor`` (NVUE's command reference); empty when nothing is heard."""
    rows = [[n.system_name, "", "", "", n.port_id] for n in neighbors if n.local_port == port]
    if not rows:
        return ""
    return "\n".join(_table(["Neighbor", "Remote IP", "Model", "SW Version", "Remote Port"], rows))


# -- link health: optics and FEC ------------------------------------------------------------------------------------

HEALTHY_RX_DBM = -2.0
"""Received power of a healthy lane, in dBm."""
DEGRADE_DB_PER_S = 0.5
"""How fast a ``degrade-optic`` port loses received power (dB per second of lab time), down to DARK_DBM."""
DARK_FLOOR_DBM = -25.0
FLAP_PERIOD_S = 2.0
"""A ``flap`` port goes down and up once per this many seconds of lab time (two carrier transitions)."""


@dataclass
class LinkModel:
    """Optics and FEC of a switch's ports as a function of lab time: every lane healthy, except the ports of the
    ``degrade-optic=PORT`` faults, whose received power falls by DEGRADE_DB_PER_S from when the lab started; the
    pre-FEC BER and the corrected codewords rise with the loss, and uncorrectable codewords appear past 10 dB. Healthy
    ports keep fixed values."""

    ports: tuple[str, ...]
    degrading: frozenset[str]
    started: float
    lanes: int = 4
    flapping: frozenset[str] = frozenset()
    """The ports of the ``flap=PORT`` faults."""

    def carrier_transitions(self, port: str, now: float) -> int:
        """Link state changes since the counters were cleared: 1 (the link came up) on a steady port, two more per
        FLAP_PERIOD_S of lab time on a flapping one."""
        if port not in self.flapping:
            return 1
        return 1 + 2 * int(max(0.0, now - self.started) / FLAP_PERIOD_S)

    def loss_db(self, port: str, now: float) -> float:
        if port not in self.degrading:
            return 0.0
        return min(max(0.0, now - self.started) * DEGRADE_DB_PER_S, HEALTHY_RX_DBM - DARK_FLOOR_DBM)

    def rx_dbm(self, port: str, lane: int, now: float) -> float:
        return round(HEALTHY_RX_DBM - 0.1 * (lane - 1) - self.loss_db(port, now), 4)

    def pre_fec_ber(self, port: str, now: float) -> float:
        return min(1e-9 * 10 ** (self.loss_db(port, now) / 2), 1e-3)

    def corrected(self, port: str, now: float) -> int:
        """Corrected codewords: a fixed count on a healthy port (the lab's counters move only when driven, so a
        capture replays to the live values), growing with the loss on a degrading one."""
        base = 100 + 10 * self.ports.index(port) if port in self.ports else 100
        if port not in self.degrading:
            return base
        elapsed = max(0.0, now - self.started)
        return base + int(elapsed * 1e5 * self.pre_fec_ber(port, now) * 1e3)

    def uncorrectable(self, port: str, now: float) -> int:
        over = self.loss_db(port, now) - 10.0
        return int(over * 100) if over > 0 else 0


def link_model(ports: Iterable[str], faults: Iterable[Fault], started: float) -> LinkModel:
    faults = tuple(faults)
    degrading = frozenset(f.arg for f in faults if f.kind is FaultKind.DEGRADE_OPTIC and f.arg)
    flapping = frozenset(f.arg for f in faults if f.kind is FaultKind.FLAP and f.arg)
    return LinkModel(tuple(ports), degrading, started, flapping=flapping)


def sonic_fec_stats(model: LinkModel, now: float) -> str:
    """``show interfaces counters fec-stats`` (``portstat -f``, the sonic-net/SONiC port FEC BER design's sample)."""
    rows = [
        [
            p,
            "U",
            f"{model.corrected(p, now):,}",
            f"{model.uncorrectable(p, now):,}",
            f"{model.corrected(p, now) // 3:,}",
            f"{model.pre_fec_ber(p, now):.2e}",
            "0.00e+00",
        ]
        for p in model.ports
    ]
    headers = ["IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER", "FEC_POST_BER"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def eos_interfaces_json(model: LinkModel, now: float) -> str:
    """``show interfaces | json`` (eAPI), the fields of the real shape (napalm's EOS test data,
    tests/golden/readers/switch/arista_eos/flaps--napalm.txt) the lab can fill: per port ``name``,
    ``interfaceStatus``, ``lineProtocolStatus`` and ``interfaceCounters.linkStatusChanges`` (with the error totals at
    0); the rest of a device's fields (addresses, rates, octets) are left out."""
    return json.dumps(
        {
            "interfaces": {
                p: {
                    "name": p,
                    "interfaceStatus": "connected",
                    "lineProtocolStatus": "up",
                    "hardware": "ethernet",
                    "interfaceCounters": {
                        "linkStatusChanges": model.carrier_transitions(p, now),
                        "totalInErrors": 0,
                        "totalOutErrors": 0,
                    },
                }
                for p in model.ports
            }
        },
        indent=2,
    )


def nvue_interface_counters(model: LinkModel, port: str, now: float) -> str:
    """``nv show interface <port> counters``: the first table of the Cumulus Linux 5.6 guide's example
    (tests/golden/readers/switch/cumulus_nvue/flaps--cl56-docs.txt) with the port's carrier transitions; the
    detailed counter tables that follow it there are left out."""
    value = str(model.carrier_transitions(port, now))
    return "\n".join(
        [
            "                     operational  applied",
            "-------------------  -----------  -------",
            f"carrier-transitions  {value.ljust(11)}",
        ]
    )


def sonic_interfaces_flap(model: LinkModel, now: float) -> str:
    """``show interfaces flap`` (sonic-utilities' tabulate table; tests/golden/readers/switch/sonic/
    flaps--sonic-utilities-test.txt): orchagent writes ``flap_count`` at a port's first oper-status change after the
    link came up, so a steady port prints ``Never``; a flapping one its transitions since then."""
    rows = []
    for p in model.ports:
        count = model.carrier_transitions(p, now) - 1
        stamp = "Never" if count == 0 else "Sat Nov 28 08:00:00 2026"
        rows.append([p, str(count) if count else "Never", "Up", "Up", stamp, stamp])
    return "\n".join(
        _table(["Interface", "Flap Count", "Admin", "Oper", "Link Down TimeStamp(UTC)", "Link Up TimeStamp(UTC)"], rows)
    )


def _nvue_ber(value: float) -> str:
    """A ratio as NVUE prints it: an integer mantissa and an exponent (``1E-7``, ``3E-6``)."""
    exp = math.floor(math.log10(value))
    mantissa = round(value / 10**exp)
    if mantissa == 10:
        mantissa, exp = 1, exp + 1
    return f"{mantissa}E{exp}"


def nvue_link_phy_detail(model: LinkModel, port: str, now: float) -> str:
    """``nv show interface <port> link phy-detail`` (the NVUE reference's example,
    tests/golden/readers/switch/cumulus_nvue/fec--nvue-reference-docs.txt), four lanes: ``raw-ber`` is the port's
    pre-FEC BER, the RS-FEC histogram puts the corrected codewords in bin 1, and ``effective-ber`` stays at the
    example's floor until the port has uncorrectable codewords."""
    corrected = model.corrected(port, now)
    post = "15E-255" if model.uncorrectable(port, now) == 0 else _nvue_ber(model.pre_fec_ber(port, now) * 1e-6)
    pairs = [
        ("time-since-last-clear-min", str(int(max(0.0, now - model.started) // 60))),
        ("symbol-errors", "0"),
        ("effective-errors", str(model.uncorrectable(port, now) * 10)),
        ("raw-ber", _nvue_ber(model.pre_fec_ber(port, now))),
        ("symbol-ber", "15E-255"),
        ("effective-ber", post),
    ]
    pairs += [(f"raw-ber-lane{lane}", _nvue_ber(model.pre_fec_ber(port, now))) for lane in range(model.lanes)]
    pairs += [
        (f"rs-num-corr-err-bin{b}", str(corrected * 1000 if b == 0 else corrected if b == 1 else 0)) for b in range(16)
    ]
    return "\n".join(
        [
            "                          operational",
            "-------------------------  -----------------",
            *(f"{k.ljust(25)}  {v}" for k, v in pairs),
        ]
    )


def sonic_transceiver_dom(model: LinkModel, now: float) -> str:
    """``show interfaces transceiver eeprom --dom`` (sfpshow; the shape of the QSFP-DD CMIS design's example)."""
    out: list[str] = []
    for port in model.ports:
        out += [
            f"{port}: SFP EEPROM detected",
            "        Identifier: QSFP-DD Double Density 8X Pluggable Transceiver",
            "        Vendor Name: FABRICD-LAB",
            "        ChannelMonitorValues:",
        ]
        for lane in range(1, model.lanes + 1):
            out += [
                f"                RX{lane}Power: {model.rx_dbm(port, lane, now):.4f}dBm",
                f"                TX{lane}Bias: {7.5 + 0.1 * lane:.4f}mA",
                f"                TX{lane}Power: {0.5:.4f}dBm",
            ]
        out += [
            "        ChannelThresholdValues:",
            "                RxPowerLowAlarm   : -10.4001dBm",
            "        ModuleMonitorValues:",
            f"                Temperature: {43.5:.4f}C",
            f"                Vcc: {3.31:.4f}Volts",
            "",
        ]
    return "\n".join(out)


def eos_transceiver(model: LinkModel, now: float) -> str:
    """``show interfaces transceiver`` (ntc-templates' capture, tests/golden/readers/switch/arista_eos/
    transceiver--ntc.txt): one row per interface with lane 1's readings (EOS prints a breakout lane as an
    interface of its own)."""
    rows = [
        f"{'Et' + p.removeprefix('Ethernet'):<9} {43.5:6.2f}  {3.31:8.2f}  {7.6:8.2f}  {0.5:8.2f}  "
        f"{model.rx_dbm(p, 1, now):8.2f}     0:00:01 ago"
        for p in model.ports
    ]
    return "\n".join(
        [
            "If device is externally calibrated, only calibrated values are printed.",
            "N/A: not applicable, Tx: transmit, Rx: receive.",
            "mA: milliamperes, dBm: decibels (milliwatts).",
            "                               Bias      Optical   Optical                ",
            "          Temp       Voltage   Current   Tx Power  Rx Power               ",
            "Port      (Celsius)  (Volts)   (mA)      (dBm)     (dBm)     Last Update  ",
            "-----     ---------  --------  --------  --------  --------  -------------------",
            *rows,
        ]
    )


def eos_phy_detail_json(model: LinkModel, now: float) -> str:
    """``show interfaces phy detail | json`` with the keys ANTA's VerifyInterfacesBER reads (UNVERIFIED like the
    parser: no public capture; tests/golden/readers/switch/arista_eos/show-interfaces-phy-detail-json-documented.txt):
    per port one PHY with Reed-Solomon FEC codeword counters and the pre-FEC BER of the link model."""
    return json.dumps(
        {
            "interfacePhyStatuses": {
                p: {
                    "phyStatuses": [
                        {
                            "fec": {
                                "encoding": "reedSolomon",
                                "correctedCodewords": {"value": model.corrected(p, now)},
                                "uncorrectedCodewords": {"value": model.uncorrectable(p, now)},
                            },
                            "preFecBer": {"value": model.pre_fec_ber(p, now)},
                        }
                    ]
                }
                for p in model.ports
            }
        },
        indent=2,
    )


def nxos_transceiver_details(model: LinkModel, now: float) -> str:
    """``show interface transceiver details`` in the SFP shape of ntc-templates' capture (tests/golden/readers/switch/
    cisco_nxos/transceiver--ntc-details.txt): per port the module lines and one diagnostics table with the current
    measurement first (lane 1 of the link model; the capture's multi-lane form numbers a CFP's lanes from its common
    lane, which a lab QSFP has no real example of)."""
    rule = "  " + "-" * 76
    out: list[str] = []
    for port in model.ports:
        out += [
            port,
            "    transceiver is present",
            "    type is 10Gbase-SR",
            "    name is FABRICD-LAB",
            "    number of lanes 1",
            "",
            "           SFP Detail Diagnostics Information (internal calibration)",
            rule,
            "                Current              Alarms                  Warnings",
            "                Measurement     High        Low         High          Low",
            rule,
            f"  Temperature   {43.5:5.2f} C        75.00 C     -5.00 C     70.00 C        0.00 C",
            f"  Voltage        {3.31:4.2f} V         3.63 V      2.97 V      3.46 V        3.13 V",
            f"  Current        {7.6:5.2f} mA      11.80 mA     4.00 mA    10.80 mA       5.00 mA",
            f"  Tx Power       {0.5:5.2f} dBm       1.69 dBm  -11.30 dBm   -1.30 dBm     -7.30 dBm",
            f"  Rx Power     {model.rx_dbm(port, 1, now):7.2f} dBm       2.00 dBm  -13.90 dBm   -1.00 dBm     "
            "-9.90 dBm",
            "  Transmit Fault Count = 0",
            rule,
            "  Note: ++  high-alarm; +  high-warning; --  low-alarm; -  low-warning",
            "",
        ]
    return "\n".join(out)


def nvue_transceiver(model: LinkModel, port: str, now: float) -> str:
    """``nv show interface <port> transceiver`` (the NVUE reference's example, tests/golden/readers/switch/
    cumulus_nvue/transceiver--nvue-reference-docs.txt): the module description, temperature, voltage and per channel
    rx/tx power (mW / dBm) and bias."""
    out = [
        "diagnostics-status     : Diagnostic Data Available ",
        "status                 : plugged_enabled ",
        "identifier             : QSFP28 ",
        "vendor-name            : FABRICD-LAB ",
        f"temperature            : {43.5:.2f} degrees C / {43.5 * 9 / 5 + 32:.2f} degrees F ",
        f"voltage                : {3.31:.4f} V ",
    ]
    for lane in range(1, model.lanes + 1):
        rx = model.rx_dbm(port, lane, now)
        out += [
            f"ch-{lane}-rx-power          : {10 ** (rx / 10):.4f} mW / {rx:.2f} dBm ",
            f"ch-{lane}-tx-power          : {10**0.05:.4f} mW / 0.50 dBm ",
            f"ch-{lane}-tx-bias-current   : {7.6:.3f} mA ",
        ]
    return "\n".join(out)
