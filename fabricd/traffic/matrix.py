"""Traffic matrices for ``validate-fabric --matrix``: which pairs run, in which rounds, judged against which bar, and
which host or path is to blame when pairs fall short. Pure: no device access (the runner is a callable).

Schedules (every round is a set of disjoint pairs, so no host is in two tests at once):

- ``pairs``: one round of N/2 disjoint pairs (round 0 of the circle method): every host tested once;
- ``all-pairs``: the circle method (round-robin tournament): fix host 0, rotate the others; N-1 rounds of N/2 pairs
  (N even; an odd N gets a bye, N rounds of (N-1)/2 pairs), every unordered pair exactly once. The client is
  alternated so that each host sends about half of its tests;
- ``ring``: host i to host i+1 (mod N), in 2 rounds (3 when N is odd);
- ``incast:K``: groups of K+1 hosts, K senders into one receiver; K+1 rounds so that every host receives once.

Verdicts (:func:`judge`): a pair passes when its throughput reaches ``bar`` x the slower of the two links (default
0.9, NVIDIA ngc_multinode_perf's bar); an incast group when the receiver's total reaches ``bar`` x its link.

Localisation (:func:`localise`): a host whose failing tests have at least ``min_partners`` distinct partners, all of
whom pass their other tests, is named at once (all-pairs names a slow host this way). Any other suspect is re-tested
in up to two extra rounds, each against a different host that passed everything: fails twice = the host is degraded;
passes = the original pair's path (a link between them) is to blame.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

DEFAULT_BAR = 0.9
BASELINE_DROP = 0.05
"""A pair more than 5 % below its baseline is a finding."""

Pair = tuple[str, str]
"""(client, server): the client sends."""
Round = list[Pair]


class MatrixKind(StrEnum):
    PAIRS = "pairs"
    ALL_PAIRS = "all-pairs"
    RING = "ring"
    INCAST = "incast"


@dataclass(frozen=True)
class Matrix:
    kind: MatrixKind
    k: int = 0
    """Senders per receiver for incast."""

    @classmethod
    def parse(cls, text: str) -> Matrix:
        """``pairs``, ``all-pairs``, ``ring`` or ``incast:K`` (K >= 1). ValueError with the reason otherwise."""
        m = re.fullmatch(r"incast:(\d+)", text)
        if m:
            k = int(m.group(1))
            if k < 1:
                raise ValueError("incast:K needs K >= 1 senders")
            return cls(MatrixKind.INCAST, k)
        try:
            kind = MatrixKind(text)
        except ValueError:
            raise ValueError(f"unknown matrix {text!r}; expected pairs, all-pairs, ring or incast:K") from None
        if kind == MatrixKind.INCAST:
            raise ValueError("incast needs its sender count: incast:K")
        return cls(kind)

    def __str__(self) -> str:
        return f"incast:{self.k}" if self.kind == MatrixKind.INCAST else self.kind.value


@dataclass(frozen=True)
class Incast:
    receiver: str
    senders: tuple[str, ...]


def circle_rounds(hosts: Sequence[str]) -> list[Round]:
    """The circle method: N-1 rounds of N/2 disjoint pairs covering every unordered pair once (N even). An odd N
    gets a bye: N rounds of (N-1)/2 pairs.

    Who sends: among the hosts other than the fixed one (an odd number, m), host i sends to host j when
    (j - i) mod m is in 1..(m-1)/2 (a regular tournament: each sends to half of the others); the fixed host sends
    in even rounds. Every host sends in about half of its tests.
    """
    names = list(dict.fromkeys(hosts))
    if len(names) < 2:
        return []
    if len(names) % 2 == 1:
        names.append("")
    n = len(names)
    fixed, rest = names[0], names[1:]
    m = len(rest)
    pos = {h: i for i, h in enumerate(rest)}
    rounds: list[Round] = []
    for r in range(n - 1):
        line = [fixed, *rest[r:], *rest[:r]]
        pairs: Round = []
        for i in range(n // 2):
            a, b = line[i], line[n - 1 - i]
            if not a or not b:
                continue
            if a == fixed:
                pairs.append((a, b) if r % 2 == 0 else (b, a))
            else:
                pairs.append((a, b) if 1 <= (pos[b] - pos[a]) % m <= (m - 1) // 2 else (b, a))
        rounds.append(pairs)
    return rounds


def ring_rounds(hosts: Sequence[str]) -> list[Round]:
    names = list(dict.fromkeys(hosts))
    n = len(names)
    if n < 2:
        return []
    if n == 2:
        return [[(names[0], names[1])], [(names[1], names[0])]]
    edges = [(names[i], names[(i + 1) % n]) for i in range(n)]
    rounds: list[Round] = [edges[0 : n - n % 2 : 2], edges[1:n:2]]
    if n % 2:
        rounds.append([edges[-1]])
        rounds[0] = edges[0 : n - 1 : 2]
    return [r for r in rounds if r]


def incast_rounds(hosts: Sequence[str], k: int) -> list[list[Incast]]:
    """K+1 rounds; hosts in groups of K+1 (a remainder joins no group and is reported as not covered)."""
    names = list(dict.fromkeys(hosts))
    size = k + 1
    groups = [names[i : i + size] for i in range(0, len(names) - len(names) % size, size)]
    rounds = []
    for r in range(size):
        rounds.append([Incast(g[r], tuple(h for j, h in enumerate(g) if j != r)) for g in groups])
    return [r for r in rounds if r]


def schedule(matrix: Matrix, hosts: Sequence[str]) -> list[Round]:
    """The pair rounds of a pair matrix (incast: :func:`incast_rounds`)."""
    if matrix.kind == MatrixKind.ALL_PAIRS:
        return circle_rounds(hosts)
    if matrix.kind == MatrixKind.PAIRS:
        rounds = circle_rounds(hosts)
        return rounds[:1]
    if matrix.kind == MatrixKind.RING:
        return ring_rounds(hosts)
    return [[(s, inc.receiver) for inc in rnd for s in inc.senders] for rnd in incast_rounds(hosts, matrix.k)]


# -- verdicts -----------------------------------------------------------------------------------------------------


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_RUN = "not_run"


@dataclass(slots=True)
class PairVerdict:
    """One pair's result. A plain slotted dataclass: an all-pairs run of 1,024 hosts makes 523,776 of them."""

    pair: Pair
    gbit_s: float | None
    bar_gbit_s: float
    verdict: Verdict
    round: int = 0

    @property
    def detail(self) -> str:
        if self.gbit_s is None:
            return "did not run"
        ok = self.verdict == Verdict.PASS
        return f"{self.gbit_s:.1f} Gb/s {'>=' if ok else '<'} bar {self.bar_gbit_s:.1f} Gb/s"

    def to_dict(self) -> dict[str, object]:
        return {
            "client": self.pair[0],
            "server": self.pair[1],
            "gbit_s": self.gbit_s,
            "bar_gbit_s": round(self.bar_gbit_s, 3),
            "verdict": self.verdict.value,
            "round": self.round,
            "detail": self.detail,
        }


