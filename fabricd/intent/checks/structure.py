"""Structural checks: a whole section missing or empty, said once and first, before what follows from it.

A directory inventory whose ``switches.yml`` is missing used to give one "unknown switch" error per link end, NIC
peer and VLAN member (200 of them) and no hint that a file was missing. Now FAB016 says it once, with the number of
references it leaves dangling, and the reference checks (``topology.endpoint_finding``) stay quiet when there is
no switch at all to resolve a name against.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import Context, Finding, Severity, check, names

NAMES_SHOWN = 3


def _missing_file_hint(ctx: Context, section: str) -> str:
    """``is switches.yml missing?`` for a directory inventory without that file; else where to add the section."""
    inv = ctx.inventory
    files = sorted(f.name for f in inv.files)
    if inv.path.is_dir():
        if f"{section}.yml" not in files and f"{section}.yaml" not in files:
            return (
                f"is {section}.yml missing? (the inventory holds {', '.join(files) or 'no YAML file'}); "
                f"add {section}.yml with a `{section}:` list, or a `{section}:` section to one of the files"
            )
        return f"{section}.yml is there but its `{section}:` list is empty; add the {section}"
    return f"add a `{section}:` list to {inv.path.name}"


def _switch_references(ctx: Context) -> list[str]:
    refs = [f"links[{k}].{end}" for k, _ in enumerate(ctx.fabric.links) for end in ("a", "b")]
    refs += [f"hosts[{h.name}].nics[{n.netdev}].peer" for _, _, h, n in ctx.nics() if n.peer]
    refs += [f"policy.vlans[{v.name}].members[{m}]" for v in ctx.fabric.policy.vlans for m in range(len(v.members))]
    return refs


@check(
    "FAB016",
    "no-switches",
    Severity.ERROR,
    area="topology",
    title="The inventory defines switches",
    why="Without switches nothing can be rendered or pushed, and every link, NIC peer and VLAN member names a "
    "switch that does not exist; a missing switches.yml is the usual cause. Said once, instead of one "
    "'unknown switch' error per reference.",
    fix="add the switches (switches.yml, or a switches: list)",
)
def no_switches(ctx: Context) -> Iterator[Finding]:
    if ctx.fabric.switches:
        return
    refs = _switch_references(ctx)
    if not refs and not ctx.fabric.hosts:
        got = "an empty fabric: no switches, hosts or links"
    else:
        got = f"{len(refs)} references to switches: {names(refs, limit=NAMES_SHOWN)}" if refs else "no switches: list"
    yield Finding(
        ("switches",),
        "no switches defined",
        expected="at least one switch under switches:",
        got=got,
        hint=_missing_file_hint(ctx, "switches"),
    )


@check(
    "FAB017",
    "no-hosts",
    Severity.WARNING,
    area="topology",
    title="The inventory defines RDMA hosts",
    why="A RoCE fabric without hosts has no lossless endpoints: the deadlock analysis has nothing to analyse and "
    "no host is rendered or audited; a missing hosts.yml is the usual cause.",
    fix="add the hosts (hosts.yml, or a hosts: list)",
)
def no_hosts(ctx: Context) -> Iterator[Finding]:
    if ctx.fabric.hosts or not ctx.fabric.switches:
        return  # with no switches either, FAB016 says what is missing
    yield Finding(
        ("hosts",),
        "no hosts defined",
        expected="at least one host under hosts:",
        got=f"{len(ctx.fabric.switches)} switches and no host",
        hint=_missing_file_hint(ctx, "hosts"),
    )


CHECKS = (no_switches, no_hosts)
