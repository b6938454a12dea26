"""``fabricd audit switch``: a switch read back through its driver over SSH and checked against its intent.

Checks (each with a code and a platform-specific fix hint):

- ``SW-REACH``: the switch answers over SSH (host key verified) and its running config can be read. When it fails,
  every other check is skipped and the CLI exits 3;
- ``SW-PARSE``: every output read back parsed: a non-empty running config or watchdog output that its parser reads
  nothing from (an output shape fabricd does not know) is a finding naming the command, never a silent pass;
- ``SW-DRIFT``: the running config against the rendered intent, on what fabricd owns, with the platform driver's
  ``compare`` (the same comparison ``fabricd diff`` and the push pipeline's verify step use);
- lossless semantics, from the running config parsed by the platform pack's parser (``fabricd.nos.<id>.running``):
  ``SW-TRUST`` (trust mode), ``SW-DSCP-MAP`` (DSCP, or PCP under PCP trust, -> priority -> egress queue),
  ``SW-PFC`` (PFC on exactly the lossless priorities of every port), ``SW-ECN`` (ECN marking and thresholds on the
  queues the policy gives ECN, normally the lossless one), ``SW-WD`` (PFC watchdog on those priorities with the
  intended detection/restoration timers), ``SW-MTU`` (port MTU; on NX-OS also the no-drop class MTU);
- ``SW-WD-STUCK``: Meta's health check (facebook/DNE-TaaC ``pfc_wd_health_check.py``): a queue whose PFC watchdog
  detected storms but never restored (detected > 0 and restored == 0) is stuck. NVUE keeps no restore count, so
  there a queue with storms counted and still in ``DEADLOCK`` is stuck. The counters come from the platform's
  watchdog show command, parsed by its pack's show parser (``fabricd.nos.<platform>.show``).

Semantic checks compare what is *in effect* per port, so the same problem on several ports (a global map, a
shared profile) is one finding naming every port. :func:`evaluate` is pure (intent + read-back in, report out);
:func:`read_switch` does the I/O; :func:`audit_switch` ties them together. Nothing here prints or exits.

``fabricd.deploy`` is a sibling layer (import-linter), so this module renders the candidate and builds drivers
itself from the same L1/L2 pieces ``fabricd.deploy.targets`` and ``fabricd.deploy.pipeline`` use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import JsonValue

from fabricd.errors import DriverError, FabricdError, Fix
from fabricd.intent.switch import PortIntent
from fabricd.model import Fabric, Platform, Switch
from fabricd.model.checks import by_code
from fabricd.nos.registry import SPECS, AnySwitchIntent, SwitchIntentBuilder, spec_of
from fabricd.platforms.access import Access
from fabricd.platforms.base import ConfigDelta
from fabricd.platforms.registry import SwitchReach, driver_class
from fabricd.platforms.registry import driver_factory as registry_driver_factory
from fabricd.platforms.secrets import Secret
from fabricd.readers.switch.config_model import LosslessConfig, PortConfig
from fabricd.readers.switch.empty import empty_parse_problem, has_content, has_rows, parsed_nothing
from fabricd.readers.switch.model import PfcwdCounter, SwitchCounters, merge
from fabricd.readers.switch.replay import ReplayDevice, ReplayFolder
from fabricd.render import environment, render_switch_intent

from .report import AuditReport, CheckSpec, Results, Status

log = logging.getLogger(__name__)


class ReadBack(Protocol):
    """The driver verbs the audit uses (every ``fabricd.platforms`` driver has them). Nothing is written."""

    def open(self) -> None: ...

    def close(self) -> None: ...

    def get_config(self) -> str: ...

    def compare(self, running: str, candidate: str) -> ConfigDelta: ...

    def run(self, commands: list[str]) -> dict[str, str]: ...


ReadBackFactory = Callable[[Switch], ReadBack]


@dataclass(frozen=True, kw_only=True)
class SwitchCheck(CheckSpec):
    """A switch audit check. ``hint`` is the generic fix in words (``HINTS`` adds the platform's own commands);
    the ``fixes``' arguments' ``{switch}`` is the audited switch's name."""

    subject: str = "switch"

    @property
    def restores_intent(self) -> bool:
        """The fix is a push of the intent: the platform's own commands come first, the push is the alternative."""
        return any(f.command == ("push",) for f in self.fixes)

    def fixes_for(self, switch: str) -> list[Fix]:
        return [
            Fix(f.command, {k: v.format(switch=switch) if isinstance(v, str) else v for k, v in f.args.items()}, f.text)
            for f in self.fixes
        ]


def _switch(code: str, title: str, hint: str = "", fixes: tuple[Fix, ...] = ()) -> SwitchCheck:
    return SwitchCheck(code=code, title=title, hint=hint, fixes=fixes)


_PUSH = Fix(("push",), {"device": "{switch}"}, "restores the intent")
SWITCH_CHECKS: tuple[SwitchCheck, ...] = (
    _switch(
        "SW-REACH",
        "reachable over SSH and readable",
        "check mgmt.host/mgmt.port and the credentials in the inventory",
        (Fix(("lab", "up"), text="for the lab"),),
    ),
    _switch(
        "SW-PARSE",
        "every output read back parsed (no output shape fabricd does not understand)",
        "capture the device and report the output shape (a NOS release fabricd's parsers do not read yet)",
        (
            Fix(("capture",), {"device": "{switch}"}, "captures it"),
            Fix(("docs",), operands=("captures",), text="how to report it"),
        ),
    ),
    _switch(
        "SW-DRIFT",
        "running config matches the rendered intent (what fabricd owns)",
        "",
        (Fix(("diff",), {"device": "{switch}"}, "shows the difference"), _PUSH),
    ),
    _switch("SW-TRUST", "trust mode", fixes=(_PUSH,)),
    _switch("SW-DSCP-MAP", "DSCP (or PCP) -> priority -> egress queue", fixes=(_PUSH,)),
    _switch("SW-PFC", "PFC on exactly the lossless priorities of every port", fixes=(_PUSH,)),
    _switch("SW-ECN", "ECN marking and thresholds on the ECN (lossless) queues", fixes=(_PUSH,)),
    _switch("SW-WD", "PFC watchdog on the lossless priorities, intended timers", fixes=(_PUSH,)),
    _switch("SW-MTU", "port MTU (and the no-drop class MTU)", "keep host MTUs <= the switch port MTU", (_PUSH,)),
    _switch(
        "SW-WD-STUCK",
        "no PFC watchdog stuck (storm detected, never restored)",
        "the queue is still paused by its peer: find the storming NIC (RX pause counters), fix or reset it, "
        "then clear the watchdog counters",
        (Fix(("watch",), text="shows which NIC storms"),),
    ),
)
CHECK_BY_CODE = by_code(SWITCH_CHECKS)

HINTS: dict[tuple[str, Platform], str] = {
    (code, platform): hint for platform, spec in SPECS.items() for code, hint in spec.audit_hints.items()
}
"""(code, platform) -> the platform's own fix commands, from each pack's ``audit_hints``."""

CONFIG_PARSERS: dict[Platform, Callable[[str], LosslessConfig]] = {
    platform: spec.parse_running_config for platform, spec in SPECS.items()
}
"""Platform -> running-config parser (each pack's ``parse_running_config``)."""

MAX_LISTED = 8
"""Codepoints listed per DSCP-map finding before ``... and N more``."""
MAX_DRIFT = 20
"""Drift findings listed before one ``... and N more`` finding (``fabricd diff`` shows them all)."""


# ------------------------------------------------------------------------------------------------------------
# Reading the switch (I/O)
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditOptions(SwitchReach):
    """How to reach the audited switches: driver pacing, host-key verification, extra known_hosts."""


def driver_factory(options: AuditOptions) -> ReadBackFactory:
    """Drivers built from each switch's credential reference (:mod:`fabricd.platforms.access`)."""
    return registry_driver_factory(options)


class ReplayReadBack:
    """A captured switch (``fabricd capture`` folder) read back like a live one: outputs from the capture, drift
    with the platform driver's own ``compare`` (nothing is dialled)."""

    def __init__(self, switch: Switch, device: ReplayDevice) -> None:
        if device.manifest.platform != switch.platform.value:
            raise DriverError(
                switch.name,
                "connect",
                f"the capture {device.folder} is of a "
                f"{device.manifest.platform} device; the inventory says {switch.platform.value}",
                hint="pass the inventory the capture was taken with",
            )
        self.device = device
        self._compare = driver_class(switch.platform)(switch, Access(switch.name, "replay", 0, "", Secret(""), ()))

    def open(self) -> None:
        self.device.open()

    def close(self) -> None:
        self.device.close()

    def get_config(self) -> str:
        return self.device.get_config()

    def compare(self, running: str, candidate: str) -> ConfigDelta:
        return self._compare.compare(running, candidate)

    def run(self, commands: list[str]) -> dict[str, str]:
        return self.device.run(commands)


def replay_factory(root: Path) -> ReadBackFactory:
    """Read-backs from a ``fabricd capture`` folder instead of drivers."""
    folder = ReplayFolder(root)

    def make(switch: Switch) -> ReadBack:
        return ReplayReadBack(switch, folder.device(switch.name))

    return make


def watchdog_commands(platform: Platform, ports: Iterable[str]) -> list[tuple[str, str | None]]:
    """``(command, interface)`` pairs that read the PFC watchdog counters (per-interface on NVUE)."""
    show = spec_of(platform).show
    command: str = show.commands.get("pfcwd") or show.optional["pfcwd"]
    if "{interface}" in command:
        return [(command.format(interface=p), p) for p in ports]
    return [(command, None)]


def parse_watchdog(
    platform: Platform, outputs: dict[str, str], ports: Iterable[str], *, device: str = "switch"
) -> SwitchCounters:
    """The watchdog counters of ``outputs`` (command -> text) with the platform's ``pfcwd`` parser. A non-empty
    output the parser reads nothing from adds a problem naming ``device`` and the command."""
    parser: Any = spec_of(platform).show.parsers["pfcwd"]
    parts = []
    for command, interface in watchdog_commands(platform, ports):
        text = outputs.get(command)
        if text is not None:
            part = parser(text, interface) if interface is not None else parser(text)
            if parsed_nothing(text, part):
                part = SwitchCounters(
                    problems=(empty_parse_problem(device, command, text, "; ".join(part.problems) or None),)
                )
            elif not has_rows(part):
                part = SwitchCounters()  # nothing to read, or an empty answer the parser recognised
            parts.append(part)
    return merge(parts)


@dataclass(frozen=True)
class SwitchReadback:
    """What was read from one switch: its running config, the drift against the candidate and the watchdog
    counters, or why they could not be read. ``where`` names the endpoint for the report."""

    where: str
    running: str | None = None
    delta: ConfigDelta | None = None
    watchdog: SwitchCounters | None = None
    watchdog_error: str | None = None
    error: str | None = None


def read_switch(switch: Switch, candidate: str, factory: ReadBackFactory) -> SwitchReadback:
    """Connect, read the running config, compare it with ``candidate`` and read the watchdog counters."""
    where = f"{switch.name} ({switch.platform.value}) at [{switch.mgmt.host}]:{switch.mgmt.port}"
    driver: ReadBack | None = None
    try:
        driver = factory(switch)
        driver.open()
        running = driver.get_config()
        delta = driver.compare(running, candidate)
    except FabricdError as exc:
        log.info("%s", exc.render(), extra={"target": switch.name})
        if driver is not None:
            driver.close()
        return SwitchReadback(where, error=exc.render())
    ports = [p.name for p in switch.ports]
    try:
        commands = [c for c, _ in watchdog_commands(switch.platform, ports)]
        outputs = driver.run(commands)
        return SwitchReadback(
            where, running, delta, parse_watchdog(switch.platform, outputs, ports, device=switch.name)
        )
    except FabricdError as exc:
        return SwitchReadback(where, running, delta, watchdog_error=exc.render())
    finally:
        driver.close()


def candidate_of(intent: AnySwitchIntent, templates_dir: Path | None = None) -> str:
    """The rendered config of ``intent`` (the file ``fabricd render`` writes: .cfg, .json or .nvue)."""
    return render_switch_intent(intent, environment(templates_dir)).primary.text


def audit_switch(
    fabric: Fabric, switch: Switch, factory: ReadBackFactory, *, templates_dir: Path | None = None
) -> AuditReport:
    """Read ``switch`` through ``factory``'s driver and check it against its intent in ``fabric``."""
    intent = SwitchIntentBuilder(fabric).build(switch)
    back = read_switch(switch, candidate_of(intent, templates_dir), factory)
    return evaluate(intent, back)


def reachable(report: AuditReport) -> bool:
    """False when the report's switch could not be read (its SW-REACH check failed)."""
    return all(c.status != Status.FAIL for c in report.checks if c.code == "SW-REACH")


# ------------------------------------------------------------------------------------------------------------
# Checking (pure)
# ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Key:
    code: str
    path: str
    message: str
    expected: str
    got: str


class _Collector:
    """Findings per check; the same finding on several ports becomes one naming every port. The fix hint goes with
    the first finding of a check (the others would repeat it)."""

    def __init__(self, intent: AnySwitchIntent) -> None:
        self.intent = intent
        self.found: dict[str, dict[_Key, list[str]]] = {c.code: {} for c in SWITCH_CHECKS}
        self.results = Results(SWITCH_CHECKS)
        self.notes = self.results.notes

    def add(self, code: str, obj: str, path: str, message: str, *, expected: JsonValue, got: JsonValue) -> None:
        key = _Key(code, path, message, _text(expected), _text(got))
        self.found[code].setdefault(key, []).append(obj)

    def skip(self, code: str, why: str) -> None:
        self.results.skip(code, why)

    def hint(self, code: str) -> tuple[str, list[Fix]]:
        """The hint in words and the fixes; where the fix restores the intent the platform's own commands come
        first (the push is the alternative), otherwise after the generic hint."""
        check = CHECK_BY_CODE[code]
        own = HINTS.get((code, self.intent.platform))
        parts = [own, check.hint] if check.restores_intent else [check.hint, own]
        return "; ".join(p for p in parts if p), check.fixes_for(self.intent.name)

    def report(self) -> AuditReport:
        for c in SWITCH_CHECKS:
            hint, fixes = self.hint(c.code)
            for i, (k, objs) in enumerate(self.found[c.code].items()):
                self.results.add(
                    c.finding(
                        obj=", ".join(objs),
                        path=k.path,
                        message=k.message,
                        expected=k.expected,
                        got=k.got,
                        hint=hint if i == 0 else "",
                        fixes=fixes if i == 0 else [],
                    )
                )
        return self.results.report("switch", self.intent.name, note_failures=True)


def _text(value: JsonValue) -> str:
    if value is None:
        return "not set (device default)"
    return str(value)


def _prios(values: Iterable[int]) -> str:
    got = sorted(values)
    return ",".join(map(str, got)) if got else "none"


def evaluate(intent: AnySwitchIntent, back: SwitchReadback) -> AuditReport:
    """Check one switch's read-back against its intent (pure)."""
    col = _Collector(intent)
    if back.error is not None or back.running is None:
        col.add(
            "SW-REACH",
            intent.name,
            "ssh",
            "cannot read the switch",
            expected="reachable and readable",
            got=back.error or "no running config",
        )
        for c in SWITCH_CHECKS[1:]:
            col.skip(c.code, "the switch could not be read")
        return col.report()
    col.notes["SW-REACH"] = back.where
    config = spec_of(intent.platform).parse_running_config(back.running)
    _parsed(col, intent, back, config)
    _drift(col, back.delta, config)
    present: list[tuple[PortIntent, PortConfig]] = []
    for port in intent.ports:
        got = config.ports.get(port.name)
        if got is None:
            col.add(
                "SW-MTU",
                port.name,
                "interface",
                "port is not in the running config (name or breakout differs?)",
                expected=port.name,
                got=None,
            )
        else:
            present.append((port, got))
    for port, got in present:
        _trust(col, intent, port.name, got)
        _maps(col, intent, port.name, got)
        _pfc(col, port, got)
        _ecn(col, intent, port.name, got)
        _mtu(col, intent, port, got)
    _watchdog(col, intent, present)
    _stuck(col, intent, back)
    if not intent.trust_dscp:
        col.notes.setdefault("SW-DSCP-MAP", "PCP trust: the PCP map was checked")
    return col.report()


def _parsed(col: _Collector, intent: AnySwitchIntent, back: SwitchReadback, config: LosslessConfig) -> None:
    """SW-PARSE: the running config gave ports (or was empty), and no watchdog output parsed to nothing."""
    running = back.running or ""
    if not config.ports and has_content(running):
        command = spec_of(intent.platform).running_config
        col.add(
            "SW-PARSE",
            intent.name,
            "running config",
            empty_parse_problem(intent.name, command, running),
            expected="per-port lossless settings read",
            got="; ".join(config.problems) or "no port read",
        )
    if back.watchdog is not None:
        for problem in back.watchdog.problems:  # an unreadable output, whether the parser said so or read nothing
            col.add("SW-PARSE", intent.name, "watchdog counters", problem, expected="watchdog rows read", got="none")


def _drift(col: _Collector, delta: ConfigDelta | None, config: LosslessConfig) -> None:
    changes = list(delta.changes) if delta is not None else []
    for change in changes[:MAX_DRIFT]:
        kind = change.split(" ", 1)[0].rstrip(":")
        col.add(
            "SW-DRIFT",
            col.intent.name,
            "running config",
            change,
            expected="as rendered from the intent",
            got=kind if kind in ("missing", "unexpected", "different") else "differs",
        )
    if len(changes) > MAX_DRIFT:
        col.add(
            "SW-DRIFT",
            col.intent.name,
            "running config",
            f"... and {len(changes) - MAX_DRIFT} more difference(s)",
            expected="as rendered from the intent",
            got=f"{len(changes)} differences",
        )
    if config.problems:
        col.notes["SW-DRIFT"] = "read-back problems: " + "; ".join(config.problems)


def _trust(col: _Collector, intent: AnySwitchIntent, name: str, got: PortConfig) -> None:
    want = "dscp" if intent.trust_dscp else "pcp"
    if got.trust != want:
        col.add("SW-TRUST", name, "trust", "port does not classify on the intended field", expected=want, got=got.trust)


def _maps(col: _Collector, intent: AnySwitchIntent, name: str, got: PortConfig) -> None:
    field_name = "DSCP" if intent.trust_dscp else "PCP"
    want_prio = {cp: line.priority for line in intent.classifier for cp in line.codepoints}
    want_queue = {pq.priority: pq.queue for pq in intent.priority_queues}
    to_prio = got.dscp_to_priority if intent.trust_dscp else got.pcp_to_priority
    to_queue = got.dscp_to_queue if intent.trust_dscp else got.pcp_to_queue
    if to_prio is None and to_queue is None:
        col.add(
            "SW-DSCP-MAP",
            name,
            f"{field_name.lower()} map",
            f"no {field_name} classification in effect",
            expected=f"{len(want_prio)} {field_name} values mapped",
            got=None,
        )
        return
    if to_prio is not None:
        wrong = _wrong_priorities(field_name, want_prio, to_prio)
        ptq = got.priority_to_queue
        if ptq is None:
            col.add(
                "SW-DSCP-MAP",
                name,
                "priority -> queue map",
                "no priority to egress queue map in effect",
                expected="8 priorities mapped",
                got=None,
            )
        else:
            wrong += [
                f"priority {p}: queue {_text(ptq.get(p))} (expected {q})"
                for p, q in sorted(want_queue.items())
                if ptq.get(p) != q
            ]
    else:
        assert to_queue is not None
        wrong = [
            f"{field_name} {cp}: queue {_text(to_queue.get(cp))} (expected {want_queue.get(prio)})"
            for cp, prio in sorted(want_prio.items())
            if to_queue.get(cp) != want_queue.get(prio)
        ]
    if wrong:
        more = f" ... and {len(wrong) - MAX_LISTED} more" if len(wrong) > MAX_LISTED else ""
        col.add(
            "SW-DSCP-MAP",
            name,
            f"{field_name.lower()} map",
            f"{len(wrong)} mapping(s) differ from the intent",
            expected="the policy's map",
            got="; ".join(wrong[:MAX_LISTED]) + more,
        )


def _wrong_priorities(field_name: str, want: dict[int, int], have: dict[int, int]) -> list[str]:
    """``DSCP 26: priority 0 (expected 3)`` for every codepoint mapped to another priority than intended."""
    return [
        f"{field_name} {cp}: priority {_text(have.get(cp))} (expected {prio})"
        for cp, prio in sorted(want.items())
        if have.get(cp) != prio
    ]


def _pfc(col: _Collector, port: PortIntent, got: PortConfig) -> None:
    want = set(port.pfc_priorities)
    have = set(got.pfc_priorities)
    if want == have:
        return
    if not have and want:
        message = "PFC is off" + (f": {got.pfc_note}" if got.pfc_note else "")
    elif want - have:
        message = f"PFC is missing on lossless priority {_prios(want - have)}"
    else:
        message = f"PFC is on priority {_prios(have - want)}, which the policy keeps lossy"
    col.add("SW-PFC", port.name, "pfc", message, expected=_prios(want), got=_prios(have))


def _bytes(value: int, unit: str) -> int:
    """An intent ECN threshold in bytes (``kbytes`` are 1000 bytes, as the intent renders them for EOS/NX-OS)."""
    return value * 1000 if unit == "kbytes" else value


def _ecn(col: _Collector, intent: AnySwitchIntent, name: str, got: PortConfig) -> None:
    queues = [q for q in intent.queues if q.ecn is not None]
    if not queues:
        col.skip("SW-ECN", "the policy gives no queue ECN")
        return
    for q in queues:
        assert q.ecn is not None
        want = (
            _bytes(q.ecn.min_threshold, q.ecn.unit),
            _bytes(q.ecn.max_threshold, q.ecn.unit),
            q.ecn.probability_percent,
        )
        want_text = f"min {want[0]} B, max {want[1]} B, {want[2]} %"
        setting = got.ecn.get(q.id)
        if setting is None or not setting.enabled:
            col.add(
                "SW-ECN",
                name,
                f"queue {q.id} ecn",
                f"ECN marking is off on queue {q.id}" + (" (lossless)" if q.lossless else ""),
                expected=want_text,
                got="off",
            )
            continue
        have = (setting.min_bytes, setting.max_bytes, setting.probability_percent)
        if have != want:
            col.add(
                "SW-ECN",
                name,
                f"queue {q.id} ecn",
                f"ECN thresholds on queue {q.id} differ",
                expected=want_text,
                got=f"min {_text(have[0])} B, max {_text(have[1])} B, {_text(have[2])} %",
            )


def _mtu(col: _Collector, intent: AnySwitchIntent, port: PortIntent, got: PortConfig) -> None:
    if got.mtu_bytes != port.mtu_bytes:
        col.add(
            "SW-MTU", port.name, "mtu", "port MTU differs from the intent", expected=port.mtu_bytes, got=got.mtu_bytes
        )
    for q in intent.queues:
        class_mtu = got.queue_mtu_bytes.get(q.id)
        if q.lossless and class_mtu is not None and class_mtu < port.mtu_bytes:
            col.add(
                "SW-MTU",
                port.name,
                f"queue {q.id} class mtu",
                f"no-drop class MTU of queue {q.id} is below the port MTU: larger frames are dropped",
                expected=f">= {port.mtu_bytes}",
                got=class_mtu,
            )


def intended_timers(intent: AnySwitchIntent) -> tuple[int | None, int | None] | None:
    """(detection, restoration) in ms the intent gives the PFC watchdog, in the platform's own terms converted back
    (each pack's inverse watchdog codec: EOS seconds, NX-OS multiples of its poll, NVUE polling-interval x
    robustness and one polling interval to
    restore); None when the intent has no watchdog."""
    wd = intent.watchdog
    if wd is None:
        return None
    ms = spec_of(intent.platform).watchdog.to_ms(wd)
    return ms.detection_ms, ms.restoration_ms


def _watchdog(col: _Collector, intent: AnySwitchIntent, present: list[tuple[PortIntent, PortConfig]]) -> None:
    timers = intended_timers(intent)
    if timers is None:
        col.skip("SW-WD", "the policy has no PFC watchdog (disabled, or no lossless priority)")
        return
    det, rest = timers
    for port, got in present:
        if not port.watchdog:
            continue
        want = set(port.pfc_priorities)
        have = set(got.watchdog_priorities)
        if not want <= have:
            message = "PFC watchdog is off" if not have else f"PFC watchdog misses priority {_prios(want - have)}"
            col.add("SW-WD", port.name, "watchdog", message, expected=_prios(want), got=_prios(have))
            continue
        if got.detection_ms != det or (rest is not None and got.restoration_ms != rest):
            col.add(
                "SW-WD",
                port.name,
                "watchdog timers",
                "PFC watchdog timers differ from the intent",
                expected=f"detection {det} ms, restoration {_text(rest)} ms",
                got=f"detection {_text(got.detection_ms)} ms, restoration {_text(got.restoration_ms)} ms",
            )


def is_stuck(c: PfcwdCounter) -> bool:
    """Meta's rule: storms detected and none restored. Without a restore count (NVUE): detected and still
    stormed."""
    if not c.detected:
        return False
    if c.restored is not None:
        return c.restored == 0
    return c.status == "stormed"


def _stuck(col: _Collector, intent: AnySwitchIntent, back: SwitchReadback) -> None:
    if back.watchdog_error is not None or back.watchdog is None:
        col.add(
            "SW-WD-STUCK",
            intent.name,
            "watchdog counters",
            "cannot read the PFC watchdog counters",
            expected="readable",
            got=back.watchdog_error,
        )
        return
    rows = back.watchdog.pfcwd
    if back.watchdog.problems:  # unreadable output: SW-PARSE reports it; never "no stuck queue" on nothing
        col.skip("SW-WD-STUCK", "the watchdog counters could not be read: " + back.watchdog.problems[0])
        return
    col.notes["SW-WD-STUCK"] = f"{len(rows)} watchdog queue(s) reported"
    for c in rows:
        if is_stuck(c):
            restored = "no restore count (NVUE)" if c.restored is None else str(c.restored)
            col.add(
                "SW-WD-STUCK",
                f"{c.interface}:{c.queue}",
                f"queue {c.queue} watchdog",
                f"PFC watchdog detected {c.detected} storm(s) and never restored (status {_text(c.status)})",
                expected="restored after every detection",
                got=f"detected {c.detected}, restored {restored}",
            )
