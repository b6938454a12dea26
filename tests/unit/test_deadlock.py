"""PFC deadlock analysis: rings and valley routing deadlock, Clos fabrics do not; the fast algorithm (twin classes,
transit pruning, auxiliary block nodes) agrees with a brute-force enumeration of every shortest path."""

from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabricd.intent.deadlock import Topology, analyze, fail_links
from fabricd.inventory import load_inventory
from fabricd.model import Fabric

REPO = Path(__file__).resolve().parents[2]


def fabric(switches: list[str], links: list[tuple[str, str]], hosts_on: list[str]) -> Fabric:
    """Switches with one port per link end and one host port per entry of ``hosts_on``."""
    ports: dict[str, list[str]] = {s: [] for s in switches}
    link_data = []
    for a, b in links:
        pa, pb = f"e{len(ports[a])}", f"e{len(ports[b])}"
        ports[a].append(pa)
        ports[b].append(pb)
        link_data.append({"a": f"{a}:{pa}", "b": f"{b}:{pb}"})
    hosts: list[dict[str, Any]] = []
    for s in hosts_on:
        p = f"h{len(ports[s])}"
        ports[s].append(p)
        hosts.append(
            {"name": f"host{len(hosts)}", "nics": [{"netdev": "eth0", "rdma_device": "mlx5_0", "peer": f"{s}:{p}"}]}
        )
    return Fabric.model_validate(
        {
            "switches": [
                {
                    "name": s,
                    "platform": "sonic",
                    "mgmt": {"host": "192.0.2.1"},
                    "ports": [{"name": p} for p in ports[s]],
                }
                for s in switches
            ],
            "links": link_data,
            "hosts": hosts,
        }
    )


def ring(n: int) -> Fabric:
    names = [f"s{i}" for i in range(n)]
    return fabric(names, [(names[i], names[(i + 1) % n]) for i in range(n)], names)


def clos(spines: int, leaves: int, missing: tuple[tuple[str, str], ...] = ()) -> Fabric:
    sp = [f"spine{i}" for i in range(1, spines + 1)]
    lv = [f"leaf{i}" for i in range(1, leaves + 1)]
    links = [(leaf, s) for leaf in lv for s in sp if (leaf, s) not in missing]
    return fabric(sp + lv, links, lv)


def test_ring_of_four_deadlocks_both_ways() -> None:
    report = analyze(Topology.from_fabric(ring(4)))
    assert len(report.cycles) == 2  # clockwise and counter-clockwise, separate components
    cw = next(c for c in report.cycles if c.hops[0].switch == "s1")
    assert cw.describe() == "s1 (e0 -> e1) -> s2 (e0 -> e1) -> s3 (e0 -> e1) -> s0 (e1 -> e0) -> s1"
    assert sorted(cw.links) == [0, 1, 2, 3]


def test_ring_of_three_has_no_transit_traffic() -> None:
    report = analyze(Topology.from_fabric(ring(3)))
    assert not report.cycles and report.transit_switches == 0


def test_clos_is_deadlock_free_even_with_one_failure() -> None:
    topo = Topology.from_fabric(clos(2, 4))
    assert not analyze(topo).cycles
    single = fail_links(topo, 1)
    assert (single.tried, single.total_scenarios, single.sampled, single.failing) == (8, 8, False, ())


def test_valley_routing_deadlocks() -> None:
    """leaf1 only reaches spine2 and leaf4 only spine1: leaf1<->leaf4 traffic goes down into leaf2/leaf3 and up
    again; together with ordinary up-down paths this closes buffer cycles through the middle leaves."""
    report = analyze(Topology.from_fabric(clos(2, 4, missing=(("leaf1", "spine1"), ("leaf4", "spine2")))))
    assert report.cycles
    for cycle in report.cycles:
        switches = [h.switch for h in cycle.hops]
        assert set(switches) <= {"spine1", "spine2", "leaf2", "leaf3"}
        assert any(s.startswith("leaf") for s in switches), "a valley: a leaf forwards between two spines"


def test_two_failures_in_a_small_clos_create_valleys() -> None:
    report = fail_links(Topology.from_fabric(clos(2, 4)), 2)
    assert report.tried == 28 and not report.sampled
    failing = {frozenset(s) for s, _ in report.failing}
    # leaf1-spine1 (link 0) with leaf4-spine2 (link 7): the valley above
    assert frozenset({0, 7}) in failing
    # both uplinks of one leaf: that leaf is cut off, nothing else changes
    assert frozenset({0, 1}) not in failing


def test_failure_sampling_is_seeded_and_says_so() -> None:
    topo = Topology.from_fabric(clos(4, 6))  # 24 links, C(24, 2) = 276 pairs
    a = fail_links(topo, 2, max_scenarios=20, seed=7)
    b = fail_links(topo, 2, max_scenarios=20, seed=7)
    assert a.sampled and a.tried == 20 and a.total_scenarios == 276
    assert "seeded random sample of 20 of 276 2-link failures (seed 7)" in a.method
    assert a.failing == b.failing


