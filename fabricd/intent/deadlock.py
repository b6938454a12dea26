"""PFC deadlock risk: cycles in the buffer dependency graph of lossless traffic.

Model (Hu et al., "Deadlocks in Datacenter Networks: Why Do They Form, and How to Avoid Them", HotNets 2016):
a lossless packet held in the ingress buffer of switch ``v`` (entered from ``u``) waits for the ingress buffer of
the next switch ``w`` when ``w`` pauses ``v``. So every *turn* ``u -> v -> w`` taken by lossless traffic adds a
dependency "ingress buffer of v from u" -> "ingress buffer of w from v". A cycle of dependencies is a deadlock
waiting to happen: once those buffers fill, PFC pauses go round the cycle and nothing drains (the PFC watchdog only
breaks it after it formed, by dropping).

Routing: every pair of RDMA hosts exchanges lossless traffic over *all* equal-cost shortest paths between their
switches (ECMP over hop count, as BGP/OSPF route a Clos). In an intact Clos these are up-down paths and the graph
is acyclic; valley paths (down then up again), rings and some link failures create cycles.

Algorithm (near-linear on a Clos):

1. Switches are nodes, ``links`` are edges (parallel links collapse to one switch-level channel ``u -> v``; they
   have the same dependencies). Endpoints are switches with an RDMA NIC cabled to them.
2. Endpoints with identical neighbour sets (the leaves of a pod) are *twins*: swapping two twins is a graph
   automorphism, so one BFS per twin class gives the turns toward every member (relabelled). On a Clos this is one
   BFS per pod, not per leaf, let alone per host.
3. Per class representative ``D``: BFS distances to ``D``; nodes on a shortest path from any other endpoint to
   ``D`` are marked top-down; at each marked transit node ``v`` the turns are the *block* (marked predecessors one
   hop further from ``D``) x (successors one hop closer).
4. Only switches that are transit somewhere can be on a cycle (a channel ``u -> v`` has incoming dependencies only
   if ``u`` is transit), so blocks are restricted to transit switches - on a Clos that drops every leaf.
5. Each block becomes one auxiliary node (|P| + |S| edges instead of |P| x |S|); Tarjan's SCC finds the cycles,
   and one cycle per strongly connected component is reported with its ports.

``--fail-links N`` re-runs the analysis with every combination of N switch-to-switch links removed, or with a
seeded random sample of ``max_scenarios`` combinations when there are more (the output says which). It stops
after ``max_failing`` failing scenarios (``tried`` then counts the scenarios actually run).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricd.model import Fabric, Transport, split_endpoint

MAX_CYCLES = 5


@dataclass(frozen=True)
class Hop:
    """One buffer on a cycle: lossless packets enter ``switch`` on ``ingress`` and wait to leave on ``egress``."""

    switch: str
    ingress: str
    egress: str


@dataclass(frozen=True)
class Cycle:
    """A cyclic buffer dependency: each hop's buffer waits on the next hop's; ``links`` indexes ``fabric.links``."""

    hops: tuple[Hop, ...]
    links: tuple[int, ...]

    def describe(self) -> str:
        """``leaf1 (Ethernet48 -> Ethernet56) -> spine2 (swp1 -> swp2) -> ... -> leaf1``."""
        parts = [f"{h.switch} ({h.ingress} -> {h.egress})" for h in self.hops]
        return " -> ".join([*parts, self.hops[0].switch]) if self.hops else ""


@dataclass(frozen=True)
class Topology:
    """The switch-level graph of a fabric: nodes are (first definitions of) switches, edges are resolvable
    switch-to-switch links, endpoints are switches with an RDMA NIC cabled to them."""

    names: tuple[str, ...]
    port_names: tuple[tuple[str, ...], ...]
    links: dict[int, tuple[int, int, int, int]]
    endpoints: frozenset[int]

    @classmethod
    def from_fabric(cls, fabric: Fabric) -> Topology:
        index: dict[str, int] = {}
        for i, s in enumerate(fabric.switches):
            index.setdefault(s.name, i)
        ports: dict[tuple[str, str], tuple[int, int]] = {}
        for i, s in enumerate(fabric.switches):
            if index[s.name] == i:
                for j, p in enumerate(s.ports):
                    ports.setdefault((s.name, p.name), (i, j))

        def resolve(endpoint: str) -> tuple[int, int] | None:
            try:
                return ports.get(split_endpoint(endpoint))
            except ValueError:
                return None

        links: dict[int, tuple[int, int, int, int]] = {}
        for k, link in enumerate(fabric.links):
            a, b = resolve(link.a), resolve(link.b)
            if a is not None and b is not None and a[0] != b[0]:
                links[k] = (a[0], a[1], b[0], b[1])
        endpoints = set()
        for h in fabric.hosts:
            for n in h.nics:
                # only NICs that send lossless traffic: a NIC may run lossy RoCE or iWARP in a lossless fabric
                lossless = (n.transport or fabric.policy.transport) == Transport.ROCE_V2_LOSSLESS
                if n.rdma_device is not None and n.peer is not None and lossless:
                    ref = resolve(n.peer)
                    if ref is not None:
                        endpoints.add(ref[0])
        return cls(
            names=tuple(s.name for s in fabric.switches),
            port_names=tuple(tuple(p.name for p in s.ports) for s in fabric.switches),
            links=links,
            endpoints=frozenset(endpoints),
        )


@dataclass(frozen=True)
class DeadlockReport:
    """Result of one analysis. ``components`` lists the endpoint switches of each connected island (more than one
    means some RDMA hosts cannot reach each other)."""

    endpoints: int
    classes: int
    transit_switches: int
    dependencies: int
    cycles: tuple[Cycle, ...]
    components: tuple[tuple[str, ...], ...]

    @property
    def has_cycle(self) -> bool:
        return bool(self.cycles)


@dataclass(frozen=True)
class FailureReport:
    """Result of ``--fail-links N``: which N-link failures create a cycle (``failing`` holds the link indexes and
    the first cycle of each, in the order tried)."""

    n: int
    candidate_links: int
    total_scenarios: int
    tried: int
    sampled: bool
    seed: int
    failing: tuple[tuple[tuple[int, ...], Cycle], ...] = field(default=())

    @property
    def method(self) -> str:
        if self.sampled:
            return (
                f"a seeded random sample of {self.tried} of {self.total_scenarios} {self.n}-link failures "
                f"(seed {self.seed})"
            )
        return f"all {self.tried} {self.n}-link failures"


def _bfs(start: int, nb: list[list[int]], n: int) -> tuple[list[int], list[list[int]]]:
    dist = [-1] * n
    dist[start] = 0
    levels = [[start]]
    frontier = [start]
    d = 0
    while frontier:
        d += 1
        nxt = []
        for v in frontier:
            for w in nb[v]:
                if dist[w] < 0:
                    dist[w] = d
                    nxt.append(w)
        if nxt:
            levels.append(nxt)
        frontier = nxt
    return dist, levels


def _components(nb: list[list[int]], endpoints: frozenset[int], names: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    seen: set[int] = set()
    out = []
    for e in sorted(endpoints):
        if e in seen:
            continue
        comp = [e]
        seen.add(e)
        queue = deque([e])
        while queue:
            v = queue.popleft()
            for w in nb[v]:
                if w not in seen:
                    seen.add(w)
                    comp.append(w)
                    queue.append(w)
        out.append(tuple(names[v] for v in sorted(comp) if v in endpoints))
    return tuple(out)


Block = tuple[int, list[int], list[int]]
"""A turn through switch ``v``: the predecessors it receives from and the successors it forwards to, toward one class's
representative."""
Turn = tuple[int, frozenset[int], frozenset[int]]


def _adjacency(topo: Topology, failed: frozenset[int]) -> tuple[list[set[int]], dict[tuple[int, int], list[int]]]:
    """Switch neighbours and the links of each directed channel, without the ``failed`` links."""
    nbrs: list[set[int]] = [set() for _ in topo.names]
    channel_links: dict[tuple[int, int], list[int]] = {}
    for k, (u, _pu, v, _pv) in topo.links.items():
        if k in failed:
            continue
        nbrs[u].add(v)
        nbrs[v].add(u)
        channel_links.setdefault((u, v), []).append(k)
        channel_links.setdefault((v, u), []).append(k)
    return nbrs, channel_links


def _class_blocks(rep: int, nb: list[list[int]], endpoints: frozenset[int]) -> tuple[list[Block], set[int]]:
    """Phase 1 for one twin class: one BFS from its representative; the blocks of the shortest paths from every other
    endpoint toward it, and the switches that forward (transit) on them."""
    n = len(nb)
    dist, levels = _bfs(rep, nb, n)
    active = [False] * n
    for e in endpoints:
        if e != rep and dist[e] > 0:
            active[e] = True
    blocks: list[Block] = []
    transit: set[int] = set()
    for d in range(len(levels) - 1, 0, -1):
        for v in levels[d]:
            if not active[v]:
                continue
            succ = [w for w in nb[v] if dist[w] == d - 1]
            for w in succ:
                active[w] = True
            pred = [u for u in nb[v] if dist[u] == d + 1 and active[u]]
            if pred:
                transit.add(v)
                blocks.append((v, pred, succ))
    return blocks, transit


def _turns(per_class: list[tuple[list[int], list[Block]]], transit: set[int]) -> dict[Turn, None]:
    """Phase 2: keep turns whose both outer switches are transit somewhere; expand twins when they are transit."""
    unique: dict[Turn, None] = {}
    for members, blocks in per_class:
        rep = members[0]
        expand = len(members) > 1 and any(m in transit for m in members)
        for v, pred, succ in blocks:
            p = [u for u in pred if u in transit]
            s = [w for w in succ if w in transit]
            if not p or not s:
                continue
            if not expand:
                unique.setdefault((v, frozenset(p), frozenset(s)), None)
                continue
            for other in members:
                swap = {rep: other, other: rep}
                unique.setdefault(
                    (swap.get(v, v), frozenset(swap.get(x, x) for x in p), frozenset(swap.get(x, x) for x in s)), None
                )
    return unique


def _dependency_graph(turns: dict[Turn, None]) -> tuple[list[list[int]], list[tuple[int, int]], int]:
    """Channel nodes (u, v) and one auxiliary node per turn: successor lists, each node's channel ((-1, -1) for an
    auxiliary node) and the number of channel dependencies."""
    chan_id: dict[tuple[int, int], int] = {}
    chans: list[tuple[int, int]] = []
    succs: list[list[int]] = []

    def node(ch: tuple[int, int]) -> int:
        got = chan_id.get(ch)
        if got is None:
            got = chan_id[ch] = len(succs)
            chans.append(ch)
            succs.append([])
        return got

    edges = 0
    for v, block_pred, block_succ in turns:
        aux = len(succs)
        chans.append((-1, -1))
        succs.append([])
        for u in sorted(block_pred):
            succs[node((u, v))].append(aux)
        succs[aux].extend(node((v, w)) for w in sorted(block_succ))
        edges += len(block_pred) * len(block_succ)
    return succs, chans, edges


def analyze(topo: Topology, failed: frozenset[int] = frozenset(), max_cycles: int = MAX_CYCLES) -> DeadlockReport:
    """Find cyclic buffer dependencies with the links ``failed`` (indexes into ``fabric.links``) removed."""
    nbrs, channel_links = _adjacency(topo, failed)
    nb = [sorted(s) for s in nbrs]
    classes: dict[frozenset[int], list[int]] = {}
    for e in sorted(topo.endpoints):
        classes.setdefault(frozenset(nbrs[e]), []).append(e)
    per_class: list[tuple[list[int], list[Block]]] = []
    transit: set[int] = set()
    for members in classes.values():
        blocks, through = _class_blocks(members[0], nb, topo.endpoints)
        per_class.append((members, blocks))
        transit |= through
    succs, chans, edges = _dependency_graph(_turns(per_class, transit))
    cycles = _cycles(succs, chans, max_cycles)
    return DeadlockReport(
        endpoints=len(topo.endpoints),
        classes=len(classes),
        transit_switches=len(transit),
        dependencies=edges,
        cycles=tuple(_describe(topo, c, channel_links) for c in cycles),
        components=_components(nb, topo.endpoints, topo.names),
    )


def _cycles(succs: list[list[int]], chans: list[tuple[int, int]], limit: int) -> list[list[tuple[int, int]]]:
    """One cycle (as a channel sequence) per non-trivial strongly connected component, up to ``limit``."""
    sccs = _tarjan(succs)
    out = []
    for comp in sccs:
        if len(comp) < 2:
            continue
        members = set(comp)
        start = min((c for c in comp if chans[c][0] >= 0), key=lambda c: chans[c])
        # BFS inside the component from start back to start.
        parent: dict[int, int] = {}
        queue = deque([start])
        found = None
        while queue and found is None:
            v = queue.popleft()
            for w in succs[v]:
                if w not in members:
                    continue
                if w == start:
                    found = v
                    break
                if w not in parent:
                    parent[w] = v
                    queue.append(w)
        if found is None:
            continue
        path = [found]
        while path[-1] != start:
            path.append(parent[path[-1]])
        path.reverse()
        out.append([chans[c] for c in path if chans[c][0] >= 0])
    out.sort()
    return out[:limit]


def _tarjan(succs: list[list[int]]) -> list[list[int]]:
    """Strongly connected components, iteratively (no recursion limit)."""
    n = len(succs)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            edges = succs[v]
            if i < len(edges):
                work[-1] = (v, i + 1)
                w = edges[i]
                if index[w] < 0:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                comps.append(comp)
    return comps


def _describe(
    topo: Topology, channels: list[tuple[int, int]], channel_links: dict[tuple[int, int], list[int]]
) -> Cycle:
    """Turn a channel cycle (u0 -> u1, u1 -> u2, ...) into hops with port names (first of parallel links)."""

    def ports(ch: tuple[int, int]) -> tuple[int, str, str]:
        k = min(channel_links[ch])
        a, pa, b, pb = topo.links[k]
        if (a, b) == ch:
            return k, topo.port_names[a][pa], topo.port_names[b][pb]
        return k, topo.port_names[b][pb], topo.port_names[a][pa]

    hops = []
    links = []
    for i, ch in enumerate(channels):
        k, _out_port, in_port = ports(ch)
        links.append(k)
        _k2, egress, _in2 = ports(channels[(i + 1) % len(channels)])
        hops.append(Hop(switch=topo.names[ch[1]], ingress=in_port, egress=egress))
    return Cycle(hops=tuple(hops), links=tuple(links))


def fail_links(
    topo: Topology,
    n: int,
    *,
    max_scenarios: int = 2000,
    seed: int = 0,
    max_failing: int = 50,
    progress: Callable[[int, int], None] | None = None,
) -> FailureReport:
    """Try N-link failures of switch-to-switch links; report those whose remaining fabric has a cycle.

    ``progress(done, total)`` is called after each scenario (the CLI draws a progress bar with it)."""
    candidates = sorted(topo.links)
    total = math.comb(len(candidates), n) if 0 < n <= len(candidates) else 0
    sampled = total > max_scenarios
    if sampled:
        rng = random.Random(seed)
        chosen: dict[tuple[int, ...], None] = {}
        while len(chosen) < max_scenarios:
            chosen.setdefault(tuple(sorted(rng.sample(candidates, n))), None)
        scenarios: list[tuple[int, ...]] = list(chosen)
    else:
        scenarios = list(itertools.combinations(candidates, n)) if total else []
    failing = []
    tried = 0
    for scenario in scenarios:
        tried += 1
        report = analyze(topo, frozenset(scenario), max_cycles=1)
        if progress is not None:
            progress(tried, len(scenarios))
        if report.cycles:
            failing.append((scenario, report.cycles[0]))
            if len(failing) >= max_failing:
                break
    return FailureReport(
        n=n,
        candidate_links=len(candidates),
        total_scenarios=total,
        tried=tried,
        sampled=sampled,
        seed=seed,
        failing=tuple(failing),
    )
