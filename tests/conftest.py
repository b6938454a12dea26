"""Shared pytest fixtures and options, and the test tiers.

Tiers (markers declared in pyproject.toml):

- ``integration``: real SSH, network namespaces, a Prometheus server, child processes; every test under
  tests/integration/ gets it from its folder (:data:`FOLDER_MARKERS`), explicit marks add the others;
- ``netns``: needs root and network namespaces; ``vm``: the Soft-RoCE VMs (every test under tests/lab/);
- ``slow``: takes more than a few seconds.

``pytest --unit`` (``make unit``) is the unit tier: it deselects every test with one of those markers and guards
the rest. While it runs, opening a socket (``connect``, ``connect_ex``, ``bind``, ``sendto``) or starting a process
(``subprocess``, ``os.fork``/``forkpty``, ``os.system``, ``os.posix_spawn``) raises :class:`UnitTierError` and fails
the test even when the code under test catches the error; the fix is a marker, or a test that needs neither.
A socket pair (asyncio's event loop has one) opens nothing and stays allowed, and so do two library probes
(:data:`PROBES`).
``make test`` runs every tier.

Shared by every test: the fixtures below (one meaning per name: ``lab_inventory`` the lab inventory's path,
``lab_fabric`` it loaded, ``update_goldens``), and tests/metrics_text.py, the one reader of Prometheus exposition
text (``metric_value(text, series)``, ``Metrics(text)``), importable from any test module.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fabricd.model import Fabric

pytest_plugins = ["pytester"]  # tests/unit/test_tiers.py runs the unit tier on a small suite in-process

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

TIER_MARKERS = ("integration", "netns", "vm", "slow")
"""Markers the unit tier leaves out."""
FOLDER_MARKERS = {"integration": "integration", "lab": "vm"}
"""tests/<folder>/ -> the marker every test in it gets."""


PROBES = {
    ("find_library", "ctypes", "util.py"),
    ("_get_fontconfig_fonts", "matplotlib", "font_manager.py"),
}
"""(function, package, file) of library probes the unit tier lets start a process: ``ctypes.util.find_library``
runs ``ldconfig -p`` (asyncssh calls it when first imported), matplotlib runs ``fc-list`` to build its font cache
(once per user). Lookups by a library, not the tested code's doing."""


class UnitTierError(Exception):
    """A test of the unit tier opened a socket or started a process (deliberately not an OSError: code that
    handles network or process errors must not turn it into a passing test)."""


class _Guard:
    """The unit tier's patches of the socket, subprocess and os entry points, and what they caught."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def _deny(self, owner: Any, name: str, what: str, arg_index: int | None) -> Callable[..., Any]:
        original = getattr(owner, name)

        def blocked(*args: Any, **kwargs: Any) -> Any:
            if any(
                (f.name, os.path.basename(os.path.dirname(f.filename)), os.path.basename(f.filename)) in PROBES
                for f in traceback.extract_stack()[:-1]
            ):
                return original(*args, **kwargs)
            arg = args[arg_index] if arg_index is not None and len(args) > arg_index else None
            detail = f" {arg!r}"[:200] if arg is not None else ""
            stack = "".join(traceback.format_list(traceback.extract_stack()[-9:-1]))
            msg = (
                f"{what}{detail}: the unit tier (make unit, pytest --unit) opens no socket and starts no process; "
                f"mark the test integration (or netns / vm / slow), or test without it. From:\n{stack}"
            )
            self.hits.append(msg)
            raise UnitTierError(msg)

        return blocked

    def install(self) -> None:
        targets: list[tuple[Any, str, str, int | None]] = [
            (socket.socket, "connect", "socket connect", 1),
            (socket.socket, "connect_ex", "socket connect", 1),
            (socket.socket, "bind", "socket bind", 1),
            (socket.socket, "sendto", "socket sendto", -1),
            (subprocess.Popen, "_execute_child", "subprocess", 1),
            (os, "fork", "os.fork", None),
            (os, "forkpty", "os.forkpty", None),
            (os, "system", "os.system", 0),
            (os, "posix_spawn", "os.posix_spawn", 0),
            (os, "posix_spawnp", "os.posix_spawnp", 0),
        ]
        for owner, name, what, index in targets:
            if hasattr(owner, name):
                self._saved.append((owner, name, getattr(owner, name)))
                setattr(owner, name, self._deny(owner, name, what, index))

    def uninstall(self) -> None:
        while self._saved:
            owner, name, original = self._saved.pop()
            setattr(owner, name, original)


_GUARD = _Guard()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden expected files for review")
    parser.addoption(
        "--unit",
        action="store_true",
        help="the unit tier: leave out tests marked "
        + ", ".join(TIER_MARKERS)
        + " and fail any other test that opens a socket or starts a process",
    )


_LOCK_DIR: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Host apply locks of this run go to a private directory (``FABRICD_APPLY_LOCK_DIR``; a test may set its own):
    the default ``/run/lock/fabricd-host-<host>.lock`` is shared by every worktree and user on the machine, so
    two runs would contend for ``gpu1``'s lock, and one left by root is not writable for a run as another user."""
    if "FABRICD_APPLY_LOCK_DIR" not in os.environ:
        _LOCK_DIR.append(tempfile.mkdtemp(prefix="fabricd-test-locks-"))
        os.environ["FABRICD_APPLY_LOCK_DIR"] = _LOCK_DIR[0]


