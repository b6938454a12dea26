"""LLDP neighbours: the one model every LLDP reader returns, the helpers they share, and the host reader
(lldpd's ``lldpctl -f json``).

A switch's LLDP output is parsed by its platform pack (``fabricd.nos.<id>.lldp``); a host's by
:func:`parse_lldpctl_json`. Each returns a list of :class:`LldpNeighbor`, one per neighbour heard on a local port.
The cabling audit (:mod:`fabricd.audit.cabling`) compares them with the inventory's cables.

What a neighbour advertises differs by sender, so matching uses both remote port fields:

- SONiC sends its port *alias* as the port id and the port *name* as the description (``show lldp table``:
  ``RemotePortID fortyGigE0/4``, ``RemotePortDescr Ethernet4``);
- EOS, NX-OS and Cumulus send the interface name as the port id (subtype ``interfaceName``/``ifname``);
- lldpd on a Linux host sends the MAC address as the port id and the interface name as the description (its
  default, ``configure lldp portidsubtype``).

Readers are pure: text in, neighbours out. Every one reads its text through the framing step
(:func:`fabricd.readers.framing.framed`: prompts, echoed commands, CRLF, pager marks gone). An output that says
there is no neighbour (blank, a table header with no row, ``Total entries displayed: 0``, lldpd's empty
``LLDP neighbors:`` banner, a JSON document of the expected shape with no entry: :func:`looks_empty`) is an empty
list: no LLDP neighbour is a valid answer. Any other output that reads as no neighbour (another command's output, a
CLI's refusal, a shape the reader does not know) is a :class:`~fabricd.readers.textparse.TextParseError` naming the
first line it could not place (:func:`nothing_read`), never an empty list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from fabricd.readers.framing import frame, framed
from fabricd.readers.textparse import TextParseError, content_lines


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    """One LLDP neighbour heard on ``local_port``: what the remote end advertises about itself.

    ``system_name``: the System Name TLV (a host name, often an FQDN); ``port_id``: the Port ID TLV (an interface
    name, an alias or a MAC address); ``port_descr``: the Port Description TLV; ``chassis_id``: the Chassis ID TLV
    (usually a MAC); ``mgmt_address``: the first management address. None where the output does not say."""

    local_port: str
    system_name: str | None
    port_id: str | None
    port_descr: str | None = None
    chassis_id: str | None = None
    mgmt_address: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)


TLV_NAMES = ("system name", "port id", "port description", "chassis id", "management address")
"""The TLVs a neighbour is read from, as a switch's detail text names them (802.1AB), in lower case."""


def from_tlvs(local_port: str, tlvs: Mapping[str, str], clean: Callable[[str | None], str | None]) -> LldpNeighbor:
    """The neighbour one block of a detail text describes: its ``Name: value`` lines keyed by lower-case name
    (:data:`TLV_NAMES`), each value cleaned the platform's way (quotes, ``not advertised``)."""
    return LldpNeighbor(local_port, *(clean(tlvs.get(name)) for name in TLV_NAMES))


_PREFIXES = (("ethernet", "ethernet"), ("eth", "ethernet"), ("et", "ethernet"))
_MAC = re.compile(r"^(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^(?:[0-9a-f]{4}\.){2}[0-9a-f]{4}$", re.IGNORECASE)


def canonical_port(name: str | None) -> str:
    """A port name in one spelling, for comparing names written by different devices: lower case, no spaces, and
    the abbreviations NX-OS and EOS print (``Eth1/1``, ``Et1``) spelled out (``ethernet1/1``, ``ethernet1``).
    ``swp1``, ``Ethernet0`` and a host's ``ens1f0np0`` keep their names. Empty for None."""
    if not name:
        return ""
    low = re.sub(r"\s+", "", name.strip().strip('"')).lower()
    for short, full in _PREFIXES:
        if low.startswith(short) and low[len(short) : len(short) + 1].isdigit():
            return full + low[len(short) :]
    return low


def is_mac(value: str | None) -> bool:
    """Whether an LLDP id is a MAC address (``aa:bb:cc:dd:ee:ff``, ``aa-bb-...`` or Cisco's ``aabb.ccdd.eeff``)."""
    return bool(value and _MAC.match(value.strip()))


def same_system(advertised: str | None, name: str) -> bool:
    """Whether an advertised System Name is the inventory device ``name``: equal ignoring case, or its first DNS
    label is (``leaf1.example.com`` is ``leaf1``; ANTA's ``VerifyLLDPNeighbors`` matches the same way)."""
    if not advertised:
        return False
    adv = advertised.strip().lower()
    want = name.lower()
    return adv == want or adv.split(".", 1)[0] == want or adv == want.split(".", 1)[0]


