"""The replay folder ``fabricd capture`` writes and ``fabricd export switches --replay`` / ``fabricd audit switch
--replay`` read instead of dialling (layout in `fabricd docs captures`):

```
DIR/manifest.json                 {"format": "fabricd-capture/1", "fabricd_version", "captured_at", "devices": [...]}
DIR/<device>/manifest.json        device, platform, nos_version, captured_at, redactions, commands: [
                                      {"role", "command", "interface", "file", "status": "ok"|"error", "error",
                                       "bytes", "redactions", "note"} ]
DIR/<device>/<role>[@<interface>].txt   one file per command: its output as the device printed it, secrets scrubbed
```

Roles are the parser-role keys of :mod:`fabricd.nos.roles` (``pfc``, ``queuing``, ``running-config``,
``version``...). Files hold the output exactly (no header line), so a replay parses as the live run did; a capture
becomes a test case by copying a file into tests/golden with a ``# source:`` first line (`fabricd docs captures`).

Reading is pure file I/O: :class:`ReplayDevice` answers ``run(commands)`` and ``get_config()`` like a platform
driver, and raises :class:`~fabricd.errors.DriverError` for a command the capture does not hold or that failed when
it was captured, as the device did.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabricd.errors import DriverError, Fix, UsageError

FORMAT = "fabricd-capture/1"
MANIFEST = "manifest.json"
RUNNING_CONFIG = "running-config"
VERSION = "version"


def file_name(role: str, interface: str | None = None) -> str:
    """``pfc.txt``, ``qos@swp1.txt``, ``running-config.txt``: characters outside ``[A-Za-z0-9._-]`` become ``_``."""
    base = role if interface is None else f"{role}@{interface}"
    return re.sub(r"[^A-Za-z0-9._@-]", "_", base) + ".txt"


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """One command of a device capture and where its output is."""

    role: str
    command: str
    interface: str | None
    file: str | None
    status: str
    error: str | None = None
    bytes: int = 0
    redactions: int = 0
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class DeviceManifest:
    """What was captured from one device."""

    device: str
    platform: str
    nos_version: str | None
    captured_at: str
    fabricd_version: str
    commands: tuple[CommandRecord, ...]
    error: str | None = None

    @property
    def redactions(self) -> int:
        return sum(c.redactions for c in self.commands)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "device": self.device,
            "platform": self.platform,
            "nos_version": self.nos_version,
            "captured_at": self.captured_at,
            "fabricd_version": self.fabricd_version,
            "error": self.error,
            "redactions": self.redactions,
            "commands": [c.to_json() for c in self.commands],
        }


# -- reading ---------------------------------------------------------------------------------------------------


def _bad(path: Path, what: str) -> UsageError:
    return UsageError(
        f"{path}: {what}",
        hint="pass a folder written by a capture",
        fixes=(
            Fix(("capture",), {"out": "DIR"}, "writes one"),
            Fix(("docs",), operands=("captures",), text="describes the layout"),
        ),
    )


def _record(path: Path, raw: Any) -> CommandRecord:
    if not isinstance(raw, dict) or not isinstance(raw.get("command"), str) or not isinstance(raw.get("role"), str):
        raise _bad(path, f"a command entry is not {{role, command, file, status}}: {raw!r:.120}")
    return CommandRecord(
        raw["role"],
        raw["command"],
        raw.get("interface"),
        raw.get("file"),
        str(raw.get("status", "ok")),
        raw.get("error"),
        int(raw.get("bytes") or 0),
        int(raw.get("redactions") or 0),
        raw.get("note"),
    )


def read_manifest(folder: Path) -> DeviceManifest:
    """``folder/manifest.json`` of one device, checked."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _bad(path, f"cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise _bad(path, f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise _bad(path, f"format is {got!r}; expected {FORMAT!r}")
    for key in ("device", "platform", "captured_at"):
        if not isinstance(data.get(key), str):
            raise _bad(path, f"{key!r} is missing")
    commands = tuple(_record(path, c) for c in data.get("commands") or [])
    return DeviceManifest(
        data["device"],
        data["platform"],
        data.get("nos_version"),
        data["captured_at"],
        str(data.get("fabricd_version", "")),
        commands,
        data.get("error"),
    )


@dataclass
class ReplayDevice:
    """One captured device, answering like its driver (``open``/``close``/``run``/``get_config``)."""

    folder: Path
    manifest: DeviceManifest
    _by_command: dict[str, CommandRecord] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_command = {c.command: c for c in self.manifest.commands}

    @property
    def name(self) -> str:
        return self.manifest.device

    def _text(self, command: str, op: str) -> str:
        rec = self._by_command.get(command)
        if rec is None:
            raise DriverError(
                self.name,
                op,
                f"{command!r} is not in the capture {self.folder}",
                hint="capture the device again with this fabricd version",
                fixes=(Fix(("capture",), {"device": self.name}),),
            )
        if rec.status != "ok" or rec.file is None:
            raise DriverError(self.name, op, f"{command!r} failed when captured: {rec.error or rec.status}")
        try:
            return (self.folder / rec.file).read_text(encoding="utf-8")
        except OSError as exc:
            raise DriverError(self.name, op, f"cannot read {self.folder / rec.file}: {exc.strerror or exc}") from None

    def open(self) -> None:
        """Nothing to connect to."""

    def close(self) -> None:
        """Nothing to close."""

    def run(self, commands: list[str]) -> dict[str, str]:
        return {c: self._text(c, "command") for c in commands}

    def get_config(self) -> str:
        rec = next((c for c in self.manifest.commands if c.role == RUNNING_CONFIG), None)
        if rec is None:
            raise DriverError(self.name, "get_config", f"the capture {self.folder} has no running config")
        return self._text(rec.command, "get_config")

    def interfaces(self, role: str) -> tuple[str, ...]:
        """Interfaces of the per-interface commands captured for ``role``."""
        return tuple(c.interface for c in self.manifest.commands if c.role == role and c.interface is not None)


class ReplayFolder:
    """A capture folder: its devices by name."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise UsageError(
                f"{root}: the replay folder is not a directory",
                hint="pass the folder a capture wrote",
                fixes=(Fix(("capture",), {"out": "DIR"}, "writes one"),),
            )
        self.root = root
        self.devices: dict[str, ReplayDevice] = {}
        for sub in sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST).is_file()):
            manifest = read_manifest(sub)
            self.devices[manifest.device] = ReplayDevice(sub, manifest)
        if not self.devices:
            raise _bad(root, "no device folder with a manifest.json")

    def device(self, name: str) -> ReplayDevice:
        dev = self.devices.get(name)
        if dev is None:
            raise DriverError(
                name,
                "connect",
                f"{name} is not in the capture {self.root} (captured: {', '.join(self.devices)})",
                fixes=(Fix(("capture",), {"device": name, "out": "DIR"}),),
            )
        return dev
