"""SONiC's LLDP neighbour table: ``show lldp table`` (sonic-utilities ``lldpshow``, read from STATE_DB/lldpd).

Columns ``LocalPort  RemoteDevice  RemotePortID  Capability  RemotePortDescr``; a SONiC neighbour advertises its
port alias as the port id (``fortyGigE0/4``) and its port name as the description (``Ethernet4``), so both are kept.
The management port (``eth0``) is listed too; the cabling audit ignores ports the inventory does not name.
Captures: tests/golden/readers/lldp/sonic-show-lldp-table-*.txt and sonic-show-lldp-neighbors-*.txt.
"""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.lldp import LldpNeighbor, lldpctl_blocks, looks_empty, nothing_read, text_columns

LLDP_COMMAND = "show lldp table"


@framed
def parse_show_lldp_table(text: str) -> list[LldpNeighbor]:
    """Neighbours of ``show lldp table``, one per row (a port may list several). The detailed ``show lldp
    neighbors`` (lldpd's own text, ``Interface:    Ethernet0, via: LLDP`` blocks) is read too. A non-empty output
    that is neither, nor an empty table, is a :class:`~fabricd.readers.textparse.TextParseError` naming its first
    line."""
    if re.search(r"(?m)^\s*Interface:\s+\S+, via:", text):
        return lldpctl_blocks(text)
    out = []
    for row in text_columns(text):
        local = row.get("LocalPort", "")
        if not local:
            continue
        out.append(
            LldpNeighbor(
                local,
                row.get("RemoteDevice") or None,
                row.get("RemotePortID") or None,
                row.get("RemotePortDescr") or None,
            )
        )
    if not out and not looks_empty(text):
        raise nothing_read(
            LLDP_COMMAND,
            text,
            "a LocalPort  RemoteDevice  RemotePortID ... table over a dashed "
            "line, or lldpd's 'Interface: <port>, via: LLDP' blocks",
        )
    return out
