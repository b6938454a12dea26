"""The semantic-check framework: a check is a named function of a :class:`Context` that yields findings.

Each check has a stable code (``FABnnn``), a fixed severity, a one-line title, a rationale and a default fix hint.
A check yields :class:`Finding` objects holding a path into the merged inventory data (``("switches", 2, "ports",
0, "mtu")``); the runner turns them into located :class:`~fabricd.errors.Problem` objects, so a check never pays for
``file:line`` resolution unless it actually finds something.

The :class:`Context` holds indexes built once and shared by all checks (switch/port/host lookups, cabling), so that
every check is linear in the size of the fabric.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from fabricd.errors import Problem
from fabricd.intent.deadlock import DeadlockReport, FailureReport, Topology, analyze, fail_links
from fabricd.model import Fabric, Host, Nic, Policy, Port, Switch, Transport, Vlan, split_endpoint
from fabricd.model.checks import CheckSpec, Severity

if TYPE_CHECKING:
    from fabricd.inventory import Inventory

Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """What a check function yields: where (a path into the merged data) and what, with expected/got and a hint.
    :meth:`Check.run` locates it (``file:line``) as a :class:`~fabricd.errors.Problem`, and
    :meth:`Validation.report` gives the command's findings in the one vocabulary
    (:class:`fabricd.model.checks.Finding`).

    ``hint`` None means the check's default fix.
    """

    loc: Loc
    message: str
    expected: str | None = None
    got: str | None = None
    hint: str | None = None


@dataclass(frozen=True)
class CheckOptions:
    """Options that change what some checks do.

    ``fail_links``: 0 = no failure analysis; N > 0 = try N-link failures for PFC deadlock (FAB091).
    ``max_failure_scenarios``: above this many N-link combinations, a seeded random sample of this size is tried.
    ``seed``: the sampling seed, printed in the output so a run can be repeated.
    ``progress``: called with (scenarios done, scenarios to try) during the failure analysis.
    """

    fail_links: int = 0
    max_failure_scenarios: int = 2000
    seed: int = 0
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)


CheckFunc = Callable[["Context"], Iterable[Finding]]


@dataclass(frozen=True, kw_only=True)
class Check(CheckSpec):
    """A semantic check of the inventory: its declaration (code, severity, title, ``hint``: the default fix, and
    ``why``) plus a short ``name``, the catalogue ``area`` and the function that finds (docs/checks.md is generated
    from these fields)."""

    subject: str = "inventory"
    name: str
    area: str
    func: CheckFunc = field(repr=False, compare=False)

    @property
    def fix(self) -> str:
        """The default fix hint (the declaration's ``hint``)."""
        return self.hint

    def run(self, ctx: Context) -> list[Problem]:
        """Run the check and locate each finding in the inventory files."""
        out = []
        for f in self.func(ctx):
            out.append(
                ctx.inventory.problem(
                    f.loc,
                    f.message,
                    expected=f.expected,
                    got=f.got,
                    hint=f.hint if f.hint is not None else self.hint,
                    code=self.code,
                    severity=self.severity.value,
                )
            )
        return out


def check(
    code: str, name: str, severity: Severity, *, area: str, title: str, why: str, fix: str
) -> Callable[[CheckFunc], Check]:
    """Decorator: turn ``def f(ctx) -> Iterable[Finding]`` into a :class:`Check` (no global registry is touched;
    each module lists its checks in ``CHECKS``)."""

    def wrap(func: CheckFunc) -> Check:
        return Check(code=code, name=name, severity=severity, title=title, why=why, hint=fix, area=area, func=func)

    return wrap


# --- shared indexes ----------------------------------------------------------------------------------------------

PortRef = tuple[int, int]
"""(switch index, port index) into ``fabric.switches[i].ports[j]``."""


@dataclass(frozen=True, slots=True)
class Cable:
    """One physical cable as the inventory declares it.

    ``kind`` is ``link`` (``links[i]``, switch to switch) or ``nic`` (``hosts[i].nics[j].peer``). ``ends`` are the
    resolved switch ports (None for an end that does not resolve). ``loc`` is where the cable is declared;
    ``end_locs`` where each end is written.
    """

    kind: str
    loc: Loc
    ends: tuple[PortRef | None, ...]
    end_locs: tuple[Loc, ...]
    nic: tuple[int, int] | None = None
    link: int | None = None


def _first_index(names: Iterable[str]) -> dict[str, int]:
    """Name -> the index of its first occurrence (a repeated name is its own check's finding)."""
    out: dict[str, int] = {}
    for i, name in enumerate(names):
        out.setdefault(name, i)
    return out


class Context:
    """The inventory plus indexes shared by the checks. Everything is computed on first use, once."""

    def __init__(self, inventory: Inventory, options: CheckOptions | None = None) -> None:
        self.inventory = inventory
        self.fabric: Fabric = inventory.fabric
        self.policy: Policy = inventory.fabric.policy
        self.options = options or CheckOptions()

    # names -------------------------------------------------------------------------------------------------------

    @cached_property
    def switch_index(self) -> dict[str, int]:
        """Switch name -> index of its first definition."""
        return _first_index(s.name for s in self.fabric.switches)

    @cached_property
    def host_index(self) -> dict[str, int]:
        """Host name -> index of its first definition."""
        return _first_index(h.name for h in self.fabric.hosts)

    @cached_property
    def port_index(self) -> dict[tuple[str, str], PortRef]:
        """(switch name, port name) -> (switch index, port index), first definitions only."""
        out: dict[tuple[str, str], PortRef] = {}
        index = self.switch_index
        for i, s in enumerate(self.fabric.switches):
            if index[s.name] != i:
                continue
            name = s.name
            for j, p in enumerate(s.ports):
                out.setdefault((name, p.name), (i, j))
        return out

    def switch(self, ref: PortRef) -> Switch:
        return self.fabric.switches[ref[0]]

    def port(self, ref: PortRef) -> Port:
        return self.fabric.switches[ref[0]].ports[ref[1]]

    def port_loc(self, ref: PortRef, *rest: str | int) -> Loc:
        return ("switches", ref[0], "ports", ref[1], *rest)

    def port_label(self, ref: PortRef) -> str:
        return f"{self.fabric.switches[ref[0]].name}:{self.fabric.switches[ref[0]].ports[ref[1]].name}"

    def resolve(self, endpoint: str) -> PortRef | None:
        """``'leaf1:Ethernet0'`` -> its PortRef, or None when malformed or dangling."""
        try:
            device, port = split_endpoint(endpoint)
        except ValueError:
            return None
        return self.port_index.get((device, port))

    def nics(self) -> Iterator[tuple[int, int, Host, Nic]]:
        for i, h in enumerate(self.fabric.hosts):
            for j, n in enumerate(h.nics):
                yield i, j, h, n

    # cabling ------------------------------------------------------------------------------------------------------

    @cached_property
    def cables(self) -> list[Cable]:
        """Every declared cable: ``links`` and every NIC with a ``peer``."""
        out: list[Cable] = []
        resolve = self.resolve
        for k, link in enumerate(self.fabric.links):
            out.append(
                Cable(
                    "link",
                    ("links", k),
                    (resolve(link.a), resolve(link.b)),
                    (("links", k, "a"), ("links", k, "b")),
                    link=k,
                )
            )
        for i, j, _h, nic in self.nics():
            if nic.peer is not None:
                loc = ("hosts", i, "nics", j, "peer")
                out.append(Cable("nic", loc, (resolve(nic.peer),), (loc,), nic=(i, j)))
        return out

    @cached_property
    def cabled(self) -> dict[PortRef, list[Cable]]:
        """Switch port -> the cables plugged into it (more than one is an error, FAB011)."""
        out: dict[PortRef, list[Cable]] = {}
        for c in self.cables:
            for end in c.ends:
                if end is not None:
                    out.setdefault(end, []).append(c)
        return out

    @cached_property
    def linked_ports(self) -> list[tuple[PortRef, PortRef]]:
        """The two switch ports of every link whose ends both resolve, in ``links`` order."""
        return [
            (a, b)
            for c in self.cables
            if c.kind == "link" and (a := c.ends[0]) is not None and (b := c.ends[1]) is not None
        ]

    @cached_property
    def nic_peer(self) -> dict[tuple[int, int], PortRef]:
        """(host index, NIC index) -> the switch port its ``peer`` resolves to."""
        return {c.nic: c.ends[0] for c in self.cables if c.nic is not None and c.ends[0] is not None}

    # policy -------------------------------------------------------------------------------------------------------

    @cached_property
    def lossless(self) -> bool:
        """True when the transport is lossless RoCEv2 (PFC on ``policy.pfc.priorities``)."""
        return self.policy.transport == Transport.ROCE_V2_LOSSLESS

    @cached_property
    def pfc_priorities(self) -> frozenset[int]:
        """The priorities with PFC enabled by the policy (on every port and NIC: there is no per-port override)."""
        return frozenset(self.policy.pfc.priorities)

    @cached_property
    def watchdog_active(self) -> bool:
        """The switches run the PFC watchdog: it is enabled on a lossless fabric with PFC priorities."""
        return self.policy.pfc.watchdog.enabled and bool(self.pfc_priorities) and self.lossless

    # PFC deadlock ---------------------------------------------------------------------------------------------------

    @cached_property
    def deadlock_applies(self) -> bool:
        """Deadlock needs lossless traffic: a lossless transport with at least one PFC priority."""
        return self.lossless and bool(self.pfc_priorities)

    @cached_property
    def topology(self) -> Topology:
        return Topology.from_fabric(self.fabric)

    @cached_property
    def deadlock(self) -> DeadlockReport:
        """The buffer-dependency analysis of the intact fabric (computed once, used by FAB090 and FAB092)."""
        return analyze(self.topology)

    @cached_property
    def failures(self) -> FailureReport | None:
        """``--fail-links N`` analysis; None when not asked for (N = 0), not applicable, or when the intact fabric
        already has a cycle (every failure scenario would report it again)."""
        if self.options.fail_links <= 0 or not self.deadlock_applies or self.deadlock.has_cycle:
            return None
        return fail_links(
            self.topology,
            self.options.fail_links,
            max_scenarios=self.options.max_failure_scenarios,
            seed=self.options.seed,
            progress=self.options.progress,
        )

    @cached_property
    def used_platforms(self) -> dict[str, list[int]]:
        """Platform id -> indexes of the switches running it."""
        out: dict[str, list[int]] = {}
        for i, s in enumerate(self.fabric.switches):
            out.setdefault(s.platform.value, []).append(i)
        return out

    def platform_switches(self, platform: str) -> list[str]:
        """The names of the switches running ``platform`` (a platform id), in inventory order."""
        return [self.fabric.switches[i].name for i in self.used_platforms.get(platform, [])]

    def vlan_carriers(self, vlan: Vlan, platform: str) -> list[str]:
        """The switches running ``platform`` that carry ``vlan``, sorted: those of its member ports and of the peers
        of the NICs in it. By switch name, so a member whose port is mistyped (its own finding) still names the
        switch the VLAN is meant for."""
        on = set(self.platform_switches(platform))
        ends = [*vlan.members, *(n.peer for _i, _j, _h, n in self.nics() if n.vlan == vlan.id)]
        return sorted({sw for end in ends if (sw := _switch_of(end)) in on})


def _switch_of(endpoint: str | None) -> str | None:
    """The switch name of a ``'switch:port'`` endpoint, or None when it is unset or malformed."""
    if endpoint is None:
        return None
    try:
        return split_endpoint(endpoint)[0]
    except ValueError:
        return None


def repeats(keys: Iterable[Hashable | None]) -> Iterator[tuple[int, int]]:
    """(index, index of its first occurrence) of every key that occurred before; a None key is no key."""
    seen: dict[Hashable, int] = {}
    for j, key in enumerate(keys):
        if key is None:
            continue
        if key in seen:
            yield j, seen[key]
        else:
            seen[key] = j


class Numbered(Protocol):
    """An entry of a list whose ids and names must each be unique (a VLAN, a traffic class)."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...


def ids_and_names_repeated(entries: Sequence[Numbered], path: Loc, what: str, *, unique_id: str) -> Iterator[Finding]:
    """One finding per entry whose id, and one per entry whose name, an earlier entry of ``entries`` (at ``path``)
    already has: ``what`` names the entries in the message, ``unique_id`` is what a valid id is."""
    ids, by_name = dict(repeats(e.id for e in entries)), dict(repeats(e.name for e in entries))
    for k, entry in enumerate(entries):
        if k in ids:
            yield Finding(
                (*path, k, "id"),
                f"{what} id {entry.id} is used twice",
                expected=unique_id,
                got=f"{entry.id} again (first in {what} {entries[ids[k]].name!r})",
            )
        if k in by_name:
            yield Finding(
                (*path, k, "name"),
                f"{what} name {entry.name!r} is used twice",
                expected="a unique name",
                got=f"{entry.name!r} again",
            )


def rdma_nics_lacking(ctx: Context, field: str, *, says: str, expected: str) -> Iterator[Finding]:
    """One finding per RDMA NIC (``rdma_device`` set) whose ``field`` is unset: ``says`` what that means."""
    for i, j, h, n in ctx.nics():
        if n.rdma_device is not None and getattr(n, field) is None:
            yield Finding(
                ("hosts", i, "nics", j),
                f"RDMA NIC {h.name}:{n.netdev} ({n.rdma_device}) {says}",
                expected=expected,
                got=f"no {field}",
            )


def names(items: Iterable[str], limit: int = 5) -> str:
    """``a, b, c and 12 more`` - a short list for messages about many objects."""
    seq = list(items)
    if len(seq) <= limit:
        return ", ".join(seq)
    return f"{', '.join(seq[:limit])} and {len(seq) - limit} more"


__all__ = [
    "Cable",
    "Check",
    "CheckFunc",
    "CheckOptions",
    "Context",
    "Finding",
    "Loc",
    "Numbered",
    "PortRef",
    "Severity",
    "check",
    "ids_and_names_repeated",
    "names",
    "rdma_nics_lacking",
    "repeats",
]
