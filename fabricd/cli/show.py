"""``fabricd show``: the inventory as tables (switches, hosts, links, policy) or as JSON."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Policy

from .common import InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stdout


class Section(StrEnum):
    ALL = "all"
    POLICY = "policy"
    SWITCHES = "switches"
    HOSTS = "hosts"
    LINKS = "links"


def _fmt(value: object) -> str:
    return "-" if value is None else escape(str(value))


def policy_rows(policy: Policy) -> list[tuple[str, str]]:
    """The policy as (setting, value) rows, in the order an engineer reads a RoCE recipe."""
    q = policy.qos
    wd = policy.pfc.watchdog
    rows = [
        ("transport", policy.transport.value),
        ("congestion control", policy.congestion_control.value),
        ("trust", q.trust.value),
        (
            "DSCP -> priority",
            ", ".join(f"{d}->{p}" for d, p in sorted(q.dscp_to_priority.items())) + f"; others -> {q.default_priority}",
        ),
        ("RoCE class", f"DSCP {q.roce.dscp}, priority {q.roce.priority}, ToS {q.roce.effective_tos}"),
        ("CNP class", f"DSCP {q.cnp.dscp}, priority {q.cnp.priority}, {'strict' if q.cnp.strict else 'not strict'}"),
        ("PFC priorities", ", ".join(map(str, policy.pfc.priorities)) or "none"),
        (
            "PFC watchdog",
            (
                f"detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms, poll {wd.poll_ms} ms, "
                f"action {wd.action.value}"
            )
            if wd.enabled
            else "disabled",
        ),
    ]
    for tc in q.traffic_classes:
        sched = tc.scheduler.value + (f" {tc.weight_percent}%" if tc.weight_percent is not None else "")
        ecn = f", ECN {tc.ecn_profile}" if tc.ecn_profile else ""
        rows.append((f"TC{tc.id} {tc.name}", f"priorities {', '.join(map(str, tc.priorities))}; {sched}{ecn}"))
    for p in policy.ecn_profiles:
        rows.append(
            (
                f"ECN {p.name}",
                f"min {p.min_bytes} B, max {p.max_bytes} B, "
                f"{p.max_mark_probability_percent}%, TCs {', '.join(map(str, p.traffic_classes))}",
            )
        )
    cables = ", ".join(f"{r.value} {m:g} m" for r, m in policy.buffers.cable_length_m.items())
    rows.append(("cable lengths", cables))
    for v in policy.vlans:
        rows.append((f"VLAN {v.id} {v.name}", f"{v.subnet}, {len(v.members)} member ports"))
    return rows


def _tables(fabric: Fabric, section: Section) -> list[Table]:
    tables = []
    if section in (Section.ALL, Section.POLICY):
        t = Table(title=f"{fabric.name}: policy", title_justify="left")
        t.add_column("setting")
        t.add_column("value")
        for k, v in policy_rows(fabric.policy):
            t.add_row(escape(k), escape(v))
        tables.append(t)
    if section in (Section.ALL, Section.SWITCHES):
        t = Table(title=f"switches ({len(fabric.switches)})", title_justify="left")
        for col in ("name", "platform", "role", "mgmt", "ports", "speeds", "MTU", "headroom pool B"):
            t.add_column(col)
        for s in fabric.switches:
            speeds = sorted({p.speed for p in s.ports}, key=lambda sp: sp.bps)
            mtus = sorted({p.mtu for p in s.ports})
            t.add_row(
                escape(s.name),
                s.platform.value,
                s.role.value,
                escape(f"{s.mgmt.host}:{s.mgmt.port}"),
                str(len(s.ports)),
                ", ".join(sp.value for sp in speeds),
                ", ".join(map(str, mtus)),
                _fmt(s.buffer.headroom_pool_bytes),
            )
        tables.append(t)
    if section in (Section.ALL, Section.HOSTS):
        t = Table(title=f"hosts ({len(fabric.hosts)})", title_justify="left")
        for col in ("host", "netdev", "RDMA", "driver", "address", "VLAN", "MTU", "speed", "peer"):
            t.add_column(col)
        for h in fabric.hosts:
            for n in h.nics or []:
                t.add_row(
                    escape(h.name),
                    escape(n.netdev),
                    _fmt(n.rdma_device),
                    escape(n.driver),
                    _fmt(n.ip),
                    _fmt(n.vlan),
                    str(n.mtu),
                    _fmt(n.speed.value if n.speed else None),
                    _fmt(n.peer),
                )
            if not h.nics:
                t.add_row(escape(h.name), "-", "-", "-", "-", "-", "-", "-", "-")
        tables.append(t)
    if section in (Section.ALL, Section.LINKS):
        t = Table(title=f"links ({len(fabric.links)})", title_justify="left")
        for col in ("a", "b", "role", "cable m"):
            t.add_column(col)
        for link in fabric.links:
            t.add_row(escape(link.a), escape(link.b), _fmt(link.role.value if link.role else None), _fmt(link.cable_m))
        tables.append(t)
    return tables


def show_cmd(
    inventory: InventoryArg = None,
    section: Annotated[Section, typer.Option("--section", help="Only this part of the inventory.")] = Section.ALL,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Show the inventory after inheritance: the policy, switches, hosts (one row per NIC) and links.
    JSON is the merged model, every default filled in. Exit 2 if the inventory does not load.

    [bold]Example[/]: fabricd show

    [bold]Example[/]: fabricd show ./fabric --section policy --output json
    """
    path = inventory_path(inventory)
    fabric = load_inventory(path).fabric
    if output == OutputFormat.JSON:
        data: dict[str, Any] = fabric.model_dump(mode="json")
        payload: dict[str, Any] = {"inventory": str(path)}
        if section == Section.ALL:
            payload["fabric"] = data
        else:
            payload[section.value] = data["policy"] if section == Section.POLICY else data[section.value]
        emit_json(payload)
        return
    out = stdout()
    for table in _tables(fabric, section):
        out.print(table)


def register(app: typer.Typer) -> None:
    app.command("show")(show_cmd)
