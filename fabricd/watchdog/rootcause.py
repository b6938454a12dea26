"""Root cause of a pause storm: walk the topology and the pause directions to the root of the pause tree.

Pause spreads hop by hop *against* the traffic (Guo et al., SIGCOMM 2016): a receiver that stops draining sends
pause to its peer; the peer's egress queue fills, so the peer's ingress buffers fill and it sends pause out of its
other ports; and so on upstream. Reading that backwards, from any paused port:

- a port that **receives** pause (``rx``) is paused by its link peer, which must be **sending** pause (``tx``);
- a switch port that **sends** pause (``tx``) does so because its switch cannot drain: some *other* port of the
  same switch **receives** pause (``rx``) on the same priority;
- a NIC that sends pause, or a switch port that sends pause while no other port of its switch is paused, is
  where the pause is generated: a **root**. A NIC root is the stalled receiver of the Microsoft paper.

Walking from every active storm gives, per priority, the roots and how many storms lead to each; the origin is
the root most storms lead to (ties: an observed stalled NIC first, then an observed switch port, then a peer that
was inferred but not observed). A walk that comes back to a port it already passed is a cyclic buffer
dependency: a PFC deadlock, reported as such.

The topology comes from the inventory: ``links`` (switch to switch) and each NIC's ``peer`` (host to switch).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from fabricd.model import Fabric
from fabricd.model.topology import split_endpoint

from .types import ChannelKey, Direction, Scope

Port = tuple[str, str]
"""(device, interface)."""
Node = tuple[str, str, Direction]


class OriginKind(StrEnum):
    STALLED_RECEIVER = "stalled_receiver"
    """A NIC sending pause: its receive pipeline does not drain."""
    SWITCH_CONGESTION = "switch_congestion"
    """A switch port sending pause while no other port of that switch is paused."""
    INFERRED_PEER = "inferred_peer"
    """The link peer of a paused port, not watched (or not yet seen storming): it must be sending pause."""
    DEADLOCK = "deadlock"
    """The paused ports form a cycle (cyclic buffer dependency)."""
    UNKNOWN = "unknown"
    """A paused port whose peer the inventory does not name."""


@dataclass(frozen=True)
class Topology:
    """Who is cabled to whom, and which devices are switches."""

    peers: dict[Port, Port] = field(default_factory=dict)
    switches: frozenset[str] = frozenset()

    @classmethod
    def from_fabric(cls, fabric: Fabric) -> Topology:
        peers: dict[Port, Port] = {}
        for link in fabric.links:
            try:
                a, b = split_endpoint(link.a), split_endpoint(link.b)
            except ValueError:
                continue
            peers[a] = b
            peers[b] = a
        for host in fabric.hosts:
            for nic in host.nics:
                if nic.peer is None:
                    continue
                try:
                    sw = split_endpoint(nic.peer)
                except ValueError:
                    continue
                peers[(host.name, nic.netdev)] = sw
                peers[sw] = (host.name, nic.netdev)
        return cls(peers=peers, switches=frozenset(s.name for s in fabric.switches))

    def is_switch(self, device: str, scope: Scope | None = None) -> bool:
        if device in self.switches:
            return True
        return scope is Scope.SWITCH


@dataclass(frozen=True)
class Attribution:
    """Where one storm's pause comes from."""

    origin: str | None
    kind: OriginKind
    path: tuple[str, ...]


@dataclass(frozen=True)
class Origin:
    """A root of a pause tree with the number of active storms that lead to it."""

    priority: int
    device: str
    interface: str
    scope: Scope
    kind: OriginKind
    affected: int

    @property
    def port(self) -> str:
        return f"{self.device}:{self.interface}"


@dataclass(frozen=True)
class RootCause:
    per_storm: dict[ChannelKey, Attribution]
    origins: tuple[Origin, ...]


def analyse(active: Iterable[ChannelKey], topology: Topology) -> RootCause:
    """Attribute every active storm to the most likely origin port of its priority's pause tree."""
    by_prio: dict[int, list[ChannelKey]] = {}
    for key in active:
        by_prio.setdefault(key.priority, []).append(key)
    per_storm: dict[ChannelKey, Attribution] = {}
    origins: list[Origin] = []
    for prio in sorted(by_prio):
        keys = by_prio[prio]
        p_storms, p_origins = _analyse_priority(prio, keys, topology)
        per_storm.update(p_storms)
        origins.extend(p_origins)
    return RootCause(per_storm=per_storm, origins=tuple(origins))


