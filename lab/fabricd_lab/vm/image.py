"""Build and cache the Soft-RoCE lab root filesystem image from Debian packages.

The recipe was measured on the project's CI-class machine: ``debootstrap --variant=minbase`` of
Debian 12 with the distribution kernel (rdma_rxe, 8021q), rdma-core 44, perftest, infiniband-diags and Debian's
python3-pyverbs 44 (PyPI's pyverbs 59 needs a newer libibverbs than Debian ships), trimmed, with a small
initramfs, packed into an ext4 image by ``mke2fs -d`` (no loop mount needed). fabricd itself and its Python
dependencies are installed under ``/opt/fabricd/lib`` (wheels for CPython 3.11, the guest's Python).

Layout under ``<state_dir>/vm/``::

    cache/debs/            .deb cache (debootstrap --cache-dir); a rebuild from it takes ~100 s instead of ~4 min
    images/<key>/          vmlinuz, initrd.img, root.ext4 (sparse), manifest.json (written last = complete)
    build.lock             flock held while building, so concurrent builds wait instead of colliding

``<key>`` hashes the recipe (suite, mirror, packages, Python requirements, guest init), so a changed recipe builds
a new image and an unchanged one is reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import fabricd
from fabricd import settings
from fabricd.errors import FabricdError, UsageError

from .apt import host_codename, pick_mirror, read_sources

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
"""Receives one human line per build step (the CLI prints it to stderr with the elapsed time)."""

RECIPE_VERSION = 3
"""Bump when the build steps change in a way that must invalidate cached images."""

DEFAULT_SUITE = "bookworm"
"""Debian 12: kernel 6.1 with rdma_rxe and 8021q, rdma-core/pyverbs 44, Python 3.11 (lab.md)."""

GUEST_PACKAGES: tuple[str, ...] = (
    "linux-image-amd64",
    "initramfs-tools",
    "kmod",
    "udev",
    "rdma-core",
    "ibverbs-providers",
    "ibverbs-utils",
    "perftest",
    "infiniband-diags",
    "python3-pyverbs",
    "python3",
    "iproute2",
    "ethtool",
    "procps",
    "iputils-ping",
    "util-linux",
    "qemu-guest-agent",
)
"""Debian packages in the guest. qemu-guest-agent lets the host run commands without a login (guest-exec)."""

GUEST_PYTHON = "3.11"
"""CPython of Debian 12; fabricd's dependency wheels are fetched for it whatever the host Python is."""

_MANYLINUX = (
    "manylinux_2_36_x86_64",
    "manylinux_2_34_x86_64",
    "manylinux_2_31_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_5_x86_64",
    "manylinux1_x86_64",
)
"""Wheel platform tags the guest's glibc 2.36 accepts (PEP 600), newest first."""

# Kernel module trees a lab VM never loads (lab.md: rootfs 900 MB -> 369 MB). virtio, 9p, net, infiniband/sw stay.
_TRIM_MODULE_DIRS = (
    "drivers/gpu",
    "drivers/media",
    "drivers/staging",
    "drivers/iio",
    "drivers/hwmon",
    "drivers/usb",
    "drivers/bluetooth",
    "drivers/isdn",
    "drivers/input",
    "drivers/hid",
    "drivers/video",
    "drivers/mmc",
    "drivers/mtd",
    "drivers/nfc",
    "drivers/thunderbolt",
    "drivers/platform",
    "drivers/power",
    "drivers/leds",
    "drivers/scsi",
    "drivers/ata",
    "drivers/md",
    "drivers/target",
    "drivers/edac",
    "drivers/w1",
    "drivers/misc",
    "drivers/net/wireless",
    "drivers/net/usb",
    "drivers/net/can",
    "drivers/net/wwan",
    "drivers/net/ieee802154",
    "drivers/net/hamradio",
    "drivers/net/fddi",
    "drivers/net/arcnet",
    "drivers/net/plip",
    "drivers/net/ppp",
    "drivers/net/slip",
    "drivers/net/wan",
    "drivers/infiniband/hw",
    "sound",
    "net/wireless",
    "net/mac80211",
    "net/bluetooth",
    "net/nfc",
    "net/ieee802154",
    "net/mac802154",
    "fs/ocfs2",
    "fs/gfs2",
    "fs/xfs",
    "fs/btrfs",
    "fs/nfs",
    "fs/nfsd",
    "fs/ceph",
    "fs/cifs",
    "fs/smb",
    "fs/f2fs",
    "fs/jfs",
    "fs/reiserfs",
    "fs/ubifs",
    "fs/nilfs2",
)
_INITRAMFS_MODULES = ("virtio_pci", "virtio_blk", "ext4", "crc32c_generic")
IMAGE_SIZE = "2048M"
"""Apparent size of root.ext4 (sparse; about 500 MB used)."""

