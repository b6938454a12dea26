"""A simulated fleet for the traffic-matrix scheduler and localisation (lab-only test machinery).

Throughput of a pair = the slower of the two links x a per-host efficiency (0.93-0.98, seeded) x the factor of any
degraded host or path it touches. The simulator also checks the scheduling contract: a round given to it must be
disjoint (no host in two tests at once; a server may take several senders in an incast round, which share its
link), or it raises. The numbers are a model, not measurements: what is tested
with it is the scheduler's coverage and the localisation logic, never a throughput figure.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from fabricd.traffic.matrix import Pair, Round


@dataclass
class SimFleet:
    hosts: list[str]
    link_gbit_s: dict[str, float]
    slow_hosts: dict[str, float] = field(default_factory=dict)
    slow_paths: dict[frozenset[str], float] = field(default_factory=dict)
    seed: int = 7
    rounds_run: int = 0
    pairs_run: int = 0

    @classmethod
    def make(cls, n: int, *, speed_gbit_s: float = 400.0, seed: int = 7) -> SimFleet:
        hosts = [f"gpu{i:04d}" for i in range(n)]
        return cls(hosts, dict.fromkeys(hosts, speed_gbit_s), seed=seed)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        self.efficiency = {h: rng.uniform(0.93, 0.98) for h in self.hosts}

    def gbit_s(self, pair: Pair, receivers: int = 1) -> float:
        """Pair throughput; ``receivers``: senders sharing the server's link this round (incast)."""
        a, b = pair
        rate = min(self.link_gbit_s[a] * self.efficiency[a], self.link_gbit_s[b] * self.efficiency[b] / receivers)
        rate *= self.slow_hosts.get(a, 1.0) * self.slow_hosts.get(b, 1.0)
        return rate * self.slow_paths.get(frozenset(pair), 1.0)

    def run_round(self, rnd: Round) -> Mapping[Pair, float | None]:
        """Every client once, no host both client and server; a server may take several clients (incast)."""
        clients = [a for a, _ in rnd]
        servers = Counter(b for _, b in rnd)
        if len(set(clients)) != len(clients) or set(clients) & servers.keys():
            raise AssertionError(f"round is not disjoint: {rnd[:6]}...")
        self.rounds_run += 1
        self.pairs_run += len(rnd)
        return {p: self.gbit_s(p, servers[p[1]]) for p in rnd}
