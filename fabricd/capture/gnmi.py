"""``fabricd capture --gnmi``: a switch's gNMI answers for replay and bug reports: Capabilities, and one Subscribe
ONCE of every path its pack's table (``fabricd/nos/<id>/gnmi.py``) uses, one request per subscription group (as the
collector subscribes), secrets scrubbed.

Written under ``DIR/<device>/gnmi/`` (0600, inside DIR):

- ``capabilities.json``: models, encodings, gNMI version;
- ``<group>.json``: the request (prefix, paths, encoding, mode ONCE) and every notification received (timestamp,
  prefix, each update's path and decoded value) up to the sync response;
- ``values.json``: path key -> the latest value, exactly what the pack's ``to_counters`` reads, so a capture of a
  mapped NOS replays through :func:`replay_counters` into the counters the exporter would export;
- ``manifest.json``: platform, capture time, fabricd version, the table's source, and each group's error (a path the
  switch refuses is recorded and the other groups are still captured).

The login travels only as request metadata and is never written; values go through the capture scrubber
(:func:`fabricd.readers.switch.scrub.scrub`) like ``show`` outputs. Nothing is set on the device (no Set, and Get is
not used: Cumulus refuses it, every NOS streams ONCE).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabricd import __version__
from fabricd.collectors.gnmi import GnmiEndpoint
from fabricd.collectors.switch import SwitchTarget, one_line
from fabricd.nos.gnmi import GnmiPath, path_key
from fabricd.nos.gnmi_registry import table_for
from fabricd.readers.switch.model import SwitchCounters
from fabricd.readers.switch.scrub import scrub
from fabricd.safepath import inside, write_inside

GNMI_DIR = "gnmi"


@dataclass(frozen=True)
class GnmiCaptureResult:
    """One device's gNMI capture: whether Capabilities and every group answered, what failed, secrets replaced."""

    device: str
    platform: str
    ok: bool
    groups: int
    notifications: int
    redactions: int
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


async def _capture_one(target: SwitchTarget, ep: GnmiEndpoint, timeout_s: float) -> tuple[dict[str, Any], int]:
    from fabricd.platforms.gnmi import (
        auth_metadata,
        decode_value,
        gnmi_pb2,
        gnmi_pb2_grpc,
        path_text,
        secure_channel,
        settle,
        subscribe_request,
    )

    table = table_for(target.platform)
    files: dict[str, Any] = {}
    errors: dict[str, str] = {}
    values: dict[str, Any] = {}
    count = 0
    channel = secure_channel(ep.host, ep.port, ca_pem=ep.ca_pem, server_name=ep.server_name)
    try:
        stub = gnmi_pb2_grpc.gNMIStub(channel)
        md = auth_metadata(ep.username, ep.password.reveal())
        caps = await stub.Capabilities(gnmi_pb2.CapabilityRequest(), metadata=md, timeout=timeout_s)
        files["capabilities.json"] = {
            "gNMI_version": caps.gNMI_version,
            "encodings": [gnmi_pb2.Encoding.Name(e) for e in caps.supported_encodings],
            "models": [
                {"name": m.name, "organization": m.organization, "version": m.version} for m in caps.supported_models
            ],
        }
        for group, paths in table.groups().items():
            request = subscribe_request(table, paths, interval_s=ep.interval_s, mode="ONCE")
            notes: list[dict[str, Any]] = []
            try:
                async for response in stub.Subscribe(iter([request]), metadata=md, timeout=timeout_s):
                    if response.sync_response:
                        break
                    if not response.HasField("update"):
                        continue
                    n = response.update
                    updates = []
                    for u in n.update:
                        key = path_key(n.prefix.target, n.prefix.origin, path_text(u.path, n.prefix))
                        value = decode_value(u.val)
                        values[key] = value
                        updates.append({"path": path_text(u.path), "value": value})
                    notes.append(
                        {
                            "timestamp": n.timestamp,
                            "prefix": {"origin": n.prefix.origin, "target": n.prefix.target},
                            "updates": updates,
                        }
                    )
            except Exception as exc:  # a refused group is recorded; the others are still captured
                errors[group] = _status(exc)
            count += len(notes)
            files[f"{group}.json"] = {"request": _request_json(paths, table.encoding), "notifications": notes}
        files["values.json"] = values
        return {"files": files, "errors": errors}, count
    finally:
        await channel.close(grace=None)
        await settle()  # before asyncio.run cancels gRPC's own tasks for the closed calls (see settle)


def _request_json(paths: Sequence[GnmiPath], encoding: str) -> dict[str, Any]:
    return {
        "mode": "ONCE",
        "encoding": encoding,
        "prefix": {"origin": paths[0].origin, "target": paths[0].target},
        "paths": [p.path for p in paths],
    }


def _status(exc: BaseException) -> str:
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):
        return one_line(f"{code().name}: {details()}")
    return one_line(f"{type(exc).__name__}: {exc}")


def capture_gnmi(
    targets: Sequence[SwitchTarget],
    out: Path,
    endpoint: Callable[[SwitchTarget], GnmiEndpoint],
    *,
    timeout_s: float = 30.0,
) -> list[GnmiCaptureResult]:
    """Capture every target over gNMI into ``out`` (one device after another; each failure is that device's)."""
    results = []
    for target in targets:
        table = table_for(target.platform)
        folder = inside(_mkdir(out, target.name), GNMI_DIR)
        folder.mkdir(exist_ok=True)
        manifest: dict[str, Any] = {
            "device": target.name,
            "platform": target.platform,
            "transport": "gnmi",
            "captured_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "fabricd_version": __version__,
            "table_source": table.source,
            "mapped": table.mapped,
        }
        try:
            ep = endpoint(target)
            data, notes = asyncio.run(_capture_one(target, ep, timeout_s))
        except Exception as exc:  # one device's failure never stops the others
            manifest["error"] = _status(exc)
            write_inside(folder, "manifest.json", json.dumps(manifest, indent=1) + "\n", private=True)
            results.append(GnmiCaptureResult(target.name, target.platform, False, 0, 0, 0, manifest["error"]))
            continue
        redactions = 0
        for name, doc in data["files"].items():
            scrubbed = scrub(json.dumps(doc, indent=1, sort_keys=True))
            redactions += scrubbed.redactions
            write_inside(folder, name, scrubbed.text + "\n", private=True)
        manifest["errors"] = data["errors"]
        manifest["redactions"] = redactions
        write_inside(folder, "manifest.json", json.dumps(manifest, indent=1) + "\n", private=True)
        groups = len(table.groups())
        error = "; ".join(f"{g}: {e}" for g, e in data["errors"].items()) or None
        results.append(GnmiCaptureResult(target.name, target.platform, error is None, groups, notes, redactions, error))
    return results


def _mkdir(out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    folder = inside(out, name)
    folder.mkdir(exist_ok=True)
    return folder


def replay_counters(device_folder: Path, platform: str) -> SwitchCounters | None:
    """The counters a gNMI capture of a mapped NOS gives (``values.json`` through the pack's ``to_counters``);
    None when the pack has no mapping."""
    table = table_for(platform)
    if table.to_counters is None:
        return None
    values = json.loads((device_folder / GNMI_DIR / "values.json").read_text())
    return table.to_counters(values)
