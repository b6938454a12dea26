"""Untrusted files and endpoints: the probes of issue 15's hardening that broke something, each a test of its fix.

An attacker with write access to an inventory (rendered and pushed by CI as root) and a neighbour on the scrape
network: what they could make fabricd read, write or say that it should not.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from fabricd.errors import DriverError, InventoryError
from fabricd.inventory import load_inventory
from fabricd.platforms.access import check_secret_file

SECRET = "root:$6$Zq9-not-for-your-eyes:19000:0:99999:7:::"
INVENTORY = {
    "name": "tiny",
    "switches": [
        {"name": "leaf1", "platform": "sonic", "mgmt": {"host": "192.0.2.1"}, "ports": [{"name": "Ethernet0"}]}
    ],
}


# -- an inventory symlink that leads outside the inventory ---------------------------------------------------------


def test_a_directory_inventory_does_not_read_a_link_to_a_file_outside_it(tmp_path: Path) -> None:
    """A link ``evil.yml -> /etc/shadow`` in an inventory repository made fabricd (as root) parse the file and
    quote its first line in the problem ("unknown top-level key 'root:$6$...'"): a read of any file into the CI
    log. The link is refused unread, at its own path."""
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "fabric.yml").write_text(yaml.safe_dump(INVENTORY))
    shadow = tmp_path / "shadow"
    shadow.write_text(SECRET + "\n")
    (inv / "zz.yml").symlink_to(shadow)
    with pytest.raises(InventoryError) as info:
        load_inventory(inv)
    text = "\n".join(p.render() for p in info.value.problems)
    assert "zz.yml" in text and [p.code for p in info.value.problems] == ["INV007"]
    assert "Zq9" not in text and "root:" not in text


def test_a_link_inside_the_inventory_still_loads(tmp_path: Path) -> None:
    inv = tmp_path / "inv"
    (inv / "shared").mkdir(parents=True)
    (inv / "shared" / "fabric.yaml.src").write_text(yaml.safe_dump(INVENTORY))
    (inv / "fabric.yml").symlink_to(inv / "shared" / "fabric.yaml.src")
    assert load_inventory(inv).fabric.switches[0].name == "leaf1"


# -- password files: every refusal is a located DriverError, never an internal error or a hang --------------------


def _read_in_thread(path: Path) -> BaseException | str | None:
    """check_secret_file(path) with a 10 s bound (a FIFO blocked the read forever)."""
    box: list[BaseException | str] = []

    def run() -> None:
        try:
            box.append(check_secret_file(path, "leaf1"))
        except BaseException as exc:  # the test inspects whatever was raised
            box.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    return box[0] if box else None


@pytest.mark.parametrize("kind", ["not utf-8", "directory", "fifo", "too large"])
def test_a_bad_password_file_is_a_driver_error_not_a_crash_or_a_hang(tmp_path: Path, kind: str) -> None:
    """Before: a non-UTF-8 file or a directory gave ``internal error: UnicodeDecodeError`` / ``IsADirectoryError``
    ("this is a fabricd bug"), and a 0600 FIFO blocked the command forever."""
    path = tmp_path / "pw"
    if kind == "not utf-8":
        path.write_bytes(b"\xff\xfe" + SECRET.encode() + b"\n")
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(SECRET * 200)
    path.chmod(0o700 if kind == "directory" else 0o600)
    outcome = _read_in_thread(path)
    assert isinstance(outcome, DriverError), outcome
    text = outcome.render()
    assert str(path) in text and "credentials" in text
    assert "Zq9" not in text


def test_a_good_password_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_text("s3cret\n")
    path.chmod(0o600)
    assert check_secret_file(path, "leaf1") == "s3cret"
    path.chmod(0o640)
    with pytest.raises(DriverError, match="readable by group or others"):
        check_secret_file(path, "leaf1")


# -- fixed file names in a folder the user named: a symbolic link placed there is refused, not followed -----------


def _victim(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    return out, victim


def test_install_unit_does_not_follow_a_link_in_its_out_folder(tmp_path: Path) -> None:
    """``host install-unit --out DIR`` with ``DIR/fabricd-host.service -> elsewhere`` wrote the unit through the
    link, outside DIR."""
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd.safepath import PathEscapeError

    out, victim = _victim(tmp_path)
    (out / "fabricd-host.service").symlink_to(victim / "owned")
    from fabricd import settings

    res = CliRunner().invoke(
        build_app(), ["host", "install-unit", str(settings.default_inventory()), "--host", "gpu2", "--out", str(out)]
    )
    assert isinstance(res.exception, PathEscapeError) and res.exception.exit_code == 2, res.output
    assert "outside" in res.exception.render()
    assert list(victim.iterdir()) == []


def test_report_does_not_follow_a_link_in_its_out_folder(tmp_path: Path, lab_inventory: Path) -> None:
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd.safepath import PathEscapeError
    from fabricd_lab.report.record import RunRecord, save_record

    out, victim = _victim(tmp_path)
    (out / "storm-timeline.png").symlink_to(victim / "owned")
    run = tmp_path / "run.json"
    save_record(RunRecord(fabric="lab", started_ts=1.0, ended_ts=2.0), run)
    res = CliRunner().invoke(build_app(), ["report", str(lab_inventory), "--run", str(run), "--out", str(out)])
    assert isinstance(res.exception, PathEscapeError) and res.exception.exit_code == 2, res.output
    assert list(victim.iterdir()) == []


def test_host_snapshots_do_not_follow_a_link_in_the_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabricd.safepath import PathEscapeError
    from fabricd.usecases.host import save_snapshots

    state, victim = _victim(tmp_path)
    monkeypatch.setenv("FABRICD_STATE_DIR", str(state))
    (state / "hosts" / "gpu1").mkdir(parents=True)
    (state / "hosts" / "gpu1" / "last.json").symlink_to(victim / "owned")
    with pytest.raises(PathEscapeError):
        save_snapshots("gpu1", [])
    assert list(victim.iterdir()) == []
    (state / "hosts" / "gpu1" / "last.json").unlink()
    path = save_snapshots("gpu1", [])
    assert path.parent == (state / "hosts" / "gpu1").resolve() and (path.parent / "last.json").is_file()


def test_write_inside_refuses_a_dangling_link_and_writes_private_files(tmp_path: Path) -> None:
    from fabricd.safepath import PathEscapeError, write_inside

    out, victim = _victim(tmp_path)
    (out / "a.txt").symlink_to(victim / "not-yet")
    with pytest.raises(PathEscapeError):
        write_inside(out, "a.txt", "x")
    assert list(victim.iterdir()) == []
    path = write_inside(out / "new", "b.txt", "secret\n", private=True)
    assert path.read_text() == "secret\n" and (path.stat().st_mode & 0o777) == 0o600


# -- 'switch:port' endpoints: free text before, refused at load now; report does not crash on a malformed one -----

ENDPOINT_DOC = {
    "name": "tiny",
    "policy": {"vlans": [{"id": 100, "name": "rdma", "subnet": "10.100.0.0/16", "members": ["leaf1:Ethernet0"]}]},
    "switches": [
        {
            "name": "leaf1",
            "platform": "sonic",
            "mgmt": {"host": "192.0.2.1"},
            "ports": [{"name": "Ethernet0"}, {"name": "Ethernet8", "role": "leaf_spine"}],
        },
        {
            "name": "spine1",
            "platform": "sonic",
            "role": "spine",
            "mgmt": {"host": "192.0.2.2"},
            "ports": [{"name": "Ethernet0", "role": "leaf_spine"}],
        },
    ],
    "links": [{"a": "leaf1:Ethernet8", "b": "spine1:Ethernet0"}],
    "hosts": [
        {
            "name": "gpu1",
            "nics": [
                {
                    "netdev": "ens1f0np0",
                    "rdma_device": "mlx5_0",
                    "ip": "10.100.0.11/16",
                    "vlan": 100,
                    "peer": "leaf1:Ethernet0",
                }
            ],
        }
    ],
}


@pytest.mark.parametrize("where", ["members", "peer", "link a", "link b"])
@pytest.mark.parametrize("payload", [" ; touch /tmp/pwned", "\n", "\r", "$(id)", "'", "\u2028"])
def test_endpoint_fields_refuse_shell_and_line_separators_at_load(tmp_path: Path, where: str, payload: str) -> None:
    """``vlans[].members``, ``nics[].peer`` and ``links[].a/b`` were plain strings: only validate's reference check
    stood between them and SONiC's ``sudo config vlan member add`` lines (``render --force`` skips it)."""
    import copy

    doc = copy.deepcopy(ENDPOINT_DOC)
    node: dict = {
        "members": doc["policy"]["vlans"][0],
        "peer": doc["hosts"][0]["nics"][0],  # type: ignore[type-arg]
        "link a": doc["links"][0],
        "link b": doc["links"][0],
    }[where]
    key = {"members": "members", "peer": "peer", "link a": "a", "link b": "b"}[where]
    if key == "members":
        node[key] = [node[key][0] + payload]
    else:
        node[key] = node[key] + payload
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    for p in info.value.problems:
        assert p.location is not None and p.location.line > 0 and "\n" not in p.render()


