"""Writing the replay folder ``fabricd capture`` makes (the layout and its reader are
:mod:`fabricd.readers.switch.replay`; readers only read, so the writer lives here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabricd.readers.switch.replay import FORMAT, MANIFEST, DeviceManifest
from fabricd.safepath import inside, write_inside


def write_device(root: Path, manifest: DeviceManifest, outputs: dict[str, str]) -> Path:
    """Write ``DIR/<device>/``: each output (file name -> text) and the manifest last, replacing an older capture of
    the same device. Files are 0600 (running configs, even scrubbed), and every path stays inside ``root``
    (:func:`fabricd.safepath.inside`: a device or file name that would leave it is refused)."""
    root.mkdir(parents=True, exist_ok=True)
    folder = inside(root, manifest.device)
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.txt"):
        old.unlink()
    for name, text in outputs.items():
        write_inside(folder, name, text, private=True)
    write_inside(folder, MANIFEST, json.dumps(manifest.to_json(), indent=1) + "\n", private=True)
    return folder


def write_index(root: Path, manifests: list[DeviceManifest], *, captured_at: str, fabricd_version: str) -> None:
    """Write ``DIR/manifest.json`` listing every device folder present (this run's and earlier ones kept)."""
    devices: dict[str, dict[str, Any]] = {}
    index = root / MANIFEST
    if index.is_file():
        try:
            for d in json.loads(index.read_text()).get("devices", []):
                if isinstance(d, dict) and isinstance(d.get("device"), str) and (root / d["device"]).is_dir():
                    devices[d["device"]] = d
        except (ValueError, AttributeError):
            pass
    for m in manifests:
        devices[m.device] = {
            "device": m.device,
            "platform": m.platform,
            "nos_version": m.nos_version,
            "captured_at": m.captured_at,
            "error": m.error,
        }
    data = {
        "format": FORMAT,
        "fabricd_version": fabricd_version,
        "captured_at": captured_at,
        "devices": sorted(devices.values(), key=lambda d: str(d["device"])),
    }
    write_inside(root, MANIFEST, json.dumps(data, indent=1) + "\n")
