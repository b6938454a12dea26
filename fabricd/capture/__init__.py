"""``fabricd capture``: run every read-only command fabricd reads on a switch, scrub the secrets, and write a replay
folder (:mod:`fabricd.readers.switch.replay`) that ``fabricd export switches --replay`` and ``fabricd audit switch
--replay`` read instead of dialling, and that a user turns into test cases (docs/captures.md).

What is run, per device: the version command (the pack's ``version.py``), every command the switch exporter
runs (``COMMANDS`` and ``OPTIONAL_COMMANDS`` of ``fabricd.nos.<platform>.show``, per-interface ones for every
inventory port), the audit's watchdog reads, and the running config through the driver's ``get_config`` (the
audit's and drift's read). Each command is run on its own, so one the device refuses is recorded and the rest still
captured. Nothing is written to the device. Host keys are verified as every other SSH command does
(:func:`fabricd.platforms.registry.driver_for`).

A device is captured (``ok``) when every command the exporter requires and the running config were read; optional
commands and the version may fail (recorded in the manifest). An output that is the CLI refusing the command is kept
as printed (the replay then behaves as the device did) with a ``note`` in the manifest, as is a scrub that changed
what a parser reads (:func:`same_parse`). Devices run in parallel, at most ``concurrency`` at a
time; one device's failure never stops the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from fabricd import __version__
from fabricd.audit.cabling import lldp_commands
from fabricd.audit.switch import CONFIG_PARSERS, watchdog_commands
from fabricd.collectors.switch import PLATFORMS, SwitchTarget, commands_for
from fabricd.errors import FabricdError
from fabricd.model import Switch
from fabricd.nos.registry import spec_of
from fabricd.platforms.registry import SwitchReach
from fabricd.platforms.registry import driver_factory as registry_driver_factory
from fabricd.readers.switch.empty import cli_error
from fabricd.readers.switch.replay import (
    RUNNING_CONFIG,
    VERSION,
    CommandRecord,
    DeviceManifest,
    file_name,
    read_manifest,
)
from fabricd.readers.switch.scrub import scrub

from .folder import write_device, write_index

log = logging.getLogger(__name__)


class CaptureDriver(Protocol):
    """The read-only driver verbs a capture uses (every ``fabricd.platforms`` driver has them)."""

    def open(self) -> None: ...

    def close(self) -> None: ...

    def run(self, commands: list[str]) -> dict[str, str]: ...

    def get_config(self) -> str: ...


CaptureFactory = Callable[[Switch], CaptureDriver]


@dataclass(frozen=True)
class CaptureOptions(SwitchReach):
    """How to reach the captured switches: driver pacing, host-key verification, extra known_hosts."""


def driver_factory(options: CaptureOptions) -> CaptureFactory:
    """Drivers built from each switch's credential reference, host keys verified unless told not to."""
    return registry_driver_factory(options)


@dataclass(frozen=True)
class Step:
    """One command to capture: its role, the command, the interface it is for, whether it may fail."""

    role: str
    command: str
    interface: str | None
    required: bool


def plan(switch: Switch) -> list[Step]:
    """Every read-only command fabricd reads on ``switch``, in order: version, exporter commands (required, then
    optional), the audit's watchdog reads not already listed, the LLDP neighbour reads (``fabricd audit cabling``),
    then the running config."""
    platform = switch.platform.value
    target = SwitchTarget(switch.name, platform, tuple(p.name for p in switch.ports))
    steps = [Step(VERSION, spec_of(switch.platform).version_command, None, False)]
    seen = {steps[0].command}
    for optional in (False, True):
        for role, command, interface in commands_for(target, optional=optional):
            if command not in seen:
                seen.add(command)
                steps.append(Step(role, command, interface, not optional))
    for command, interface in watchdog_commands(switch.platform, target.interfaces):
        if command not in seen:
            seen.add(command)
            steps.append(Step("pfcwd", command, interface, False))
    for command, interface in lldp_commands(switch):
        if command not in seen:
            seen.add(command)
            steps.append(Step("lldp", command, interface, False))
    steps.append(Step(RUNNING_CONFIG, spec_of(platform).running_config, None, True))
    return steps


def same_parse(switch: Switch, step: Step, original: str, scrubbed: str) -> bool:
    """Whether fabricd reads the same from the scrubbed output as from the original (its show or running-config
    parser; the version parser for the version). Scrubbing must never change what a replay reports."""
    platform = switch.platform.value
    if step.role == RUNNING_CONFIG:
        return bool(CONFIG_PARSERS[switch.platform](original) == CONFIG_PARSERS[switch.platform](scrubbed))
    if step.role == VERSION:
        parse_version = spec_of(switch.platform).parse_version
        return parse_version(original) == parse_version(scrubbed)
    parser: Any = PLATFORMS[platform].parsers.get(step.role)
    if parser is None:
        return True

    def parse(text: str) -> Any:
        return parser(text, step.interface) if step.interface is not None else parser(text)

    return bool(parse(original) == parse(scrubbed))