def test_report_draws_a_fabric_with_a_malformed_link_end(tmp_path: Path, lab_inventory: Path) -> None:
    """``fabricd report`` loads the inventory without validating it: a link end without a colon crashed it
    (``internal error: ValueError: endpoint must be 'device:port'``)."""
    import shutil

    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd_lab.report.record import RunRecord, save_record

    inv = tmp_path / "inv"
    shutil.copytree(lab_inventory, inv)
    links = inv / "links.yml"
    text = links.read_text()
    links.write_text(text.replace("a: leaf1-sonic:Ethernet48", "a: leaf1-sonicEthernet48", 1))
    assert links.read_text() != text
    run = tmp_path / "run.json"
    save_record(RunRecord(fabric="lab", started_ts=1.0, ended_ts=2.0), run)
    res = CliRunner().invoke(build_app(), ["report", str(inv), "--run", str(run), "--out", str(tmp_path / "img")])
    assert res.exit_code == 0 and res.exception is None, res.output
    assert (tmp_path / "img" / "topology.png").is_file()


@pytest.mark.parametrize("netdev", ["--all", "-h", "-"])
def test_a_netdev_cannot_start_with_a_dash(tmp_path: Path, netdev: str) -> None:
    """The kernel's rule takes a leading '-', and the host script then ran ``ip link set dev "--all"``,
    ``ethtool -a "-h"``, ``dcb pfc set dev "--all"``: an option, not a name, to each tool."""
    import copy

    doc = copy.deepcopy(ENDPOINT_DOC)
    doc["hosts"][0]["nics"][0]["netdev"] = netdev
    path = tmp_path / "fabric.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    assert any("starting with '-'" in (p.expected or "") for p in info.value.problems)
    doc["hosts"][0]["nics"][0]["netdev"] = "ens1f0-np0"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert load_inventory(path).fabric.hosts[0].nics[0].netdev == "ens1f0-np0"