GUEST_DIR = Path(__file__).resolve().parent / "guest"
"""Files baked into the image: ``init`` (PID 1), ``fabricd`` and ``fabricd-traffic`` (CLI wrappers)."""


class VmError(FabricdError):
    """The lab VM could not be built, booted or reached (exit 3: the target failed, the input was fine)."""

    exit_code = 3


@dataclass(frozen=True)
class ImageRecipe:
    """Everything that decides the image's content; its hash is the cache key."""

    suite: str
    mirror: str
    keyring: str | None
    packages: tuple[str, ...] = GUEST_PACKAGES
    python_requirements: tuple[str, ...] = ()
    guest_files_sha: str = ""
    recipe_version: int = RECIPE_VERSION

    def key(self) -> str:
        """12 hex digits of sha256 over the recipe (the image directory name)."""
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


@dataclass(frozen=True)
class Image:
    """A complete, cached lab image."""

    dir: Path
    manifest: dict[str, object] = field(default_factory=dict)

    @property
    def kernel(self) -> Path:
        return self.dir / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.dir / "initrd.img"

    @property
    def rootfs(self) -> Path:
        return self.dir / "root.ext4"


def vm_state_dir(state: Path | None = None) -> Path:
    """``<state_dir>/vm``: image cache, .deb cache and running instances."""
    return (state if state is not None else settings.state_dir()) / "vm"