class _Walker:
    def __init__(self, keys: list[ChannelKey], topology: Topology) -> None:
        self.topology = topology
        self.active: set[Node] = {(k.device, k.interface, k.direction) for k in keys}
        self.scope_of: dict[str, Scope] = {k.device: k.scope for k in keys}
        self.rx_by_device: dict[str, list[str]] = {}
        for k in keys:
            if k.direction is Direction.RX:
                self.rx_by_device.setdefault(k.device, []).append(k.interface)

    def is_switch(self, device: str) -> bool:
        return self.topology.is_switch(device, self.scope_of.get(device))

    def next(self, node: Node) -> list[Node]:
        device, iface, direction = node
        if direction is Direction.RX:
            peer = self.topology.peers.get((device, iface))
            return [] if peer is None else [(peer[0], peer[1], Direction.TX)]
        if not self.is_switch(device):
            return []  # a NIC sending pause: the stalled receiver
        return [(device, q, Direction.RX) for q in sorted(self.rx_by_device.get(device, [])) if q != iface]

    def kind(self, node: Node) -> OriginKind:
        device, _iface, direction = node
        if direction is Direction.RX:
            return OriginKind.UNKNOWN
        observed = node in self.active
        if not observed:
            return OriginKind.INFERRED_PEER
        return OriginKind.SWITCH_CONGESTION if self.is_switch(device) else OriginKind.STALLED_RECEIVER


_RANK = {
    OriginKind.STALLED_RECEIVER: 0,
    OriginKind.SWITCH_CONGESTION: 1,
    OriginKind.INFERRED_PEER: 2,
    OriginKind.UNKNOWN: 3,
    OriginKind.DEADLOCK: 4,
}


def _analyse_priority(
    prio: int, keys: list[ChannelKey], topology: Topology
) -> tuple[dict[ChannelKey, Attribution], list[Origin]]:
    walker = _Walker(keys, topology)
    reach: dict[ChannelKey, set[Node]] = {}
    cycles: dict[ChannelKey, list[Node]] = {}
    for key in keys:
        start: Node = (key.device, key.interface, key.direction)
        terminals, cycle = _terminals(walker, start)
        reach[key] = terminals
        if cycle:
            cycles[key] = cycle
    score: dict[Node, int] = {}
    for terms in reach.values():
        for node in terms:
            score[node] = score.get(node, 0) + 1

    def order(node: Node) -> tuple[int, int, str, str]:
        return (-score[node], _RANK[walker.kind(node)], node[0], node[1])

    per_storm: dict[ChannelKey, Attribution] = {}
    chosen: dict[Node, int] = {}
    for key in keys:
        terms = reach[key]
        start = (key.device, key.interface, key.direction)
        if not terms:
            cycle = cycles.get(key, [])
            per_storm[key] = Attribution(
                origin=None,
                kind=OriginKind.DEADLOCK if cycle else OriginKind.UNKNOWN,
                path=tuple(f"{d}:{i}" for d, i, _ in cycle) or (f"{key.device}:{key.interface}",),
            )
            continue
        best = min(terms, key=order)
        chosen[best] = chosen.get(best, 0) + 1
        per_storm[key] = Attribution(
            origin=f"{best[0]}:{best[1]}",
            kind=walker.kind(best),
            path=_path(walker, start, best),
        )
    origins = [
        Origin(
            priority=prio,
            device=node[0],
            interface=node[1],
            scope=Scope.SWITCH if walker.is_switch(node[0]) else Scope.NIC,
            kind=walker.kind(node),
            affected=count,
        )
        for node, count in sorted(chosen.items(), key=lambda item: order(item[0]))
    ]
    return per_storm, origins


def _terminals(walker: _Walker, start: Node) -> tuple[set[Node], list[Node]]:
    """Roots reachable from ``start``; also the first cycle met (a deadlock), if any."""
    terminals: set[Node] = set()
    cycle: list[Node] = []
    stack: list[tuple[Node, list[Node]]] = [(start, [start])]
    seen: set[Node] = set()
    while stack:
        node, path = stack.pop()
        nxt = walker.next(node)
        if not nxt:
            terminals.add(node)
            continue
        for n in nxt:
            if n in path:
                if not cycle:
                    cycle = path[path.index(n) :]
                continue
            if n in seen:
                continue
            seen.add(n)
            stack.append((n, [*path, n]))
    return terminals, cycle


def _path(walker: _Walker, start: Node, goal: Node) -> tuple[str, ...]:
    """The shortest walk from ``start`` to ``goal`` as 'device:interface' strings (consecutive repeats merged)."""
    prev: dict[Node, Node | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for n in walker.next(node):
            if n not in prev:
                prev[n] = node
                queue.append(n)
    out: list[str] = []
    cur: Node | None = goal if goal in prev else None
    while cur is not None:
        name = f"{cur[0]}:{cur[1]}"
        if not out or out[-1] != name:
            out.append(name)
        cur = prev[cur]
    return tuple(reversed(out))
