"""PFC headroom per port, SONiC's formula (sonic-swss cfgmgr/buffer_headroom_mellanox.lua).

After a port sends XOFF, bytes keep arriving for one round trip on the cable plus the peer's reaction time. The
xoff headroom must absorb them:

    bytes_on_cable = 2 x cable_m x speed_bps / 198,000,000 m/s / 8
    peer_response  = pause_quanta(speed) x 512 bits / 8
    xoff           = lossless_mtu + port_mtu + bytes_on_cable + peer_response, rounded up to 1024 bytes
    size           = xoff + xon

Gearbox and MAC/PHY delays are 0 here (no gearbox); cell occupancy is taken as 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricd.model import Speed

LIGHT_SPEED_IN_CABLE_M_PER_S = 198_000_000
PAUSE_QUANTUM_BITS = 512
ROUND_TO_BYTES = 1024


@dataclass(frozen=True)
class Headroom:
    """Headroom of one lossless priority group on one port, all in bytes."""

    speed: Speed
    cable_m: float
    port_mtu_bytes: int
    lossless_mtu_bytes: int
    bytes_on_cable: float
    peer_response_bytes: int
    xoff_bytes: int
    xon_bytes: int

    @property
    def size_bytes(self) -> int:
        return self.xoff_bytes + self.xon_bytes


def headroom(
    speed: Speed,
    cable_m: float,
    port_mtu_bytes: int,
    *,
    lossless_mtu_bytes: int | None = None,
    xon_bytes: int = 19_456,
) -> Headroom:
    """Compute xoff/xon headroom. ``lossless_mtu_bytes`` None means the port MTU (the worst case)."""
    if cable_m < 0 or port_mtu_bytes <= 0:
        raise ValueError("cable length must be >= 0 and MTU > 0")
    lossless = port_mtu_bytes if lossless_mtu_bytes is None else lossless_mtu_bytes
    on_cable = 2 * cable_m * speed.bps / LIGHT_SPEED_IN_CABLE_M_PER_S / 8
    peer = speed.pause_quanta * PAUSE_QUANTUM_BITS // 8
    raw = lossless + port_mtu_bytes + on_cable + peer
    xoff = math.ceil(raw / ROUND_TO_BYTES) * ROUND_TO_BYTES
    return Headroom(
        speed=speed,
        cable_m=cable_m,
        port_mtu_bytes=port_mtu_bytes,
        lossless_mtu_bytes=lossless,
        bytes_on_cable=on_cable,
        peer_response_bytes=peer,
        xoff_bytes=xoff,
        xon_bytes=xon_bytes,
    )