def guest_files_sha() -> str:
    """Hash of the files baked into the image from ``lab/fabricd_lab/vm/guest/``."""
    h = hashlib.sha256()
    for f in sorted(GUEST_DIR.iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def fabricd_requirements() -> tuple[str, ...]:
    """fabricd's runtime requirements, pinned to the versions installed here so host and guest agree.

    Read from the installed distribution's metadata and, in a source checkout, from pyproject.toml too (an editable
    install's metadata can lag behind a freshly added dependency).
    """
    reqs: list[str] = []
    try:
        reqs += [r for r in importlib.metadata.requires("fabricd") or [] if "extra ==" not in r]
    except importlib.metadata.PackageNotFoundError:
        log.debug("fabricd is not installed as a distribution; using pyproject.toml only")
    pyproject = Path(fabricd.__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        data = tomllib.loads(pyproject.read_text())
        reqs += list(data.get("project", {}).get("dependencies", []))
    pinned: dict[str, str] = {}
    for req in reqs:
        name = re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0]
        key = name.lower().replace("_", "-")
        try:
            pinned[key] = f"{name}=={importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            pinned.setdefault(key, req.split(";", 1)[0].strip())
    return tuple(sorted(pinned.values()))


def default_recipe(*, suite: str | None = None, mirror: str | None = None) -> ImageRecipe:
    """The recipe for this machine: its Debian codename (else bookworm) and the mirror its apt already uses."""
    suite = suite or host_codename() or DEFAULT_SUITE
    if mirror:
        uri, keyring = mirror.rstrip("/"), None
    else:
        src = pick_mirror(read_sources(), suite)
        uri, keyring = src.uri, src.signed_by
    return ImageRecipe(
        suite=suite,
        mirror=uri,
        keyring=keyring,
        python_requirements=fabricd_requirements(),
        guest_files_sha=guest_files_sha(),
    )


def find_image(recipe: ImageRecipe, state: Path | None = None) -> Image | None:
    """The cached image for ``recipe``, or None when it was never built (or its build did not finish)."""
    d = vm_state_dir(state) / "images" / recipe.key()
    manifest = d / "manifest.json"
    if not manifest.is_file():
        return None
    img = Image(d, json.loads(manifest.read_text()))
    if not (img.kernel.is_file() and img.initrd.is_file() and img.rootfs.is_file()):
        return None
    return img


@contextmanager
def _build_lock(vmdir: Path, progress: Progress) -> Iterator[None]:
    vmdir.mkdir(parents=True, exist_ok=True)
    with (vmdir / "build.lock").open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress("another build of the lab image is running; waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _need_tools() -> None:
    missing = [t for t in ("debootstrap", "mke2fs", "chroot") if shutil.which(t) is None]
    if missing:
        raise UsageError(
            f"building the lab image needs {', '.join(missing)} (not found on PATH)",
            hint="as root: apt-get install debootstrap e2fsprogs qemu-system-x86 (`fabricd doctor` lists the rest)",
        )
    if os.geteuid() != 0:
        raise UsageError(
            f"building the lab image needs root (debootstrap and chroot); this process runs as uid {os.geteuid()}",
            hint="run 'sudo fabricd lab vm build' once; 'up' then works from the cached image",
        )


def _run(
    argv: list[str],
    logfile: Path,
    *,
    what: str,
    on_line: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
) -> None:
    """Run a build step, appending its output to ``logfile``; raise VmError with the log tail on failure."""
    log.debug("build step %s: %s", what, argv)
    full_env = {**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive", **(env or {})}
    with logfile.open("a") as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=full_env)
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            if on_line is not None:
                on_line(line.rstrip("\n"))
        rc = proc.wait()
    if rc != 0:
        tail = "\n".join(logfile.read_text(errors="replace").splitlines()[-15:])
        raise VmError(
            f"lab image build failed in step '{what}' (exit {rc}); last lines of {logfile}:\n{tail}",
            hint="fix the cause shown above and rerun 'fabricd lab vm build' (downloaded .debs are kept)",
        )


_PHASES = {
    "Retrieving": "downloading",
    "Validating": "downloading",
    "Extracting": "extracting",
    "Unpacking": "installing",
    "Installing": "installing",
    "Configuring": "configuring",
}


class _DebootstrapProgress:
    """Turn debootstrap's ``I: Retrieving|Validating|Extracting|Unpacking|Configuring X`` lines into phases."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.phase = ""
        self.count = 0
        self.last = 0.0

    def __call__(self, line: str) -> None:
        m = re.match(r"^I: (Retrieving|Validating|Extracting|Unpacking|Configuring|Installing) (.*)$", line)
        if not m:
            if line.startswith(("I: Base system installed", "W: ", "E: ")):
                self.progress(f"debootstrap: {line[3:]}")
            return
        phase = _PHASES[m.group(1)]
        if phase != self.phase:
            if self.phase:
                self.progress(f"debootstrap: {self.phase} done ({self.count} steps)")
            self.phase, self.count, self.last = phase, 0, time.monotonic()
            self.progress(f"debootstrap: {phase} ...")
        self.count += 1
        if time.monotonic() - self.last >= 10:
            self.last = time.monotonic()
            self.progress(f"debootstrap: {phase} ({self.count} steps so far, now {m.group(2)})")


def _guest_python(rootfs: Path) -> str:
    """``major.minor`` of the guest's python3 (from its /usr/bin/python3.X binary name)."""
    versions = sorted(
        p.name[len("python") :]
        for p in (rootfs / "usr" / "bin").glob("python3.*")
        if re.fullmatch(r"python3\.\d+", p.name)
    )
    return versions[-1] if versions else GUEST_PYTHON


def copy_fabricd_tree(dest: Path) -> Path:
    """Copy the running fabricd package, with its shipped data (templates, exporters, lab inventory) under
    ``fabricd/_data``, into ``dest``; precompile it with this Python so a same-minor guest Python skips compiling.

    Returns ``dest/fabricd``.
    """
    pkg = Path(fabricd.__file__).resolve().parent
    target = dest / "fabricd"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(pkg, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"))
    for name in ("templates", "exporters", "inventory/lab"):
        src = settings.data_dir(name)
        if src.is_dir():
            shutil.copytree(src, target / "_data" / name, dirs_exist_ok=True)
    import compileall

    compileall.compile_dir(str(target), quiet=2, workers=1)
    return target


def build_image(
    recipe: ImageRecipe, *, state: Path | None = None, progress: Progress = log.info, force: bool = False
) -> Image:
    """Build the image for ``recipe`` (or return the cached one unless ``force``). Needs root.

    Takes about 4.5 min the first time (lab.md: 220 s of debootstrap downloading 124 MB of .debs), about 100 s
    from the .deb cache. Raises VmError with the failing step's log tail.
    """
    vmdir = vm_state_dir(state)
    if not force and (img := find_image(recipe, state)) is not None:
        progress(f"image {recipe.key()} is cached: {img.dir}")
        return img
    _need_tools()
    with _build_lock(vmdir, progress):
        if not force and (img := find_image(recipe, state)) is not None:  # built while we waited
            progress(f"image {recipe.key()} was built by the other process: {img.dir}")
            return img
        return _build_locked(recipe, vmdir, progress)


def _build_locked(recipe: ImageRecipe, vmdir: Path, progress: Progress) -> Image:
    t0 = time.monotonic()
    key = recipe.key()
    cache = vmdir / "cache" / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    work = vmdir / "build" / key
    rootfs = work / "rootfs"
    logfile = work / "build.log"
    bootstrapped = work / "debootstrap.done"
    if work.exists() and not bootstrapped.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def step_done(name: str, since: float) -> float:
        now = time.monotonic()
        timings[name] = round(now - since, 1)
        return now

    progress(f"building lab image {key}: Debian {recipe.suite} from {recipe.mirror} (log: {logfile})")
    argv = ["debootstrap", "--variant=minbase", f"--cache-dir={cache}", f"--include={','.join(recipe.packages)}"]
    if recipe.keyring:
        argv.append(f"--keyring={recipe.keyring}")
    argv += [recipe.suite, str(rootfs), recipe.mirror]
    if bootstrapped.exists():
        progress(f"debootstrap: reusing the root filesystem of an interrupted build in {rootfs}")
    else:
        _run(argv, logfile, what="debootstrap", on_line=_DebootstrapProgress(progress))
        bootstrapped.touch()
    t = step_done("debootstrap_s", t0)

    pyver = _guest_python(rootfs)
    lib = rootfs / "opt" / "fabricd" / "lib"
    progress(f"pip: fabricd's dependencies for the guest's CPython {pyver} -> /opt/fabricd/lib")
    pip = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-warn-conflicts",
        "--upgrade",
        "--target",
        str(lib),
        "--only-binary=:all:",
        "--python-version",
        pyver,
        "--implementation",
        "cp",
        "--abi",
        f"cp{pyver.replace('.', '')}",
    ]
    for tag in _MANYLINUX:
        pip += ["--platform", tag]
    _run([*pip, *recipe.python_requirements], logfile, what="pip install (guest dependencies)")
    copy_fabricd_tree(lib)
    t = step_done("python_s", t)

    progress("configure: init, fabricd wrapper, initramfs, trim")
    _configure(rootfs, logfile)
    kver = sorted(p.name for p in (rootfs / "lib" / "modules").iterdir())[-1]
    _run(["chroot", str(rootfs), "depmod", kver], logfile, what="depmod")
    _run(["chroot", str(rootfs), "update-initramfs", "-u", "-k", kver], logfile, what="update-initramfs")
    versions = _package_versions(rootfs)
    t = step_done("configure_s", t)

    out = vmdir / "images" / key
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(rootfs / "boot" / f"vmlinuz-{kver}", out / "vmlinuz")
    shutil.copy2(rootfs / "boot" / f"initrd.img-{kver}", out / "initrd.img")
    used = _du(rootfs)
    progress(f"mke2fs -d: packing the root filesystem ({used // 2**20} MiB) into root.ext4")
    _run(
        [
            "mke2fs",
            "-q",
            "-F",
            "-t",
            "ext4",
            "-L",
            "fabricd-lab",
            "-d",
            str(rootfs),
            str(out / "root.ext4"),
            IMAGE_SIZE,
        ],
        logfile,
        what="mke2fs",
    )
    step_done("mke2fs_s", t)
    shutil.copy2(logfile, out / "build.log")
    shutil.rmtree(work)
    timings["total_s"] = round(time.monotonic() - t0, 1)
    manifest: dict[str, object] = {
        "key": key,
        "recipe": asdict(recipe),
        "kernel": kver,
        "guest_python": pyver,
        "packages": versions,
        "rootfs_bytes": used,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "timings": timings,
        "fabricd_version": fabricd.__version__,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    progress(f"image {key} built in {timings['total_s']:.0f}s: {out}")
    for old in prune_images(key, vmdir):
        progress(f"removed the superseded image {old}")
    return Image(out, manifest)


def prune_images(keep: str, vmdir: Path) -> list[str]:
    """Delete cached images other than ``keep`` that no running lab instance boots from (each is ~700 MB)."""
    in_use = set()
    for inst_file in (vmdir / "run").glob("*/instance.json"):
        try:
            data = json.loads(inst_file.read_text())
        except (OSError, ValueError):
            continue
        if not data.get("stopped"):
            in_use.add(str(data.get("image_key")))
    removed = []
    for d in sorted((vmdir / "images").iterdir()) if (vmdir / "images").is_dir() else []:
        if d.is_dir() and d.name != keep and d.name not in in_use:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    return removed


def _configure(rootfs: Path, logfile: Path) -> None:
    """Bake the guest init and fabricd wrapper, a passwordless root, a virtio-only initramfs, and trim."""
    shutil.copy2(GUEST_DIR / "init", rootfs / "sbin" / "fabricd-init")
    (rootfs / "sbin" / "fabricd-init").chmod(0o755)
    for name in ("fabricd", "fabricd-traffic"):
        wrapper = rootfs / "usr" / "local" / "bin" / name
        shutil.copy2(GUEST_DIR / name, wrapper)
        wrapper.chmod(0o755)
    (rootfs / "etc" / "hostname").write_text("fabricd-lab\n")
    _run(["chroot", str(rootfs), "passwd", "-d", "root"], logfile, what="passwd")
    conf = rootfs / "etc" / "initramfs-tools" / "initramfs.conf"
    conf.write_text(re.sub(r"(?m)^MODULES=.*$", "MODULES=list", conf.read_text()))
    (rootfs / "etc" / "initramfs-tools" / "modules").write_text("\n".join(_INITRAMFS_MODULES) + "\n")
    for sub in ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"):
        d = rootfs / sub
        if d.is_dir():
            for child in d.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    for pattern in ("var/cache/apt/*.bin", "var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"):
        for f in rootfs.glob(pattern):
            if f.is_file():
                f.unlink()
    for moddir in (rootfs / "lib" / "modules").iterdir():
        for sub in _TRIM_MODULE_DIRS:
            d = moddir / "kernel" / sub
            if d.is_dir():
                shutil.rmtree(d)


def _package_versions(rootfs: Path) -> dict[str, str]:
    out = subprocess.run(
        ["chroot", str(rootfs), "dpkg-query", "-W", "-f", "${Package} ${Version}\n"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    wanted = {*GUEST_PACKAGES, "python3-pyroute2", "libibverbs1"}
    versions = {}
    for line in out.splitlines():
        name, _, ver = line.partition(" ")
        if name in wanted or name.startswith("linux-image-6"):
            versions[name] = ver
    return versions


def _du(path: Path) -> int:
    """Bytes used by the files under ``path`` (allocated blocks, like ``du``)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                continue
    return total
