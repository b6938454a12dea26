"""The capture folder's reader (fabricd/readers/switch/replay.py): written and read back, and the errors a user
meets with a folder that is not one (a located message and a hint, exit 2; a command the capture lacks is a
DriverError, as a device that refused it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricd.capture.folder import write_device, write_index
from fabricd.cli.common import render_error
from fabricd.errors import DriverError, UsageError
from fabricd.readers.switch.replay import (
    CommandRecord,
    DeviceManifest,
    ReplayFolder,
    file_name,
)


def _manifest() -> DeviceManifest:
    return DeviceManifest(
        "leaf3-nxos",
        "cisco_nxos",
        "10.3(4a)",
        "2026-11-25T18:00:00+00:00",
        "0.1.0",
        (
            CommandRecord("pfc", "show interface priority-flow-control | json", None, "pfc.txt", "ok", None, 3),
            CommandRecord("errors", "show interface counters errors", None, None, "error", "% Invalid command"),
            CommandRecord("running-config", "show running-config", None, "running-config.txt", "ok", None, 9),
        ),
    )


def test_write_and_read_back(tmp_path: Path) -> None:
    write_device(tmp_path, _manifest(), {"pfc.txt": "{}\n", "running-config.txt": "hostname x\n"})
    write_index(tmp_path, [_manifest()], captured_at="2026-11-25T18:00:00+00:00", fabricd_version="0.1.0")
    folder = ReplayFolder(tmp_path)
    dev = folder.device("leaf3-nxos")
    assert dev.run(["show interface priority-flow-control | json"]) == {
        "show interface priority-flow-control | json": "{}\n"
    }
    assert dev.get_config() == "hostname x\n"
    with pytest.raises(DriverError, match="failed when captured: % Invalid command"):
        dev.run(["show interface counters errors"])
    with pytest.raises(DriverError, match="not in the capture"):
        dev.run(["show queuing | json"])
    with pytest.raises(DriverError, match="leaf9 is not in the capture"):
        folder.device("leaf9")
    assert json.loads((tmp_path / "manifest.json").read_text())["devices"][0]["nos_version"] == "10.3(4a)"


def test_file_names_are_safe() -> None:
    assert file_name("qos", "swp1") == "qos@swp1.txt"
    assert file_name("queuing", "Ethernet1/1") == "queuing@Ethernet1_1.txt"
    assert file_name("running-config") == "running-config.txt"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no device folder"),
        ("not json", "not JSON"),
        (json.dumps({"format": "other/9"}), "format is 'other/9'"),
        (json.dumps({"format": "fabricd-capture/1", "device": "x"}), "'platform' is missing"),
    ],
)
def test_not_a_capture_is_a_usage_error(tmp_path: Path, content: str | None, message: str) -> None:
    if content is not None:
        (tmp_path / "x").mkdir()
        (tmp_path / "x" / "manifest.json").write_text(content)
    with pytest.raises(UsageError, match=message) as info:
        ReplayFolder(tmp_path)
    assert info.value.hint and [f.command for f in info.value.fixes] == [("capture",), ("docs",)]
    assert "`fabricd capture --out DIR`" in render_error(info.value)
    with pytest.raises(UsageError, match="not a directory"):
        ReplayFolder(tmp_path / "missing")


def test_capture_to_golden_script(tmp_path: Path) -> None:
    """scripts/capture_to_golden.py writes <role folder>/<role>--<name>.txt with the provenance line, and the
    parser-role registry links it by that name."""
    import importlib.util

    from fabricd.nos.roles import all_roles, captures_of, is_real_source, source_line

    cap = tmp_path / "cap"
    write_device(cap, _manifest(), {"pfc.txt": '{"TABLE_x": {}}\n', "running-config.txt": "hostname x\n"})
    spec = importlib.util.spec_from_file_location(
        "capture_to_golden", Path(__file__).resolve().parents[2] / "scripts" / "capture_to_golden.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golden = tmp_path / "golden"
    assert (
        module.main(
            [
                str(cap),
                "leaf3-nxos",
                "pfc",
                "--name",
                "n9k-10.3",
                "--source",
                "a Nexus 93180YC-FX, NX-OS 10.3(4a)",
                "--golden",
                str(golden),
            ]
        )
        == 0
    )
    written = golden / "readers/switch/cisco_nxos/pfc--n9k-10.3.txt"
    first, _, rest = written.read_text().partition("\n")
    assert first.startswith("# source: a Nexus 93180YC-FX") and "show interface priority-flow-control" in first
    assert rest == '{"TABLE_x": {}}\n' and is_real_source(source_line(written))
    role = next(r for r in all_roles() if r.id == "cisco_nxos/pfc")
    assert captures_of(role, golden) == [written]
    assert (
        module.main([str(cap), "leaf3-nxos", "errors", "--name", "x", "--source", "y", "--golden", str(golden)]) == 2
    )  # failed when captured: nothing to copy


def test_capture_to_golden_writes_the_interface_beside_a_per_port_capture(tmp_path: Path) -> None:
    """A per-interface output's port goes in <role>--<name>.facts.json beside it, where the golden tests read it
    (tests/golden/capture_links.py)."""
    import importlib.util

    manifest = DeviceManifest(
        "leaf1-nvue",
        "cumulus_nvue",
        "5.16.0",
        "2026-11-25T18:00:00+00:00",
        "0.1.0",
        (CommandRecord("qos", "nv show interface swp1 counters qos -o json", "swp1", "qos-swp1.txt", "ok", None, 3),),
    )
    cap = tmp_path / "cap"
    write_device(cap, manifest, {"qos-swp1.txt": "{}\n"})
    spec = importlib.util.spec_from_file_location(
        "capture_to_golden", Path(__file__).resolve().parents[2] / "scripts" / "capture_to_golden.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golden = tmp_path / "golden"
    assert (
        module.main(
            [
                str(cap),
                "leaf1-nvue",
                "qos",
                "--interface",
                "swp1",
                "--name",
                "sn4700",
                "--source",
                "an SN4700, Cumulus 5.16",
                "--golden",
                str(golden),
            ]
        )
        == 0
    )
    folder = golden / "readers/switch/cumulus_nvue"
    assert (folder / "qos--sn4700.txt").read_text().endswith("{}\n")
    assert json.loads((folder / "qos--sn4700.facts.json").read_text()) == {"interface": "swp1"}
