"""``perfquery`` text (infiniband-diags) for InfiniBand ports: ``perfquery -x``, ``perfquery -l -x`` and ``-E``.

perfquery needs a MAD-capable port (``ib_umad``); it fails on RoCE ports ("mad_rpc_open_port: client_register for
mgmt 1 failed", seen in the Soft-RoCE lab VM), so for RoCE the sysfs reader (:mod:`fabricd.readers.rdma`) is the
source. This parser serves IB fabrics and offline captures.

Format: one block per port, a ``# <kind> counters: Lid <lid> port <port> (CapMask: ...)`` header followed by
``Name:.....value`` lines (dot padding to column 33). ``PortXmitData``/``PortRcvData`` count 4-octet units.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .framing import framed
from .rdma import DATA_4_OCTETS, PMA_COUNTER_MAP, RdmaKey
from .textparse import TextParseError

_HEADER = re.compile(
    r"^#\s*(?P<kind>.+?)\s+counters:\s+Lid\s+(?P<lid>\d+)\s+port\s+(?P<port>\d+)(?:\s*\((?P<cap>[^)]*)\))?"
)
_FIELD = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*):\.*(?P<value>\S+)\s*$")

SELECT_FIELDS = frozenset({"PortSelect", "CounterSelect", "CounterSelect2"})
"""Fields that describe the query, not counters."""

PERFQUERY_TO_SYSFS: dict[str, str] = {
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait",
}
"""perfquery field names -> the sysfs PMA names (same IBTA attributes), so both share one vocabulary."""


@dataclass(frozen=True, slots=True)
class PerfqueryBlock:
    """One ``# ... counters:`` block: its kind (``Port extended``, ``PortRcvErrorDetails``...), LID, port, CapMask
    text and counters (raw units; ``PortXmitData``/``PortRcvData`` in 4-octet units)."""

    kind: str
    lid: int
    port: int
    cap_mask: str | None
    counters: Mapping[str, int]

    def normalised(self) -> dict[RdmaKey, int]:
        """Counters by meaning, the same keys as :meth:`fabricd.readers.rdma.RdmaPort.normalised`; data in bytes."""
        out: dict[RdmaKey, int] = {}
        for name, value in self.counters.items():
            sysfs = PERFQUERY_TO_SYSFS.get(name)
            if sysfs is None:
                continue
            out[RdmaKey(*PMA_COUNTER_MAP[sysfs])] = value * 4 if sysfs in DATA_4_OCTETS else value
        return out


@framed
def parse_perfquery(text: str) -> tuple[PerfqueryBlock, ...]:
    """Parse perfquery output (one or several port blocks). Lines before the first header are ignored; an output
    with content and no block is a :class:`~fabricd.readers.textparse.TextParseError` naming its first line."""
    blocks: list[PerfqueryBlock] = []
    current: dict[str, int] | None = None
    head: re.Match[str] | None = None

    def flush() -> None:
        if head is not None and current is not None:
            blocks.append(
                PerfqueryBlock(
                    kind=head.group("kind"),
                    lid=int(head.group("lid")),
                    port=int(head.group("port")),
                    cap_mask=head.group("cap"),
                    counters=current,
                )
            )

    for line in text.splitlines():
        m = _HEADER.match(line)
        if m is not None:
            flush()
            head, current = m, {}
            continue
        if current is None:
            continue
        f = _FIELD.match(line.strip())
        if f is None or f.group("name") in SELECT_FIELDS:
            continue
        try:
            current[f.group("name")] = int(f.group("value"), 0)
        except ValueError:
            continue
    flush()
    if not blocks and text.strip():
        n, first = next((n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip())
        raise TextParseError(
            "perfquery",
            n,
            "no port counter block",
            expected="'# Port counters: Lid N port M' "
            "or '# Port extended counters: ...' followed by Name:....value lines",
            got=first.strip(),
        )
    return tuple(blocks)