def names_port(neighbor: LldpNeighbor, port: str) -> bool:
    """Whether the neighbour's port id or port description names ``port`` (compared with :func:`canonical_port`)."""
    want = canonical_port(port)
    return bool(want) and want in (canonical_port(neighbor.port_id), canonical_port(neighbor.port_descr))


def text_columns(text: str) -> Iterator[dict[str, str]]:
    """Rows of a CLI table drawn with a header line over a dashed line (``-----  ----``), sliced at the dashed
    line's column starts, so empty cells stay empty (NVUE's ``Model``/``SW Version``, SONiC's capability). Yields
    ``{header: cell}`` per row until a line of dashes or a blank line after the rows; nothing when no table is
    found."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if i == 0 or not re.fullmatch(r"\s*-+(\s+-+)+\s*", line):
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
        header = lines[i - 1]
        names = [
            header[a : (spans[k + 1][0] if k + 1 < len(spans) else None)].strip() for k, (a, _) in enumerate(spans)
        ]
        for row in lines[i + 1 :]:
            if not row.strip():
                break
            if re.fullmatch(r"\s*-+\s*", row) or row.lstrip().startswith("Total entries"):
                break
            cells = [
                row[a : (spans[k + 1][0] if k + 1 < len(spans) else None)].strip() for k, (a, _) in enumerate(spans)
            ]
            yield dict(zip(names, cells, strict=True))
        return


def looks_empty(text: str) -> bool:
    """An output that carries no neighbour rows by design: blank, or only headers, dashes and ``Total entries
    displayed: 0``, lldpd's ``LLDP neighbors:`` banner. Prompt and echoed command lines are not content
    (:func:`fabricd.readers.framing.frame`)."""
    for line in frame(text).splitlines():
        s = line.strip()
        if not s or set(s) <= set("- ") or s.startswith(("Capability codes", "(")):
            continue
        if re.fullmatch(r"(?i)total entries displayed:\s*0", s):
            continue
        if re.match(r"(?i)^(localport|device id|neighbor)\b", s):
            continue
        if re.fullmatch(r"(?i)lldp neighbors:", s):  # lldpctl's banner, alone when nothing is heard
            continue
        return False
    return True


def nothing_read(source: str, text: str, expected: str) -> TextParseError:
    """The error for a non-empty output that names no neighbour and is not an empty answer (:func:`looks_empty`):
    the first line with content, by its number in the text given, and what the reader expected there."""
    lines = content_lines(text)
    n, first = lines[0] if lines else (1, text.strip())
    return TextParseError(
        source,
        n,
        "no LLDP neighbour read from a non-empty output",
        expected=expected,
        got=first.strip(),
        hint=f"pass the output of `{source}` (prompt and command lines are "
        "skipped); an output with no neighbour prints only the table header or nothing",
    )


# -- host: lldpd ---------------------------------------------------------------------------------------------------


def _value(node: Any) -> str | None:
    """lldpd's JSON value: ``"x"``, ``{"value": "x"}``, ``[{"value": "x"}]`` (json0) or a list of those."""
    if isinstance(node, list):
        return _value(node[0]) if node else None
    if isinstance(node, dict):
        return _value(node.get("value")) if "value" in node else None
    if isinstance(node, str | int):
        return str(node)
    return None


def _lldpd_interfaces(doc: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(local interface, its object) from lldpd's ``json`` form (``interface`` a dict, or a list of one-key dicts
    when there are several) and ``json0`` form (a list of objects with ``name``)."""
    lldp = doc.get("lldp") if isinstance(doc, dict) else None
    if isinstance(lldp, list):
        lldp = lldp[0] if lldp else {}
    if not isinstance(lldp, dict):
        return
    ifaces = lldp.get("interface")
    items: list[Any] = ifaces if isinstance(ifaces, list) else [ifaces] if isinstance(ifaces, dict) else []
    for item in items:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("name"), str):
            yield item["name"], item
            continue
        for name, body in item.items():
            if isinstance(body, dict):
                yield name, body


def _chassis(body: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(system name, chassis object): ``json`` keys the chassis by its name; ``json0`` has ``name`` inside."""
    ch = body.get("chassis")
    if isinstance(ch, list):
        ch = ch[0] if ch else {}
    if not isinstance(ch, dict):
        return None, {}
    if "id" in ch or "name" in ch:
        return _value(ch.get("name")), ch
    for name, inner in ch.items():
        if isinstance(inner, dict):
            return name, inner
    return None, {}