def judge(
    pair: Pair,
    gbit_s: float | None,
    link_gbit_s: Mapping[str, float],
    bar: float = DEFAULT_BAR,
    *,
    rnd: int = 0,
    share: int = 1,
) -> PairVerdict:
    """One pair against ``bar`` x the slower link (divided by ``share`` senders for incast)."""
    need = bar * min(link_gbit_s[pair[0]], link_gbit_s[pair[1]]) / share
    if gbit_s is None:
        return PairVerdict(pair, None, need, Verdict.NOT_RUN, rnd)
    return PairVerdict(pair, gbit_s, need, Verdict.PASS if gbit_s >= need else Verdict.FAIL, rnd)


RunRound = Callable[[Round], Mapping[Pair, float | None]]
"""Runs one round of disjoint pairs at once; returns Gbit/s per pair (None: did not run)."""


def run_matrix(
    matrix: Matrix,
    hosts: Sequence[str],
    link_gbit_s: Mapping[str, float],
    run_round: RunRound,
    bar: float = DEFAULT_BAR,
) -> list[PairVerdict]:
    """Run every round of ``matrix`` and judge each pair (incast senders share the receiver's bar)."""
    out: list[PairVerdict] = []
    share = matrix.k if matrix.kind == MatrixKind.INCAST else 1
    for i, rnd in enumerate(schedule(matrix, hosts)):
        results = run_round(rnd)
        out.extend(judge(p, results.get(p), link_gbit_s, bar, rnd=i, share=share) for p in rnd)
    return out


# -- localisation -------------------------------------------------------------------------------------------------


@dataclass
class Localisation:
    degraded_hosts: list[str] = field(default_factory=list)
    degraded_paths: list[Pair] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    extra_rounds: int = 0
    retests: list[PairVerdict] = field(default_factory=list)
    evidence: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "degraded_hosts": self.degraded_hosts,
            "degraded_paths": [list(p) for p in self.degraded_paths],
            "unresolved": self.unresolved,
            "extra_rounds": self.extra_rounds,
            "retests": [v.to_dict() for v in self.retests],
            "evidence": self.evidence,
        }


