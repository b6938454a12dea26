"""EOS LLDP neighbours: ``show lldp neighbors detail | json`` (eAPI), and the summary ``show lldp neighbors | json``.

Detail: ``{"lldpNeighbors": {"<local port>": {"lldpNeighborInfo": [{"systemName", "chassisId",
"neighborInterfaceInfo": {"interfaceIdType", "interfaceId", "interfaceId_v2", "interfaceDescription"}}]}}}``;
``interfaceId`` is printed quoted (``"\\"Ethernet1\\""``) by EOS, ``interfaceId_v2`` is not, so the latter is read
first. Summary: ``{"lldpNeighbors": [{"port", "neighborDevice", "neighborPort", "ttl"}]}``.
The text form of the detail (``Interface Ethernet1 detected 1 LLDP neighbors:`` then ``Neighbor <chassis>/<port>``
blocks of ``- Chassis ID``, ``Port ID : "Ethernet1"``, ``- System Name: "..."``, ``- Port Description: "..."``,
``Management Address : ...``) is read too. Captures: tests/golden/readers/lldp/arista_eos-*.txt (ANTA's eAPI test
data, ntc-templates' text).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fabricd.readers.framing import framed
from fabricd.readers.lldp import LldpNeighbor, from_tlvs, looks_empty, nothing_read

LLDP_COMMAND = "show lldp neighbors detail | json"


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip().strip('"')
    return None


def _mgmt(info: dict[str, Any]) -> str | None:
    addrs = info.get("managementAddresses")
    if isinstance(addrs, list):
        for a in addrs:
            if isinstance(a, dict) and _str(a.get("address")):
                return _str(a.get("address"))
    return None


_IFACE = re.compile(r"^Interface\s+(\S+)\s+detected\s+\d+\s+LLDP neighbors?:")
_NEIGHBOR = re.compile(r"^\s*Neighbor\s+\S+,?\s+age\b")
_NONE_HEARD = re.compile(r"(?m)^\s*Interface\s+\S+\s+detected\s+0\s+LLDP neighbors?:")
_FIELD = re.compile(r"^\s*-?\s*(Chassis ID|Port ID|Port Description|System Name|Management Address)\s*:\s*(.*?)\s*$")


def _text(text: str) -> list[LldpNeighbor]:
    out: list[LldpNeighbor] = []
    local: str | None = None
    block: dict[str, str] | None = None

    def flush() -> None:
        if local is not None and block is not None:
            out.append(from_tlvs(local, block, _str))

    for line in text.splitlines():
        m = _IFACE.match(line.strip())
        if m:
            flush()
            local, block = m.group(1), None
            continue
        if _NEIGHBOR.match(line):
            flush()
            block = {}
            continue
        f = _FIELD.match(line)
        if f and block is not None:
            block.setdefault(f.group(1).lower(), f.group(2))  # the first Port ID (a later one is the LAG's)
    flush()
    return out


_EXPECTED = '{"lldpNeighbors": ...} (| json), or "Interface EthernetN detected N LLDP neighbors:" blocks'


@framed
def parse_show_lldp_neighbors(text: str) -> list[LldpNeighbor]:
    """Neighbours of the detail or the summary JSON, or of the detail's text form. A JSON document without
    ``lldpNeighbors``, or a text with no neighbour block that is not an empty answer, is a
    :class:`~fabricd.readers.textparse.TextParseError` naming its first line."""
    try:
        doc = json.loads(text)
    except ValueError:
        found = _text(text)
        if not found and not looks_empty(text) and not _NONE_HEARD.search(text):
            raise nothing_read(LLDP_COMMAND, text, _EXPECTED) from None
        return found
    table = doc.get("lldpNeighbors") if isinstance(doc, dict) else None
    out: list[LldpNeighbor] = []
    if table is None:
        raise nothing_read(LLDP_COMMAND, text, _EXPECTED)
    if isinstance(table, list):
        for row in table:
            if isinstance(row, dict) and _str(row.get("port")):
                out.append(
                    LldpNeighbor(
                        str(_str(row.get("port"))), _str(row.get("neighborDevice")), _str(row.get("neighborPort"))
                    )
                )
        return out
    if not isinstance(table, dict):
        return out
    for local, body in table.items():
        infos = body.get("lldpNeighborInfo") if isinstance(body, dict) else None
        for info in infos if isinstance(infos, list) else []:
            if not isinstance(info, dict):
                continue
            nii = info.get("neighborInterfaceInfo")
            nii = nii if isinstance(nii, dict) else {}
            port_id = _str(nii.get("interfaceId_v2")) or _str(nii.get("interfaceId")) or _str(info.get("portId"))
            out.append(
                LldpNeighbor(
                    local,
                    _str(info.get("systemName")),
                    port_id,
                    _str(nii.get("interfaceDescription")) or _str(info.get("portDescription")),
                    _str(info.get("chassisId")),
                    _mgmt(info),
                )
            )
    return out