def pytest_collection_finish(session: pytest.Session) -> None:
    """The guard goes up once the tests are collected (imports may probe: asyncssh runs ``ldconfig -p`` through
    ctypes when it is first imported), before the first test runs."""
    if session.config.getoption("--unit"):
        _GUARD.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    _GUARD.uninstall()
    while _LOCK_DIR:
        shutil.rmtree(_LOCK_DIR.pop(), ignore_errors=True)


_MODULE_TIER = re.compile(r"^pytestmark\s*=.*\bpytest\.mark\.(?:" + "|".join(TIER_MARKERS) + r")\b", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--unit``, what would be deselected whole is not even imported: the folders of
    :data:`FOLDER_MARKERS` and modules whose ``pytestmark`` line names a tier marker (their imports pull in
    asyncssh, the lab, the VM tooling or pyavd: seconds of collection for nothing)."""
    if not config.getoption("--unit"):
        return None
    if collection_path.parent == TESTS and collection_path.name in FOLDER_MARKERS:
        return True
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        try:
            return True if _MODULE_TIER.search(collection_path.read_text(encoding="utf-8")) else None
        except OSError:
            return None
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        marker = FOLDER_MARKERS.get(folder)
        if marker is not None and item.get_closest_marker(marker) is None:
            item.add_marker(marker)
    if config.getoption("--unit"):
        keep = [i for i in items if not any(i.get_closest_marker(m) for m in TIER_MARKERS)]
        dropped = [i for i in items if any(i.get_closest_marker(m) for m in TIER_MARKERS)]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if _GUARD.hits:
        hits, _GUARD.hits[:] = list(_GUARD.hits), []
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} ({call.when}):\n" + "\n".join(hits)
    return report


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


# -- fixtures: one meaning per name (a test module defines a fixture of the same name only to mean the same thing) --


@pytest.fixture
def lab_inventory() -> Path:
    """The path of the lab inventory (inventory/lab in the checkout); read it, never write it (copy it first)."""
    return REPO / "inventory" / "lab"


@pytest.fixture
def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """``run_main(*args) -> (exit code, stdout, stderr)``: the real entry point (fabricd.cli.main.main) in-process,
    error handling and exit codes as a user sees them (no FABRICD_INVENTORY or FABRICD_ROOT from the environment)."""
    from fabricd.cli.main import main

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["fabricd", *args])
        monkeypatch.setenv("COLUMNS", "250")
        monkeypatch.delenv("FABRICD_INVENTORY", raising=False)
        monkeypatch.delenv("FABRICD_ROOT", raising=False)
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main()
        captured = capsys.readouterr()
        code = exc.value.code
        return (code if isinstance(code, int) else 1), captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def lab_fabric() -> Fabric:
    """The lab inventory loaded (a frozen :class:`fabricd.model.Fabric`, shared by the whole run: tests derive
    changed copies with ``model_dump``/``model_validate``, never change it)."""
    from fabricd.inventory import load_inventory

    return load_inventory(REPO / "inventory" / "lab").fabric


@pytest.fixture
def reserve_port() -> Iterator[Callable[[], int]]:
    """``reserve_port()`` -> a TCP port on 127.0.0.1 that no other process can take until the test ends: a bound, not
    listening, ``SO_REUSEADDR`` socket of this process holds it.

    The one way a test picks a port (never ``bind(("127.0.0.1", 0))`` then close: the port is free for anyone again,
    and on a busy machine another process's ``bind`` to port 0 or an outgoing ``connect`` is handed it before the
    started server binds it, seconds later under load; a lab daemon died on a port in use that way). Two uses:

    - a port for a server the test starts (``fabricd serve``, a lab, Prometheus): the server binds it with
      ``SO_REUSEADDR`` (http.server, asyncio, asyncssh, grpcio and Go's net all set it) and listens; a server the
      test builds in-process binds port 0 and reports its port instead;
    - a port nothing listens on: a connect to it is refused, and stays refused for the whole test."""
    with ExitStack() as held:

        def reserve() -> int:
            s = held.enter_context(socket.socket())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

        yield reserve
