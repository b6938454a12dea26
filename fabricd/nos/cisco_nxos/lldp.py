"""NX-OS LLDP neighbours: ``show lldp neighbors detail`` (text).

One block per neighbour: ``Chassis id:``, ``Port id:``, ``Local Port id:`` (abbreviated, ``Eth1/1``),
``Port Description:``, ``System Name:``, ``System Description:`` (may run over several lines),
``Management Address:``. The local port is spelled out (``Ethernet1/1``) as the inventory names it; ``mgmt0``
stays. No public capture of the ``| json`` form was found, so it is not read.
Capture: tests/golden/readers/lldp/cisco_nxos-*.txt (ntc-templates).
"""

from __future__ import annotations

import re

from fabricd.readers.lldp import LldpNeighbor

LLDP_COMMAND = "show lldp neighbors detail"

_FIELD = re.compile(r"^(Chassis id|Port id|Local Port id|Port Description|System Name|Management Address):"
                    r"[ \t]*(.*?)\s*$", re.IGNORECASE)


def _long(port: str) -> str:
    m = re.match(r"(?i)^eth(?:ernet)?(\d.*)$", port)
    return f"Ethernet{m.group(1)}" if m else port


def _none(value: str | None) -> str | None:
    if not value or value.lower() in ("null", "not advertised", "n/a"):
        return None
    return value


def parse_show_lldp_neighbors_detail(text: str) -> list[LldpNeighbor]:
    """Neighbours of ``show lldp neighbors detail``: a block starts at ``Chassis id:``; one without a local port is
    skipped."""
    out: list[LldpNeighbor] = []
    block: dict[str, str] = {}

    def flush() -> None:
        local = block.get("local port id")
        if local:
            out.append(LldpNeighbor(_long(local), _none(block.get("system name")), _none(block.get("port id")),
                                    _none(block.get("port description")), _none(block.get("chassis id")),
                                    _none(block.get("management address"))))

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