# -- secrets in log records: tracebacks, child loggers, handlers added later ---------------------------------------


def test_a_secret_is_masked_in_tracebacks_and_child_logger_records_whatever_the_handler() -> None:
    """The filter sat on the named loggers and on the handlers that existed when a driver opened: a record of
    ``netmiko.base_connection`` (a child: logger filters do not see it) reaching a handler added later went out
    unmasked, and so did every traceback (``log.exception``: formatted by the handler after the filter ran)."""
    import io
    import logging
    import secrets as pysecrets

    from fabricd.platforms.secrets import MASK, Secret, install_redaction

    secret = "pw-" + pysecrets.token_hex(6)
    Secret(secret).reveal()
    install_redaction()
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)  # added after install_redaction: no filter of its own
    child = logging.getLogger("netmiko.base_connection")
    mine = logging.getLogger("fabricd.deploy.pipeline")
    saved = [(lg, lg.level, lg.propagate) for lg in (child, mine)]
    for lg in (child, mine):
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
    try:
        child.debug("write_channel: %s\n", secret)
        try:
            raise RuntimeError(f"device answered: bad password {secret}")
        except RuntimeError:
            mine.exception("leaf1: unexpected error during push")
        mine.warning("stack", stack_info=True)
    finally:
        for lg, level, propagate in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
    text = buf.getvalue()
    assert "Traceback" in text and "bad password" in text and MASK in text
    assert secret not in text