@framed
def parse_lldpctl_json(text: str) -> list[LldpNeighbor]:
    """Neighbours from lldpd's ``lldpctl -f json`` (or ``-f json0``; ``lldpcli -f json show neighbors``).

    An interface entry is a neighbour heard on it. Raises :class:`TextParseError` on text that is not JSON or a
    JSON document without an ``lldp`` object (another tool's JSON); ``{"lldp": {}}`` (what lldpd prints with no
    neighbour) and blank text are an empty list.

    A host whose NIC runs LLDP in firmware (Intel E810's FW-LLDP agent, on by default; Broadcom's) never sees the
    switch's frames in software, so lldpd lists nothing there: the cabling audit then uses the switch's side."""
    if not text.strip():
        return []
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        bad = text.splitlines()[exc.lineno - 1] if 0 < exc.lineno <= len(text.splitlines()) else text.strip()
        raise TextParseError(
            "lldpctl -f json",
            exc.lineno,
            f"not JSON ({exc.msg})",
            expected="lldpd's JSON",
            got=bad.strip()[:80],
            hint="pass the output of `lldpctl -f json` (lldpd 0.9 or later)",
        ) from None
    if not isinstance(doc, dict) or "lldp" not in doc:
        raise nothing_read("lldpctl -f json", text, 'lldpd\'s JSON ({"lldp": {"interface": ...}})')
    out: list[LldpNeighbor] = []
    for local, body in _lldpd_interfaces(doc):
        name, ch = _chassis(body)
        port = body.get("port")
        if isinstance(port, list):
            port = port[0] if port else {}
        port = port if isinstance(port, dict) else {}
        mgmt = ch.get("mgmt-ip")
        out.append(
            LldpNeighbor(
                local, name, _value(port.get("id")), _value(port.get("descr")), _value(ch.get("id")), _value(mgmt)
            )
        )
    return out


_SUBTYPES = ("mac", "ifname", "ifalias", "local", "ip", "name")


def _id_value(value: str) -> str | None:
    """lldpd's ``ChassisID``/``PortID`` value without its subtype word (``mac 00:..``, ``ifname Ethernet4``,
    ``local etp0``)."""
    word, _, rest = value.strip().partition(" ")
    if word in _SUBTYPES and rest.strip():
        return rest.strip()
    return value.strip() or None


LLDPCTL_TEXT = "'Interface: <port>, via: LLDP' blocks with SysName, ChassisID, PortID, PortDescr lines"


@framed
def parse_lldpctl_text(text: str) -> list[LldpNeighbor]:
    """Neighbours of lldpd's text form: ``lldpctl``/``lldpcli show neighbors [details]``, which SONiC prints for
    ``show lldp neighbors``. One block per ``Interface:    <port>, via: LLDP, ...`` line, with ``SysName:``,
    ``ChassisID:``, ``MgmtIP:``, ``PortID:`` (subtype word first) and ``PortDescr:``. A non-empty output with no
    such block that is not lldpd's empty answer is a :class:`TextParseError` (:func:`nothing_read`)."""
    out = lldpctl_blocks(text)
    if not out and not looks_empty(text):
        raise nothing_read("lldpctl", text, LLDPCTL_TEXT)
    return out


def lldpctl_blocks(text: str) -> list[LldpNeighbor]:
    """The neighbour blocks of lldpd's text form (framed text; no check that any was found)."""
    out: list[LldpNeighbor] = []
    block: dict[str, str] = {}
    local: str | None = None

    def flush() -> None:
        if local is not None:
            out.append(
                LldpNeighbor(
                    local,
                    block.get("sysname"),
                    _id_value(block.get("portid", "")),
                    block.get("portdescr") or None,
                    _id_value(block.get("chassisid", "")),
                    block.get("mgmtip") or None,
                )
            )

    for line in text.splitlines():
        m = re.match(r"^\s*Interface:\s+([^,\s]+),", line)
        if m:
            flush()
            local, block = m.group(1), {}
            continue
        key, sep, value = line.strip().partition(":")
        if (
            sep
            and local is not None
            and key.replace(" ", "").lower() in ("sysname", "portid", "portdescr", "chassisid", "mgmtip")
        ):
            block.setdefault(key.replace(" ", "").lower(), value.strip())
    flush()
    return out
