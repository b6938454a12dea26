"""Names and free text from an inventory cannot split a generated line or escape the output folder.

Each name field is refused at load time with ``file:line`` when it carries a line separator (full-match
semantics: ``$`` alone would let a trailing newline through), and device names are one path component. Behind the
model, every writer resolves its target inside its folder (:mod:`fabricd.safepath`), tested with names that slip
past the model (``model_construct``). Also: 0600 private files, redaction of short secrets, the diff summary.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricd.cli.diff import diff_summary
from fabricd.deploy.result import DriftResult
from fabricd.errors import InventoryError
from fabricd.inventory import load_inventory
from fabricd.platforms.secrets import MASK, RedactingFilter
from fabricd.render.render import DeviceRender, RenderedFile, write_render
from fabricd.safepath import PathEscapeError, inside, open_private, write_private

BASE: dict[str, Any] = yaml.safe_load("""
name: tiny
description: a two-switch fabric for the hardening tests
policy:
  vlans:
    - {id: 100, name: rdma, subnet: 10.100.0.0/16, members: [leaf1:Ethernet0, spine1:swp1]}
defaults:
  switch:
    credentials: {username: admin, password_env: FABRICD_PASSWORD}
switches:
  - name: leaf1
    platform: sonic
    mgmt: {host: 192.0.2.1}
    ports:
      - {name: Ethernet0, role: host, description: to gpu1}
      - {name: Ethernet8, role: leaf_spine}
  - name: spine1
    platform: cumulus_nvue
    role: spine
    mgmt: {host: 192.0.2.2}
    ports:
      - {name: swp1, role: leaf_spine}
links:
  - {a: leaf1:Ethernet8, b: spine1:swp1}
hosts:
  - name: gpu1
    nics:
      - {netdev: ens1f0np0, rdma_device: mlx5_0, ip: 10.100.0.11/16, vlan: 100, peer: leaf1:Ethernet0}