# -- YAML shapes that crashed the loader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "name: x\n? [a, b]\n: c\n",
        "name: x\nswitches:\n  - ? {a: 1}\n    : 2\n    name: s\n",
        "name: x\n? &k [a]\n: 1\n? *k\n: 2\n",
        "? [a]\n",
        "name: !!bool 'x'\n",
        "name: x\ndescription: !!timestamp 2001-13-99x\n",
        "name: !!float 'x'\n",
    ],
)
def test_a_complex_mapping_key_is_a_located_problem_not_an_internal_error(tmp_path: Path, text: str) -> None:
    """``? [a, b]`` (a YAML complex key) gave ``internal error: AttributeError: 'MappingEndEvent' object has no
    attribute 'tag'``: the loader read the value before the key's own events. A bad explicitly tagged scalar
    (``!!bool 'x'``: KeyError, ``!!timestamp``: AttributeError) was an internal error too."""
    path = tmp_path / "fabric.yml"
    path.write_text(text)
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    for p in info.value.problems:
        assert p.location is not None and Path(p.location.file) == path and p.location.line > 0, p.render()


# -- host restore: a snapshot names the files it writes back ---------------------------------------------------------


def test_host_restore_writes_back_only_nic_files_whatever_the_snapshot_says(tmp_path: Path) -> None:
    """``host restore --snapshot FILE`` wrote each reading's value to its path anywhere under the root (``/`` on a
    host): a foreign or tampered snapshot could truncate and rewrite ``/etc/shadow`` or ``authorized_keys``."""
    import json

    from fabricd.hosts.sysfs import SysfsBackend
    from fabricd_lab.fake_host import FakeNic, build_fake_host

    root = build_fake_host(tmp_path / "h", [FakeNic(netdev="rdma0", ip="192.168.211.242")])
    victim = root / "root" / ".ssh" / "authorized_keys"
    victim.parent.mkdir(parents=True)
    victim.write_text("ssh-ed25519 AAAA admin\n")
    readings = [
        {"object": "x", "path": "/root/.ssh/authorized_keys", "value": "ssh-ed25519 EVIL attacker"},
        {"object": "y", "path": "/sys/../root/.ssh/authorized_keys", "value": "evil"},
    ]
    snap = {"backend": "sysfs", "host": "gpu1", "readings": readings}
    from fabricd.hosts.base import Snapshot

    errors = SysfsBackend(root).restore(Snapshot.model_validate(json.loads(json.dumps(snap))))
    assert len(errors) == 2 and all("refused" in e for e in errors), errors
    assert victim.read_text() == "ssh-ed25519 AAAA admin\n"


def _tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yml"
    path.write_text(yaml.safe_dump(INVENTORY))
    return path


