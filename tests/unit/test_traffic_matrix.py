"""validate-fabric --matrix: the schedules (circle method and friends), verdicts against the bar, localisation of
a slow host or path within two extra rounds, and baselines; on a simulated fleet of up to 1,024 hosts (fleetsim.py:
a model, used to test coverage and logic, not throughput)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from fleetsim import SimFleet

from fabricd.traffic.matrix import (
    Matrix,
    MatrixKind,
    Verdict,
    baseline_of,
    circle_rounds,
    compare_baseline,
    incast_rounds,
    localise,
    ring_rounds,
    run_matrix,
    schedule,
)


def _disjoint(rnd: list[tuple[str, str]]) -> bool:
    hosts = [h for p in rnd for h in p]
    return len(hosts) == len(set(hosts))


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 33, 64])
def test_circle_method_covers_every_pair_once_in_disjoint_rounds(n: int) -> None:
    hosts = [f"h{i}" for i in range(n)]
    rounds = circle_rounds(hosts)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    assert all(len(r) == n // 2 for r in rounds)
    assert all(_disjoint(r) for r in rounds)
    covered = [frozenset(p) for r in rounds for p in r]
    assert len(covered) == len(set(covered)) == n * (n - 1) // 2
    sends = Counter(p[0] for r in rounds for p in r)
    assert max(sends.values()) - min(sends.get(h, 0) for h in hosts) <= 2  # clients alternate


def test_ring_incast_and_pairs() -> None:
    hosts = [f"h{i}" for i in range(9)]
    ring = ring_rounds(hosts)
    assert all(_disjoint(r) for r in ring) and len(ring) == 3
    assert sorted(p for r in ring for p in r) == sorted((hosts[i], hosts[(i + 1) % 9]) for i in range(9))
    inc = incast_rounds(hosts, 2)
    assert len(inc) == 3
    receivers = [g.receiver for r in inc for g in r]
    assert sorted(receivers) == sorted(hosts)  # every host receives once
    assert all(len(g.senders) == 2 and g.receiver not in g.senders for r in inc for g in r)
    pairs = schedule(Matrix.parse("pairs"), hosts)
    assert len(pairs) == 1 and len(pairs[0]) == 4 and _disjoint(pairs[0])


def test_matrix_parse() -> None:
    assert Matrix.parse("incast:4") == Matrix(MatrixKind.INCAST, 4)
    assert str(Matrix.parse("all-pairs")) == "all-pairs"
    for bad in ("incast", "incast:0", "mesh", "incast:x"):
        with pytest.raises(ValueError):
            Matrix.parse(bad)


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
def test_all_pairs_on_1024_hosts_names_the_slow_host_without_extra_rounds() -> None:
    fleet = SimFleet.make(1024)
    slow = fleet.hosts[417]
    fleet.slow_hosts[slow] = 0.5
    verdicts = run_matrix(Matrix.parse("all-pairs"), fleet.hosts, fleet.link_gbit_s, fleet.run_round)
    assert fleet.rounds_run == 1023 and fleet.pairs_run == 1024 * 1023 // 2
    failed = {v.pair for v in verdicts if v.verdict == Verdict.FAIL}
    assert len(failed) == 1023 and all(slow in p for p in failed)
    loc = localise(verdicts, fleet.link_gbit_s, fleet.run_round)
    assert loc.degraded_hosts == [slow] and loc.extra_rounds == 0 and loc.degraded_paths == []
    assert fleet.rounds_run == 1023


@pytest.mark.parametrize("matrix", ["pairs", "ring", "incast:3"])
def test_slow_host_named_within_two_extra_rounds_on_1024_hosts(matrix: str) -> None:
    fleet = SimFleet.make(1024)
    slow = fleet.hosts[601]
    fleet.slow_hosts[slow] = 0.6
    m = Matrix.parse(matrix)
    verdicts = run_matrix(m, fleet.hosts, fleet.link_gbit_s, fleet.run_round)
    before = fleet.rounds_run
    assert any(v.verdict == Verdict.FAIL for v in verdicts)
    loc = localise(verdicts, fleet.link_gbit_s, fleet.run_round)
    assert loc.degraded_hosts == [slow], loc.to_dict()
    assert loc.extra_rounds <= 2 and fleet.rounds_run - before == loc.extra_rounds
    assert loc.unresolved == [] and loc.degraded_paths == []


def test_a_slow_path_is_named_as_a_path_not_a_host() -> None:
    fleet = SimFleet.make(64)
    first = schedule(Matrix.parse("pairs"), fleet.hosts)[0][5]
    fleet.slow_paths[frozenset(first)] = 0.7
    verdicts = run_matrix(Matrix.parse("pairs"), fleet.hosts, fleet.link_gbit_s, fleet.run_round)
    loc = localise(verdicts, fleet.link_gbit_s, fleet.run_round)
    assert loc.degraded_hosts == [] and loc.degraded_paths == [first] and loc.extra_rounds == 1


def test_bar_is_the_slower_link_and_configurable() -> None:
    fleet = SimFleet.make(4)
    fleet.link_gbit_s[fleet.hosts[0]] = 200.0
    verdicts = run_matrix(Matrix.parse("all-pairs"), fleet.hosts, fleet.link_gbit_s, fleet.run_round)
    with_200 = [v for v in verdicts if fleet.hosts[0] in v.pair]
    assert all(v.bar_gbit_s == pytest.approx(180.0) and v.verdict == Verdict.PASS for v in with_200)
    strict = run_matrix(Matrix.parse("all-pairs"), fleet.hosts, fleet.link_gbit_s, fleet.run_round, bar=0.99)
    assert all(v.verdict == Verdict.FAIL for v in strict)  # efficiencies are 0.93-0.98


def test_baseline_drop_of_more_than_5_percent_is_a_finding() -> None:
    fleet = SimFleet.make(32)
    m = Matrix.parse("all-pairs")
    base = baseline_of(run_matrix(m, fleet.hosts, fleet.link_gbit_s, fleet.run_round))
    assert len(base) == 32 * 31 // 2
    a, b = fleet.hosts[3], fleet.hosts[9]
    fleet.slow_paths[frozenset((a, b))] = 0.94
    fleet.slow_paths[frozenset((fleet.hosts[4], fleet.hosts[5]))] = 0.96
    drops = compare_baseline(run_matrix(m, fleet.hosts, fleet.link_gbit_s, fleet.run_round), base)
    assert [{*p} for p, _, _ in drops] == [{a, b}]
    assert all(now < old * 0.95 for _, old, now in drops)


def test_rounds_never_reuse_a_host_for_any_schedule() -> None:
    hosts = [f"h{i}" for i in range(21)]
    for m in ("pairs", "all-pairs", "ring"):
        assert all(_disjoint(r) for r in schedule(Matrix.parse(m), hosts))
    inc = schedule(Matrix.parse("incast:4"), hosts)
    for r in inc:  # an incast round: each sender once, receivers shared by their group only
        assert len({p[0] for p in r}) == len(r)
    assert list(itertools.chain.from_iterable(inc))
