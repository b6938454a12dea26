"""NX-OS LLDP neighbours: ``show lldp neighbors detail`` (text).

One block per neighbour: ``Chassis id:``, ``Port id:``, ``Local Port id:`` (abbreviated, ``Eth1/1``),
``Port Description:``, ``System Name:``, ``System Description:`` (may run over several lines),
``Management Address:``. The local port is spelled out (``Ethernet1/1``) as the inventory names it; ``mgmt0``
stays. Also read: the summary ``show lldp neighbors`` table (``Device ID  Local Intf  Hold-time  Capability  Port
ID``, a long Device ID alone on its line), and the NX-API ``| json`` form (``TABLE_nbor_detail``/``ROW_nbor_detail``
with ``l_port_id``, ``sys_name``, ``port_id``, ``port_desc``, ``chassis_id``, ``mgmt_addr``: key names as public
NX-API collectors read them; no device capture of the JSON is in the repository, so that form is unverified and
the text form is polled).
Capture: tests/golden/readers/lldp/cisco_nxos-*.txt (ntc-templates).
"""

from __future__ import annotations

import re
from typing import Any

from fabricd.readers.framing import framed, json_object_text
from fabricd.readers.lldp import LldpNeighbor, from_tlvs, looks_empty, nothing_read

LLDP_COMMAND = "show lldp neighbors detail"

_FIELD = re.compile(
    r"^(Chassis id|Port id|Local Port id|Port Description|System Name|Management Address):"
    r"[ \t]*(.*?)\s*$",
    re.IGNORECASE,
)


def _long(port: str) -> str:
    m = re.match(r"(?i)^eth(?:ernet)?(\d.*)$", port)
    return f"Ethernet{m.group(1)}" if m else port


def _none(value: str | None) -> str | None:
    if not value or value.lower() in ("null", "not advertised", "n/a"):
        return None
    return value


def _rows(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [r for r in node if isinstance(r, dict)]
    return [node] if isinstance(node, dict) else []


def _json(text: str) -> list[LldpNeighbor] | None:
    try:
        doc = json_object_text(text)
    except ValueError:
        raise nothing_read(LLDP_COMMAND + " | json", text, "NX-API JSON") from None
    if doc is None:
        return None
    out = []
    if not isinstance(doc, dict):
        raise nothing_read(LLDP_COMMAND + " | json", text, '{"TABLE_nbor_detail": {"ROW_nbor_detail": ...}}')
    table = doc.get("TABLE_nbor_detail")
    for row in _rows(table.get("ROW_nbor_detail") if isinstance(table, dict) else None):
        local = row.get("l_port_id") or row.get("local_port_id")
        if not isinstance(local, str) or not local:
            continue

        def text_of(*keys: str, row: dict[str, Any] = row) -> str | None:
            for k in keys:
                v = row.get(k)
                if isinstance(v, str) and v.strip():
                    return _none(v.strip())
            return None

        out.append(
            LldpNeighbor(
                _long(local),
                text_of("sys_name"),
                text_of("port_id"),
                text_of("port_desc"),
                text_of("chassis_id"),
                text_of("mgmt_addr", "mgmt_addr_ipv4"),
            )
        )
    return out


_SUMMARY = re.compile(
    r"^(?:(?P<dev>\S+)\s+)?(?P<local>(?:Eth|Ethernet|mgmt|Po)\S*)\s+(?P<hold>\d+)\s+"
    r"(?P<caps>[BRTCWPSO, ]*?)\s+(?P<port>\S+)\s*$"
)


def _summary(text: str) -> list[LldpNeighbor]:
    out: list[LldpNeighbor] = []
    started = False
    pending: str | None = None
    for line in text.splitlines():
        if line.strip().startswith("Device ID"):
            started = True
            continue
        if not started or not line.strip() or line.strip().startswith("Total entries"):
            continue
        m = _SUMMARY.match(line.strip())
        if m:
            dev = m.group("dev") or pending
            out.append(LldpNeighbor(_long(m.group("local")), dev, m.group("port")))
            pending = None
        elif len(line.split()) == 1:
            pending = line.strip()  # a long Device ID wraps onto its own line
    return out


@framed
def parse_show_lldp_neighbors_detail(text: str) -> list[LldpNeighbor]:
    """Neighbours of ``show lldp neighbors detail`` (text or ``| json``), or of the summary ``show lldp
    neighbors``: a detail block starts at ``Chassis id:``; one without a local port is skipped. A non-empty output
    that reads no neighbour and is not an empty answer (``Total entries displayed: 0``; a JSON document without
    ``TABLE_nbor_detail`` rows) is a :class:`~fabricd.readers.textparse.TextParseError` naming its first line."""
    as_json = _json(text)
    if as_json is not None:
        return as_json
    if not re.search(r"(?mi)^\s*Chassis id:", text):
        found = _summary(text)
        if not found and not looks_empty(text):
            raise nothing_read(
                LLDP_COMMAND,
                text,
                "'Chassis id:' blocks (detail) or a 'Device ID  Local Intf  "
                "Hold-time  Capability  Port ID' table (summary)",
            )
        return found
    out: list[LldpNeighbor] = []
    block: dict[str, str] = {}

    def flush() -> None:
        local = block.get("local port id")
        if local:
            out.append(from_tlvs(_long(local), block, _none))

    for line in text.splitlines():
        m = _FIELD.match(line.strip())
        if not m:
            continue
        key = m.group(1).lower()
        if key == "chassis id":
            flush()
            block = {}
        block.setdefault(key, m.group(2))
    flush()
    return out