""")

# (field label, path into the document, a valid value there)
FIELDS: list[tuple[str, tuple[Any, ...]]] = [
    ("fabric name", ("name",)),
    ("switch name", ("switches", 0, "name")),
    ("host name", ("hosts", 0, "name")),
    ("port name", ("switches", 0, "ports", 1, "name")),
    ("NVUE port name", ("switches", 1, "ports", 0, "name")),
    ("VLAN name", ("policy", "vlans", 0, "name")),
    ("port description", ("switches", 0, "ports", 0, "description")),
    ("fabric description", ("description",)),
    ("NIC netdev", ("hosts", 0, "nics", 0, "netdev")),
    ("RDMA device", ("hosts", 0, "nics", 0, "rdma_device")),
]
SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00", "\t"]


def doc_with(path: tuple[Any, ...], value: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(yaml.safe_dump(BASE))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def get(path: tuple[Any, ...]) -> str:
    node: Any = BASE
    for key in path:
        node = node[key]
    return str(node)


def load(tmp_path: Path, doc: dict[str, Any]) -> Any:
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=False))
    return load_inventory(path)


def test_base_inventory_loads(tmp_path: Path) -> None:
    assert load(tmp_path, BASE).fabric.name == "tiny"


@pytest.mark.slow  # several seconds: make test runs it, make unit leaves it out
@pytest.mark.parametrize("sep", SEPARATORS, ids=repr)
@pytest.mark.parametrize(("label", "path"), FIELDS, ids=[f[0] for f in FIELDS])
def test_line_separator_in_a_name_is_refused_with_file_and_line(
    tmp_path: Path, label: str, path: tuple[Any, ...], sep: str
) -> None:
    for value in (get(path) + sep, sep + get(path), get(path)[:1] + sep + get(path)[1:]):
        with pytest.raises(InventoryError) as info:
            load(tmp_path, doc_with(path, value))
        problems = info.value.problems
        assert problems, label
        for p in problems:
            assert p.location is not None and p.location.line > 0, (label, p.render())
            assert str(p.location.file).endswith("fabric.yml")
        # the rendered message escapes the separator: one problem, one line
        assert all("\n" not in p.render() and "\r" not in p.render() for p in problems)


@pytest.mark.parametrize(
    ("label", "path"),
    [f for f in FIELDS if f[0] in ("fabric name", "switch name", "host name")],
    ids=lambda f: f if isinstance(f, str) else "",
)
@pytest.mark.parametrize("value", ["x/../../../../../../tmp/pwned", "a/b", "..", "a..b", "/etc/passwd", ".hidden"])
def test_device_names_are_one_path_component(tmp_path: Path, label: str, path: tuple[Any, ...], value: str) -> None:
    with pytest.raises(InventoryError) as info:
        load(tmp_path, doc_with(path, value))
    p = info.value.problems[0]
    assert p.location is not None and p.location.line > 0
    assert "path component" in p.render() or "must be" in p.render(), p.render()


def test_port_names_keep_their_slash(tmp_path: Path) -> None:
    """NX-OS and EOS ports are named Ethernet1/1: the slash stays legal where a name never becomes a file."""
    fabric = load(tmp_path, doc_with(("switches", 0, "ports", 1, "name"), "Ethernet1/1")).fabric
    assert fabric.switches[0].ports[1].name == "Ethernet1/1"


@pytest.mark.integration  # runs the fabricd CLI as a process
def test_cli_render_refuses_a_traversing_host_name(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    bad = doc_with(("hosts", 0, "name"), "x/../../victim/pwned")
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump(bad))
    out = tmp_path / "out" / "deep"
    result = subprocess.run(
        [sys.executable, "-m", "fabricd", "render", str(inv), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "inv.yml:8:" in result.stderr and "hosts[" in result.stderr and "one path component" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert list(victim.iterdir()) == []
    assert not out.exists()


def test_writer_refuses_a_name_that_slipped_past_the_model(tmp_path: Path) -> None:
    """Defence in depth: a render whose file name escapes (as a model built without validation could give) is
    refused by the writer, and nothing is written anywhere."""
    out = tmp_path / "a" / "out"
    for rel in ("hosts/x/../../../../pwned.sh", "switches/../../pwned.json", "/tmp/pwned.json"):
        render = DeviceRender("x", "host", "linux_host", (RenderedFile(rel, "echo pwned\n"),))
        with pytest.raises(PathEscapeError):
            write_render(render, out)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == []
    ok = write_render(DeviceRender("gpu1", "host", "linux_host", (RenderedFile("hosts/gpu1.sh", "true\n"),)), out)
    assert ok == [(out / "hosts" / "gpu1.sh").resolve()]


def test_inside_resolves_symlinks(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "link").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError):
        inside(base, "link", "escaped.txt")
    for part in ("a\nb", "a\x00b", ""):
        with pytest.raises(PathEscapeError):
            inside(base, part)
    assert inside(base, "fine.log") == base.resolve() / "fine.log"


def test_private_files_are_0600_even_when_they_existed(tmp_path: Path) -> None:
    f = tmp_path / "session.log"
    f.write_text("old")
    f.chmod(0o644)
    write_private(f, "config with secrets\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600 and f.read_text() == "config with secrets\n"
    g = tmp_path / "lab.log"
    old = os.umask(0)
    try:
        with open_private(g, "a") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(g.stat().st_mode) == 0o600


@pytest.mark.parametrize("secret", ["x", "ab", "abc", "pa55word"])
def test_redaction_masks_every_secret_whatever_its_length(secret: str) -> None:
    redactor = RedactingFilter()
    redactor.remember(secret)
    text = redactor.redact(f"user admin sent {secret}")
    assert text.endswith(MASK)
    assert secret not in text.replace(MASK, "")


def test_redaction_masks_a_longer_secret_whole() -> None:
    redactor = RedactingFilter()
    redactor.remember("pass")
    redactor.remember("password123")
    assert redactor.redact("password123") == MASK


def _result(target: str, *, failed: bool = False, drift: bool = False) -> DriftResult:
    return DriftResult(
        target=target,
        platform="sonic",
        drift=drift,
        changes=["x"] if drift else [],
        diff="-a\n+b\n" if drift else "",
        failed=failed,
        error="cannot reach" if failed else None,
    )


def test_diff_summary_tells_the_truth_about_failures() -> None:
    every_failed = [_result("a", failed=True), _result("b", failed=True)]
    assert diff_summary(every_failed) == "no switch could be read: 2 of 2 failed (see the error column)"
    mixed = [_result("a", failed=True), _result("b")]
    assert diff_summary(mixed).startswith("the 1 switches read match the intent; 1 of 2 could not be read")
    assert diff_summary([_result("a"), _result("b")]) == "all 2 switches read match the intent"
    assert diff_summary([_result("a", drift=True), _result("b", failed=True)]).startswith(
        "1 of 1 switches read drifted"
    )


def test_capture_folders_stay_inside_and_are_private(tmp_path: Path) -> None:
    """``fabricd capture`` writes running configs (scrubbed): 0600 files, and a device name that slipped past the
    model cannot leave the output folder."""
    from fabricd.capture.folder import write_device
    from fabricd.readers.switch.replay import DeviceManifest

    out = tmp_path / "a" / "capture"
    for device in ("../../escaped", "/tmp/escaped", "x/../../../escaped"):
        with pytest.raises(PathEscapeError):
            write_device(out, DeviceManifest(device, "sonic", None, "now", "0", ()), {"show-version.txt": "x\n"})
    assert not (tmp_path / "escaped").exists()
    folder = write_device(out, DeviceManifest("leaf1", "sonic", None, "now", "0", ()), {"show-version.txt": "x\n"})
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes and set(modes.values()) == {0o600}, modes