# -- a FIFO planted under an expected file name ----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["render", "session log", "install-unit", "report"])
def test_a_fifo_under_an_output_name_is_refused_not_waited_on(tmp_path: Path, where: str) -> None:
    """``render --out DIR`` with a FIFO at ``DIR/hosts/gpu1.sh`` (or a session log, or a unit file) blocked the
    command forever in open(); now the open fails at once and nothing is written."""
    from fabricd.render.render import DeviceRender, RenderedFile, write_render
    from fabricd.safepath import PathEscapeError, open_private, write_inside

    out = tmp_path / "out"
    (out / "hosts").mkdir(parents=True)
    target = {
        "render": out / "hosts" / "gpu1.sh",
        "session log": out / "leaf1.log",
        "install-unit": out / "fabricd-host.service",
        "report": out / "storm-timeline.png",
    }[where]
    os.mkfifo(target)

    def attempt() -> None:
        if where == "render":
            write_render(DeviceRender("gpu1", "host", "linux_host", (RenderedFile("hosts/gpu1.sh", "true\n"),)), out)
        elif where == "session log":
            open_private(target).close()
        elif where == "report":
            from fabricd_lab.report.pictures import all_pictures
            from fabricd_lab.report.record import RunRecord

            all_pictures(
                RunRecord(fabric="tiny", started_ts=1.0, ended_ts=2.0), load_inventory(_tiny(tmp_path)).fabric, out
            )
        else:
            write_inside(out, target.name, "[Unit]\n")

    box = _outcome_unless_blocked(attempt, target, "rb")
    assert box, "the writer blocked on the FIFO"
    assert isinstance(box[0], (PathEscapeError, OSError)), box[0]


def _outcome_unless_blocked(attempt: Callable[[], object], fifo: Path, unblock: str) -> list[BaseException | None]:
    """Run ``attempt`` in a thread for up to 10 s: ``[None]`` when it returned, ``[exception]`` when it raised, ``[]``
    when it blocked on ``fifo`` (then ``fifo`` is opened from this side in mode ``unblock`` so the thread ends)."""
    box: list[BaseException | None] = []

    def run() -> None:
        try:
            attempt()
            box.append(None)
        except BaseException as exc:  # the test inspects whatever was raised
            box.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    if not box:
        with open(fifo, unblock):
            pass
    return box


def test_install_unit_quotes_the_inventory_path_for_systemd(tmp_path: Path, lab_inventory: Path) -> None:
    """The inventory path went into ExecStart bare: a space split it into two arguments, and systemd expanded
    ``%h`` (a specifier) and ``$HOME`` (an environment variable) inside it, so the unit applied another inventory."""
    import shutil

    from typer.testing import CliRunner

    from fabricd.cli.main import build_app

    inv = tmp_path / "my inv %h $HOME"
    shutil.copytree(lab_inventory, inv)
    out = tmp_path / "units"
    res = CliRunner().invoke(build_app(), ["host", "install-unit", str(inv), "--host", "gpu2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    exec_start = next(
        line for line in (out / "fabricd-host.service").read_text().splitlines() if line.startswith("ExecStart=")
    )
    assert f' host apply "{inv.resolve()}'.replace("%", "%%").replace("$", "$$") + '" --host gpu2 --yes' in exec_start


def test_an_inventory_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fabric.yml"
    os.mkfifo(fifo)
    box = _outcome_unless_blocked(lambda: load_inventory(fifo), fifo, "w")
    assert box and isinstance(box[0], InventoryError), box
    assert [p.code for p in box[0].problems] == ["INV004"]


def test_host_restore_from_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    """``host restore --snapshot DIR`` was ``internal error: IsADirectoryError``."""
    from typer.testing import CliRunner

    from fabricd.cli.main import build_app
    from fabricd.errors import UsageError
    from fabricd_lab.fake_host import FakeNic, build_fake_host

    root = build_fake_host(tmp_path / "h", [FakeNic(netdev="ens1f0np0", ip="10.100.0.12")])
    res = CliRunner().invoke(
        build_app(), ["host", "restore", "--host", "gpu2", "--root", str(root), "--snapshot", str(tmp_path)]
    )
    assert isinstance(res.exception, UsageError), res.output
    assert "cannot read the snapshot" in res.exception.render()
