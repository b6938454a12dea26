"""The Soft-RoCE lab VMs for the ``vm`` tests: one pair per test session, booted from the cached image.

Policy (so that a green run never hides a VM failure):

* ``FABRICD_VM_TESTS=0`` skips them on purpose; ``=1`` requires them (missing qemu is then an error);
* by default they run when qemu-system-x86_64 is installed and the image is cached or can be built (root, a
  Debian mirror in this machine's apt sources); otherwise they are skipped *with the reason*;
* when they should run, a failing image build or boot is an error of every vm test, never a skip;
* the terminal summary always ends with one ``VM tests:`` / ``SKIPPED-VM:`` line saying which happened, with the
  image and boot times.

The session's VMs are named ``pytest-<pid>`` (apart from a user's ``lab`` and from other sessions) and are powered
off at the end: under TCG each idle VM still costs CPU on a shared host.
"""

from __future__ import annotations

import os
import platform
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricd.errors import FabricdError
from fabricd.inventory import load_inventory

REPO = Path(__file__).resolve().parents[2]
SOFTROCE = REPO / "inventory" / "examples" / "softroce.yml"
_STATE: dict[str, object] = {"reason": None, "ran": 0, "timings": {}}


def _availability() -> tuple[bool, str]:
    """(run?, why) before trying anything expensive."""
    from fabricd_lab.vm import image as vm_image
    from fabricd_lab.vm import qemu

    mode = os.environ.get("FABRICD_VM_TESTS", "auto")
    if mode == "0":
        return False, "disabled with FABRICD_VM_TESTS=0"
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return False, f"the lab VMs need Linux on x86_64 (this is {platform.system()} {platform.machine()})"
    if shutil.which(qemu.QEMU) is None:
        if mode == "1":
            pytest.fail("FABRICD_VM_TESTS=1 but qemu-system-x86_64 is not installed (scripts/sysdeps.sh vm)")
        return False, "qemu-system-x86_64 is not installed (as root: scripts/sysdeps.sh vm, or make test)"
    try:
        recipe = vm_image.default_recipe()
    except FabricdError as exc:
        return False, f"no Debian mirror for the image: {exc.render()}"
    if vm_image.find_image(recipe) is None:
        if os.geteuid() != 0:
            return False, "the image is not cached and building it needs root (sudo fabricd lab vm build)"
        if shutil.which("debootstrap") is None:
            return False, "the image is not cached and debootstrap is missing (scripts/sysdeps.sh vm)"
    return True, "ok"


@pytest.fixture(scope="session")
def lab_vm() -> Iterator[object]:
    """The running instance (fabricd_lab.vm.instance.Instance) playing rxe-a and rxe-b of softroce.yml."""
    from fabricd_lab.vm import image as vm_image
    from fabricd_lab.vm import instance as vm_instance

    run, why = _availability()
    if not run:
        _STATE["reason"] = why
        pytest.skip(f"SKIPPED-VM: {why}")
    name = f"pytest-{os.getpid()}"
    timings: dict[str, float] = {}
    _STATE["timings"] = timings
    recipe = vm_image.default_recipe()
    t0 = time.monotonic()
    cached = vm_image.find_image(recipe) is not None
    try:
        vm_image.build_image(recipe, progress=lambda m: None)
    except FabricdError as exc:
        pytest.fail(f"the lab image should build here but did not: {exc.render()}")
    timings["image_s" if not cached else "image_cached_s"] = round(time.monotonic() - t0, 1)
    t1 = time.monotonic()
    try:
        inst = vm_instance.up(load_inventory(SOFTROCE), recipe=recipe, name=name, progress=lambda m: None)
    except FabricdError as exc:
        vm_instance.down(name)
        pytest.fail(f"the lab VMs should boot here but did not: {exc.render()}")
    timings["boot_s"] = round(time.monotonic() - t1, 1)
    _STATE["accel"] = inst.accel
    t2 = time.monotonic()
    try:
        yield inst
    finally:
        timings["tests_s"] = round(time.monotonic() - t2, 1)
        vm_instance.down(name)
        shutil.rmtree(inst.run_dir, ignore_errors=True)
        inst.run_dir.with_name(f"{name}.lock").unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _count_vm(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("vm") is not None:
        _STATE["ran"] = int(_STATE["ran"]) + 1  # type: ignore[call-overload]


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _STATE["reason"] is not None:
        terminalreporter.write_line(f"SKIPPED-VM: the Soft-RoCE VM tests did not run: {_STATE['reason']}", yellow=True)
    elif _STATE["timings"]:
        t = ", ".join(f"{k} {v}" for k, v in _STATE["timings"].items())  # type: ignore[attr-defined]
        terminalreporter.write_line(
            f"VM tests: {_STATE['ran']} ran in the Soft-RoCE VMs ({str(_STATE.get('accel', '?')).upper()}; {t})"
        )