def localise(
    verdicts: Sequence[PairVerdict],
    link_gbit_s: Mapping[str, float],
    run_round: RunRound | None,
    bar: float = DEFAULT_BAR,
    *,
    min_partners: int = 2,
    max_extra_rounds: int = 2,
) -> Localisation:
    """Name the degraded hosts (or paths) behind the failing pairs, re-testing in at most ``max_extra_rounds``.

    Each extra round is one set of disjoint pairs: every open suspect against a different *clean* host (one whose
    tests all passed). A suspect that fails with two clean partners is degraded; one that passes with a clean
    partner is cleared; a failing pair whose two hosts are both cleared names its path. Suspects that could not be
    re-tested (too few clean hosts) or failed only once stay ``unresolved``.
    """
    loc = Localisation()
    failed = [v for v in verdicts if v.verdict == Verdict.FAIL]
    if not failed:
        return loc
    partners, failed_with = _partners(verdicts)
    named = _named(loc, partners, failed_with, min_partners)
    open_pairs = [v.pair for v in failed if v.pair[0] not in named and v.pair[1] not in named]
    candidates = sorted({h for p in open_pairs for h in p})
    retests = _Retests(
        sorted(h for h in partners if not failed_with.get(h)),
        link_gbit_s,
        bar,
        first_round=len({v.round for v in verdicts}),
    )
    if run_round is not None:
        candidates = retests.run(loc, candidates, run_round, max_extra_rounds=max_extra_rounds)
    for host in candidates:
        if retests.fails[host] >= 2:
            named.add(host)
            loc.evidence[host] = f"failed again with {retests.fails[host]} different known-good partners"
        else:
            loc.unresolved.append(host)
    loc.degraded_hosts = sorted(named)
    cleared = retests.cleared
    loc.degraded_paths = [p for p in open_pairs if p[0] in cleared and p[1] in cleared]
    return loc


def _partners(verdicts: Sequence[PairVerdict]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per host, the partners it was tested with, and those it failed with (pairs that did not run left out)."""
    partners: dict[str, set[str]] = defaultdict(set)
    failed_with: dict[str, set[str]] = defaultdict(set)
    for v in verdicts:
        if v.verdict == Verdict.NOT_RUN:
            continue
        a, b = v.pair
        partners[a].add(b)
        partners[b].add(a)
        if v.verdict == Verdict.FAIL:
            failed_with[a].add(b)
            failed_with[b].add(a)
    return partners, failed_with


def _named(
    loc: Localisation, partners: Mapping[str, set[str]], failed_with: Mapping[str, set[str]], min_partners: int
) -> set[str]:
    """The hosts the matrix alone names: failed with ``min_partners`` or more partners that each passed all their
    other tests (with the evidence in ``loc``)."""
    named: set[str] = set()
    for host, bad in sorted(failed_with.items()):
        if len(bad) >= min_partners and all(failed_with[p] <= {host} for p in bad):
            named.add(host)
            loc.evidence[host] = (
                f"failed with {len(bad)} of {len(partners[host])} partners, each of which passed all its other tests"
            )
    return named


class _Retests:
    """The extra rounds of :func:`localise`: each open suspect against a clean host it has not been tested with."""

    def __init__(self, clean: list[str], link_gbit_s: Mapping[str, float], bar: float, *, first_round: int) -> None:
        self.clean, self.link_gbit_s, self.bar, self.first_round = clean, link_gbit_s, bar, first_round
        self.used: dict[str, set[str]] = defaultdict(set)
        self.fails: dict[str, int] = defaultdict(int)
        self.cleared: set[str] = set()

    def run(self, loc: Localisation, candidates: list[str], run_round: RunRound, *, max_extra_rounds: int) -> list[str]:
        """Re-test ``candidates`` in at most ``max_extra_rounds`` (recorded in ``loc``); the ones not cleared."""
        for extra in range(max_extra_rounds):
            if not candidates:
                break
            rnd = self._round(candidates)
            if not rnd:
                break
            loc.extra_rounds += 1
            results = run_round(rnd)
            for p in rnd:
                v = judge(p, results.get(p), self.link_gbit_s, self.bar, rnd=self.first_round + extra)
                loc.retests.append(v)
                self.used[p[0]].add(p[1])
                if v.verdict == Verdict.FAIL:
                    self.fails[p[0]] += 1
                elif v.verdict == Verdict.PASS:
                    self.cleared.add(p[0])
            candidates = [h for h in candidates if h not in self.cleared]
        return candidates

    def _round(self, candidates: list[str]) -> Round:
        """One round of disjoint pairs: each candidate with the first clean host free in it and new to it."""
        rnd: Round = []
        taken: set[str] = set()
        for host in candidates:
            partner = next((g for g in self.clean if g not in taken and g not in self.used[host]), None)
            if partner is not None:
                taken.add(partner)
                rnd.append((host, partner))
        return rnd


# -- baselines ----------------------------------------------------------------------------------------------------


def fabric_revision(model_json: str) -> str:
    """A short, stable id of a fabric's intent: sha256 of its canonical JSON."""
    canonical = json.dumps(json.loads(model_json), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def key(pair: Pair) -> str:
    return f"{pair[0]}->{pair[1]}"


def compare_baseline(
    verdicts: Sequence[PairVerdict], baseline: Mapping[str, float], drop: float = BASELINE_DROP
) -> list[tuple[Pair, float, float]]:
    """Pairs more than ``drop`` below their baseline: (pair, baseline Gb/s, now Gb/s)."""
    out = []
    for v in verdicts:
        old = baseline.get(key(v.pair))
        if old is not None and v.gbit_s is not None and v.gbit_s < old * (1 - drop):
            out.append((v.pair, old, v.gbit_s))
    return out


def baseline_of(verdicts: Sequence[PairVerdict]) -> dict[str, float]:
    return {key(v.pair): v.gbit_s for v in verdicts if v.gbit_s is not None}
