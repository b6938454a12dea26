"""``ibnetdiscover --ports`` (infiniband-diags): every port of an InfiniBand fabric, one line per port, with its LID,
GUID, link width and speed, node description and, for a connected port, the port at the other end.

Format (infiniband-diags' ports report; real captures in tests/golden/readers/ibnetdiscover/, from
treydock/infiniband_exporter's fixtures)::

    CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
    SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'
    SW   479 22 0x0002c9020040f161 4x QDR                                   Infiniscale-IV Mellanox Technologies

``<type> <lid> <port> <guid> <width> <speed>`` then either ``- <type> <lid> <port> <guid> ( '<node>' - '<remote
node>' )`` (a link) or the node description alone (quoted or not: a port with no link; ``???`` as the speed of a
port that is down). Node types: ``CA`` (channel adapter), ``SW`` (switch: every port has the switch's LID), ``RT``
(router). Node descriptions keep their text with surrounding spaces removed.

The plain topology output of ``ibnetdiscover`` (``vendid=``, ``Switch 36 "S-..."``) is another format: given that,
the reader fails with the first line and says to run ``ibnetdiscover --ports``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .framing import framed
from .textparse import TextParseError, content_lines

_LOCAL = (
    r"(?P<type>CA|SW|RT)\s+(?P<lid>\d+)\s+(?P<port>\d+)\s+(?P<guid>0x[0-9a-fA-F]+)\s+(?P<width>\d+[xX])\s+"
    r"(?P<speed>\S+)"
)
_LINK = re.compile(
    _LOCAL + r"\s+-\s+(?P<rtype>CA|SW|RT)\s+(?P<rlid>\d+)\s+(?P<rport>\d+)\s+(?P<rguid>0x[0-9a-fA-F]+)\s+"
    r"\(\s*'(?P<node>.*?)'\s+-\s+'(?P<rnode>.*)'\s*\)\s*$"
)
_ALONE = re.compile(_LOCAL + r"(?:\s+(?:'(?P<qnode>.*)'|(?P<node>\S.*?)))?\s*$")

LANE_GBPS: dict[str, float] = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
"""Signalling rate of one lane per IBTA speed, Gb/s, as the kernel reports a port's rate in sysfs
(``ports/<n>/rate``: ``100 Gb/sec (4X EDR)``, ``56 Gb/sec (4X FDR)``), so the fabric's rates compare with the
host RDMA series'. treydock/infiniband_exporter uses data rates instead (SDR 2, DDR 4, QDR 8, XDR 250)."""


@dataclass(frozen=True, slots=True)
class IbPeer:
    """The port at the other end of a link."""

    node_type: str
    lid: int
    port: int
    guid: str
    node: str


@dataclass(frozen=True, slots=True)
class IbPort:
    """One line of the ports report: a port of a node (``guid`` is the node GUID ibnetdiscover prints), its LID
    (for a switch, the switch's LID), link width (``4x``) and speed (``EDR``; ``???`` when the port is down), the
    node description, and the peer when the port has a link."""

    node_type: str
    lid: int
    port: int
    guid: str
    width: str
    speed: str
    node: str
    peer: IbPeer | None

    @property
    def rate_bytes_per_second(self) -> float | None:
        """Lanes x lane rate (:data:`LANE_GBPS`) in bytes per second; None for an unknown speed (``???``)."""
        lane = LANE_GBPS.get(self.speed.upper())
        lanes = int(self.width[:-1])
        return None if lane is None else lanes * lane * 1e9 / 8


def _port(m: re.Match[str], node: str, peer: IbPeer | None) -> IbPort:
    """The local side of a matched ports-report line, with its node description and peer."""
    return IbPort(
        m.group("type"),
        int(m.group("lid")),
        int(m.group("port")),
        m.group("guid").lower(),
        m.group("width").lower(),
        m.group("speed"),
        node.strip(),
        peer,
    )


@framed
def parse_ibnetdiscover_ports(text: str) -> tuple[IbPort, ...]:
    """Parse ``ibnetdiscover --ports`` output. Lines that are neither blank nor ``#`` comments and do not parse
    are a :class:`~fabricd.readers.textparse.TextParseError` naming the first of them."""
    out: list[IbPort] = []
    for n, raw in content_lines(text):
        line = raw.strip()
        m = _LINK.match(line)
        if m is not None:
            peer = IbPeer(
                m.group("rtype"),
                int(m.group("rlid")),
                int(m.group("rport")),
                m.group("rguid").lower(),
                m.group("rnode").strip(),
            )
            out.append(_port(m, m.group("node"), peer))
            continue
        m = _ALONE.match(line)
        if m is not None and " - " not in line:
            node = m.group("qnode") if m.group("qnode") is not None else (m.group("node") or "")
            out.append(_port(m, node, None))
            continue
        hint = (
            "this is ibnetdiscover's topology format: run `ibnetdiscover --ports`"
            if re.match(r"^(vendid|devid|sysimgguid|switchguid|caguid|Switch|Ca|Rt)\b", line)
            else None
        )
        raise TextParseError(
            "ibnetdiscover",
            n,
            "not a ports-report line",
            expected="'<CA|SW|RT> <lid> <port> <guid> <width> <speed> [- <peer> ( ... )]' (ibnetdiscover --ports)",
            got=line,
            hint=hint,
        )
    if not out and text.strip() and content_lines(text):
        n, first = content_lines(text)[0]
        raise TextParseError("ibnetdiscover", n, "no port line", expected="ibnetdiscover --ports lines", got=first)
    return tuple(out)
