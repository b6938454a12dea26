"""Arista EOS's own checks (the spec's ``checks``): what EOS refuses although fabricd's model allows it, beyond
the rules every pack declares (:mod:`fabricd.nos.checks`).

Sources: Arista AVD's ``eos_cli_config_gen`` schema (pyavd 6.4, the oracle of tests/conformance/
test_arista_eos_avd.py) and the EOS User Manual's QoS chapter, as docs/platforms.md lists them.

- FAB120: the per-port PFC watchdog action is ``drop`` or ``notify-only`` (AVD schema ``qos_profiles[].
  priority_flow_control.watchdog.action``). ``no-drop`` (stop honouring pause and keep forwarding, fabricd's
  ``forward``) was removed from AVD in 6.0 as invalid EOS CLI (aristanetworks/avd#6399, PR #6400). fabricd's
  ``alert`` renders as ``notify-only``; ``forward`` has no EOS form and is refused.
- FAB121: EOS serves strict-priority tx-queues above the round-robin group, and a ``no priority`` (round-robin)
  queue takes every lower queue into the round-robin group: a strict class below a DWRR class would silently lose
  its strict priority. Not in AVD's schema; from the EOS User Manual (transmit queues), unverified on a device.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricd.intent.checks.base import Context, Finding, Severity, check, names
from fabricd.model import Platform, Scheduler

from .rules import RULES

EOS = Platform.ARISTA_EOS.value


def _eos_switches(ctx: Context) -> str | None:
    """The EOS switches, as messages name them; None in a fabric without one."""
    return names(ctx.platform_switches(EOS)) or None


@check(
    "FAB120",
    "eos-watchdog-action",
    Severity.ERROR,
    area="pfc",
    title="The watchdog action has an EOS form",
    why="EOS's per-port PFC watchdog action is drop or notify-only (AVD schema; AVD 6.0 removed no-drop as "
    "invalid CLI, aristanetworks/avd#6399). fabricd renders alert as notify-only; forward (ignore pause and keep "
    "forwarding) has no EOS form, so the switch would refuse the line.",
    fix="use action: drop (or alert, which EOS calls notify-only) in a fabric with Arista EOS switches",
)
def eos_watchdog_action(ctx: Context) -> Iterator[Finding]:
    who = _eos_switches(ctx)
    if who is None or not ctx.watchdog_active:
        return
    if ctx.policy.pfc.watchdog.action.value not in RULES.watchdog.actions:
        yield Finding(
            ("policy", "pfc", "watchdog", "action"),
            f"watchdog action forward has no Arista EOS form (switches {who})",
            expected="drop or alert (EOS: drop | notify-only)",
            got="forward",
        )


@check(
    "FAB121",
    "eos-strict-below-round-robin",
    Severity.ERROR,
    area="qos",
    title="On EOS, strict classes sit above every DWRR class",
    why="EOS serves strict-priority tx-queues above the round-robin group, and a round-robin (`no priority`) "
    "tx-queue makes every lower tx-queue round robin too: a strict class (the CNP queue) with a lower id than a "
    "DWRR class silently loses its strict priority on EOS (EOS User Manual, transmit queues).",
    fix="give the strict classes the highest traffic-class ids (e.g. swap the ids of the CNP class and the DWRR "
    "class above it), or make the class above the strict one strict too",
)
def eos_strict_below_round_robin(ctx: Context) -> Iterator[Finding]:
    who = _eos_switches(ctx)
    if who is None:
        return
    classes = ctx.policy.qos.traffic_classes
    dwrr = [tc for tc in classes if tc.scheduler == Scheduler.DWRR]
    if not dwrr:
        return
    top = max(dwrr, key=lambda tc: tc.id)
    for t, tc in enumerate(classes):
        if tc.scheduler == Scheduler.STRICT and tc.id < top.id:
            yield Finding(
                ("policy", "qos", "traffic_classes", t, "id"),
                f"strict class {tc.name!r} (id {tc.id}) is below DWRR class {top.name!r} (id {top.id}); "
                f"EOS would schedule it round robin (switches {who})",
                expected=f"an id above {top.id}, the highest DWRR class",
                got=str(tc.id),
            )


CHECKS = (eos_watchdog_action, eos_strict_below_round_robin)