@dataclass(frozen=True)
class CaptureResult:
    """One device's capture: where it went, the NOS version, and what failed."""

    device: str
    platform: str
    ok: bool
    folder: Path | None
    nos_version: str | None
    commands: int
    failed: tuple[str, ...]
    redactions: int
    error: str | None
    duration_s: float

    def to_json(self) -> dict[str, object]:
        return {
            "device": self.device,
            "platform": self.platform,
            "ok": self.ok,
            "folder": str(self.folder) if self.folder else None,
            "nos_version": self.nos_version,
            "commands": self.commands,
            "failed": list(self.failed),
            "redactions": self.redactions,
            "error": self.error,
            "duration_s": round(self.duration_s, 3),
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def capture_device(switch: Switch, out: Path, factory: CaptureFactory) -> CaptureResult:
    """Capture one switch into ``out/<name>/`` (replacing an earlier capture of it)."""
    start = time.monotonic()
    platform = switch.platform.value
    captured_at = _now()
    records: list[CommandRecord] = []
    outputs: dict[str, str] = {}
    failed: list[str] = []
    version: str | None = None
    error: str | None = None
    driver: CaptureDriver | None = None
    try:
        driver = factory(switch)
        driver.open()
    except FabricdError as exc:
        error = exc.render()
    except Exception as exc:  # one device's failure never stops the others
        error = f"{type(exc).__name__}: {exc}"
    if driver is None or error is not None:
        log.warning("capture %s: %s", switch.name, error, extra={"target": switch.name})
        return CaptureResult(switch.name, platform, False, None, None, 0, (), 0, error, time.monotonic() - start)
    try:
        for step in plan(switch):
            try:
                text = driver.get_config() if step.role == RUNNING_CONFIG else driver.run([step.command])[step.command]
            except FabricdError as exc:
                records.append(CommandRecord(step.role, step.command, step.interface, None, "error", exc.render()))
                if step.required:
                    failed.append(step.command)
                continue
            except Exception as exc:  # a dropped session or an unexpected reply: record it, go on
                records.append(
                    CommandRecord(
                        step.role, step.command, step.interface, None, "error", f"{type(exc).__name__}: {exc}"
                    )
                )
                if step.required:
                    failed.append(step.command)
                continue
            clean = scrub(text)
            name = file_name(step.role, step.interface)
            outputs[name] = clean.text
            rejected = cli_error(text) if step.role != RUNNING_CONFIG else None
            note = f"the device refused the command: {rejected}" if rejected else None
            if clean.redactions and not same_parse(switch, step, text, clean.text):
                note = (
                    "scrubbing changed what fabricd parses from this output: the replay may differ from the "
                    "live run here (a secret keyword in a line fabricd reads); please report it"
                )
                log.warning("capture %s: %r: %s", switch.name, step.command, note, extra={"target": switch.name})
            records.append(
                CommandRecord(
                    step.role,
                    step.command,
                    step.interface,
                    name,
                    "ok",
                    None,
                    len(clean.text.encode()),
                    clean.redactions,
                    note,
                )
            )
            if step.role == VERSION:
                version = spec_of(switch.platform).parse_version(text)
    finally:
        driver.close()
    if failed:
        error = f"{len(failed)} command(s) failed: {', '.join(failed)}"
    manifest = DeviceManifest(switch.name, platform, version, captured_at, __version__, tuple(records), error)
    folder = write_device(out, manifest, outputs)
    if error:
        log.warning("capture %s: %s", switch.name, error, extra={"target": switch.name})
    return CaptureResult(
        switch.name,
        platform,
        not failed,
        folder,
        version,
        len(records),
        tuple(failed),
        manifest.redactions,
        error,
        time.monotonic() - start,
    )


def capture_all(
    switches: Sequence[Switch],
    out: Path,
    factory: CaptureFactory,
    *,
    concurrency: int = 8,
    on_result: Callable[[CaptureResult], None] | None = None,
) -> list[CaptureResult]:
    """Capture every switch, at most ``concurrency`` at once; results in the order of ``switches``. Writes
    ``out/manifest.json`` at the end."""
    out.mkdir(parents=True, exist_ok=True)
    started = _now()
    results: dict[str, CaptureResult] = {}
    with ThreadPoolExecutor(
        max_workers=max(1, min(concurrency, len(switches) or 1)), thread_name_prefix="fabricd-capture"
    ) as pool:
        futures = {pool.submit(capture_device, sw, out, factory): sw for sw in switches}
        for fut in as_completed(futures):
            result = fut.result()
            results[result.device] = result
            if on_result is not None:
                on_result(result)
    ordered = [results[sw.name] for sw in switches]
    manifests = [read_manifest(r.folder) for r in ordered if r.folder is not None]
    write_index(out, manifests, captured_at=started, fabricd_version=__version__)
    return ordered