def test_lab_has_no_cycle_under_any_single_failure(lab_inventory: Path) -> None:
    topo = Topology.from_fabric(load_inventory(lab_inventory).fabric)
    assert not analyze(topo).cycles
    report = fail_links(topo, 1)
    assert report.tried == 8 and report.failing == ()


def test_three_tier_example_is_up_down() -> None:
    topo = Topology.from_fabric(load_inventory(REPO / "inventory" / "examples" / "three-tier").fabric)
    report = analyze(topo)
    assert not report.cycles and report.classes == 2 and len(report.components) == 1
    assert fail_links(topo, 1).failing == ()


def test_partition_is_reported_as_islands() -> None:
    f = fabric(["a", "b", "c", "d"], [("a", "b"), ("c", "d")], ["a", "b", "c", "d"])
    report = analyze(Topology.from_fabric(f))
    assert report.components == (("a", "b"), ("c", "d"))


# --- brute force cross-check ------------------------------------------------------------------------------------


def brute_force_dependencies(n: int, edges: set[tuple[int, int]], endpoints: set[int]) -> set[tuple[Any, Any]]:
    """Every channel dependency (u->v) => (v->w) of every shortest path between every endpoint pair."""
    nb: dict[int, set[int]] = {v: set() for v in range(n)}
    for a, b in edges:
        nb[a].add(b)
        nb[b].add(a)
    deps: set[tuple[Any, Any]] = set()
    for s, d in itertools.permutations(sorted(endpoints), 2):
        dist = {d: 0}
        queue = deque([d])
        while queue:
            v = queue.popleft()
            for w in nb[v]:
                if w not in dist:
                    dist[w] = dist[v] + 1
                    queue.append(w)
        if s not in dist:
            continue

        def walk(path: list[int], d: int = d, dist: dict[int, int] = dist) -> None:
            v = path[-1]
            if v == d:
                for i in range(len(path) - 2):
                    deps.add(((path[i], path[i + 1]), (path[i + 1], path[i + 2])))
                return
            for w in nb[v]:
                if dist.get(w, -1) == dist[v] - 1:
                    walk([*path, w])

        walk([s])
    return deps


def has_cycle(deps: set[tuple[Any, Any]]) -> bool:
    graph: dict[Any, list[Any]] = {}
    for a, b in deps:
        graph.setdefault(a, []).append(b)
    state: dict[Any, int] = {}

    def visit(v: Any) -> bool:
        state[v] = 1
        for w in graph.get(v, []):
            if state.get(w) == 1 or (w not in state and visit(w)):
                return True
        state[v] = 2
        return False

    return any(v not in state and visit(v) for v in list(graph))


@st.composite
def random_topology(draw: st.DrawFn) -> tuple[int, set[tuple[int, int]], set[int]]:
    n = draw(st.integers(3, 8))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    edges = set(draw(st.lists(st.sampled_from(pairs), min_size=n - 1, max_size=2 * n, unique=True)))
    # clone a node's neighbourhood now and then, so that twin classes (and twins that are transit) occur
    if draw(st.booleans()):
        src, dst = draw(st.sampled_from(pairs))
        edges = {e for e in edges if dst not in e}
        for a, b in list(edges):
            if src in (a, b):
                other = b if a == src else a
                if other != dst:
                    edges.add((min(other, dst), max(other, dst)))
    endpoints = set(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True)))
    return n, edges, endpoints


@settings(max_examples=250, deadline=None)
@given(random_topology())
def test_fast_algorithm_matches_brute_force(case: tuple[int, set[tuple[int, int]], set[int]]) -> None:
    n, edges, endpoints = case
    links = {k: (a, 0, b, 0) for k, (a, b) in enumerate(sorted(edges))}
    topo = Topology(
        names=tuple(f"s{i}" for i in range(n)),
        port_names=tuple(("p",) for _ in range(n)),
        links=links,
        endpoints=frozenset(endpoints),
    )
    deps = brute_force_dependencies(n, edges, endpoints)
    report = analyze(topo)
    assert report.has_cycle == has_cycle(deps)
    names = {f"s{i}": i for i in range(n)}
    for cycle in report.cycles:  # every reported step is a real dependency
        hops = [names[h.switch] for h in cycle.hops]
        closed = [hops[-1], *hops]
        for i in range(len(hops)):
            u, v, w = closed[i], closed[i + 1], closed[(i + 2) % len(closed)] if i + 2 < len(closed) else closed[1]
            assert ((u, v), (v, w)) in deps, (cycle.describe(), sorted(deps))


def test_failure_progress_is_reported() -> None:
    seen: list[tuple[int, int]] = []
    fail_links(Topology.from_fabric(clos(2, 4)), 1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 8) for i in range(1, 9)]
