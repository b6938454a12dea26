"""The sysfs/configfs backend: DCQCN knobs, CNP marking, RoCE ToS and mode, traffic_class, under a root.

Files (MLNX_OFED mlx5 and the kernel ABI):

- ``/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio>`` (0/1), ``roce_np/cnp_dscp``, ``roce_np/cnp_802p_prio``
  and the DCQCN parameter files (``roce_rp/rpg_*``..., ``roce_np/min_time_between_cnps``);
- configfs ``/sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_tos`` and ``default_roce_mode``
  (Documentation/ABI/testing/configfs-rdma_cm). Like mlnx-tools ``cma_roce_tos``, fabricd mounts configfs when it
  is not mounted (only when the root is ``/``) and creates the ``rdma_cm/<dev>`` group (mkdir) when it is missing;
- ``/sys/class/infiniband/<dev>/tc/<p>/traffic_class`` (MLNX_OFED), only where present: the inbox driver has no
  such file and RDMA-CM's default_roce_tos covers RDMA-CM applications there;
- the other families' knobs from their NIC profile (fabricd.intent.nics): bnxt_re configfs
  ``/sys/kernel/config/bnxt_re/<dev>/ports/<p>/cc/*`` (hexadecimal, committed by writing 1 to ``cc/apply``; a knob
  restored from a snapshot is committed again) and irdma configfs ``/sys/kernel/config/irdma/<dev>/*``. Their device
  groups are created with mkdir like the rdma_cm one.

Every path is resolved under ``root`` and refused when it would leave it (``..`` or a symlink pointing out).
Files are opened for writing without O_CREAT: sysfs attributes cannot be created, and a missing file is an error
located at its path.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
from pathlib import Path

from fabricd.errors import HostBackendError
from fabricd.intent.host import COMMIT_CHECK, SYS_IB, SYS_NET, Backend, HostStep
from fabricd.intent.nics import commit_file_for, configfs_group, value_format

from .base import HostBackend, Reading, ReadOnlyBackend

CONFIGFS_MOUNT = "/sys/kernel/config"
_ALLOWED = (f"{SYS_NET}/", f"{SYS_IB}/", f"{CONFIGFS_MOUNT}/")
"""The only trees this backend reads or writes (the intent's paths all lie there)."""


_TCLASS = re.compile(r"^Global tclass=(-?\d+)", re.MULTILINE)


def _parse(text: str, path: str = "") -> int | str | None:
    """A sysfs value: an int when decimal, else the stripped text. MLNX_OFED's ``tc/<p>/traffic_class`` prints
    ``Global tclass=106`` when set and nothing when unset (mlx5 ``traffic_class_show``): int or None."""
    if path.endswith("/traffic_class"):
        m = _TCLASS.search(text)
        value = int(m.group(1)) if m else (int(text) if text.strip().lstrip("-").isdigit() else None)
        return value if value is not None and value >= 0 else None
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    if text[:2].lower() == "0x":  # bnxt_re configfs prints %#x
        try:
            return int(text, 16)
        except ValueError:
            return text
    return text


class SysfsBackend(HostBackend):
    """Read and write sysfs/configfs files under ``root`` (``/`` on a live host, a fake tree in tests)."""

    backend = Backend.SYSFS

    def __init__(self, root: str | os.PathLike[str] = "/", *, mount_configfs: bool | None = None) -> None:
        self.root = Path(root)
        self._real_root = os.path.realpath(self.root)
        self._mount_configfs = (self._real_root == "/") if mount_configfs is None else mount_configfs
        self.created_groups: list[str] = []

    # -- paths ----------------------------------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """The file for host path ``path`` under the root; HostBackendError when it leaves the root."""
        if not path.startswith("/") or ".." in Path(path).parts:
            raise HostBackendError(
                "resolve",
                path,
                "refused: only absolute paths without '..' are allowed",
                hint="fabricd only touches /sys/class/... and /sys/kernel/config/...",
            )
        if path != CONFIGFS_MOUNT and not path.startswith(_ALLOWED):
            # a tampered or foreign snapshot (host restore --snapshot) names the paths it writes back
            raise HostBackendError(
                "resolve",
                path,
                f"refused: not under {', '.join(_ALLOWED)}",
                hint="fabricd only touches the NIC files of /sys/class and rdma_cm's configfs; "
                "is this a fabricd host snapshot?",
            )
        full = self.root / path.lstrip("/")
        real = os.path.realpath(full)
        if real != self._real_root and not real.startswith(self._real_root.rstrip("/") + "/"):
            raise HostBackendError(
                "resolve",
                path,
                f"refused: resolves to {real}, outside the root {self._real_root}",
                hint="a symlink in the tree points out of --root; fix the tree or the root",
            )
        return full

    # -- primitives -----------------------------------------------------------------------------------------

    def read(self, obj: str, path: str) -> Reading:
        try:
            full = self.resolve(path)
        except HostBackendError as exc:
            return Reading(object=obj, path=path, present=False, error=exc.render())
        try:
            text = full.read_text()
        except FileNotFoundError:
            return Reading(object=obj, path=path, present=False)
        except OSError as exc:
            return Reading(object=obj, path=path, present=False, error=f"{exc.strerror} (errno {exc.errno})")
        return Reading(object=obj, path=path, value=_parse(text, path))

    def applicable(self, step: HostStep, current: Reading) -> bool:
        # traffic_class exists only with MLNX_OFED; elsewhere RDMA-CM's default_roce_tos is the knob
        return not (
            step.path.startswith(SYS_IB)
            and step.path.endswith("/traffic_class")
            and not current.present
            and current.error is None
        )

    def satisfied(self, step: HostStep, current: Reading) -> bool:
        if not current.present or step.check == COMMIT_CHECK:
            return False
        if isinstance(step.desired, str) and isinstance(current.value, str):
            return current.value.strip() == step.desired.strip()
        return current.value == step.desired

    def write(self, step: HostStep) -> None:
        if configfs_group(step.path) is not None:
            self._ensure_group(step)
        self._write_file(step.path, step.desired)

    def write_back(self, reading: Reading) -> None:
        if not reading.present:
            return  # a sysfs attribute that did not exist cannot be removed; nothing was written to it
        if reading.path.endswith("/traffic_class") and reading.value is None:
            # unset before: mlx5 traffic_class_store takes -1 as "no global tclass" (tcd->val = -1)
            self._write_file(reading.path, -1)
            return
        commit = commit_file_for(reading.path)
        if commit is None and any(reading.path == c for c in self._commit_files(reading.path)):
            return  # a commit file (bnxt_re cc/apply) holds no value of its own; its knobs re-commit
        self._write_file(reading.path, reading.value)
        if commit is not None:
            self._write_file(commit, 1)

    @staticmethod
    def _commit_files(path: str) -> list[str]:
        head = path.rpartition("/")[0]
        probe = commit_file_for(f"{head}/_")
        return [probe] if probe else []

    # -- helpers --------------------------------------------------------------------------------------------

    def _write_file(self, path: str, value: object) -> None:
        full = self.resolve(path)
        if isinstance(value, int) and not isinstance(value, bool) and value_format(path) == "hex":
            value = hex(value)  # older bnxt_re parses with sscanf("%x"): "26" would be 0x26
        data = f"{value}\n".encode()
        try:
            fd = os.open(full, os.O_WRONLY | os.O_TRUNC)
        except OSError as exc:
            raise HostBackendError(
                "write", path, f"cannot open: {exc.strerror}", errno=exc.errno, hint=_hint(path, exc.errno)
            ) from exc
        try:
            os.write(fd, data)
        except OSError as exc:
            raise HostBackendError(
                "write", path, f"{exc.strerror} writing {value!r}", errno=exc.errno, hint=_hint(path, exc.errno)
            ) from exc
        finally:
            os.close(fd)

    def _ensure_group(self, step: HostStep) -> None:
        """Mount configfs if needed (live root only) and mkdir the device group (``rdma_cm/<dev>`` as
        cma_roce_tos does, ``bnxt_re/<dev>`` and ``irdma/<dev>`` as their READMEs say)."""
        found = configfs_group(step.path)
        assert found is not None
        subsystem, group_path = found
        dev = group_path.rsplit("/", 1)[1]
        config = self.resolve(CONFIGFS_MOUNT)
        if self._mount_configfs and not os.path.ismount(config):
            proc = subprocess.run(
                ["mount", "-t", "configfs", "none", str(config)], capture_output=True, text=True, check=False
            )
            if proc.returncode != 0:
                raise HostBackendError(
                    "mount",
                    CONFIGFS_MOUNT,
                    f"cannot mount configfs: {proc.stderr.strip()}",
                    hint="mount -t configfs none /sys/kernel/config (needs root)",
                )
        root = self.resolve(subsystem)
        name = subsystem.rsplit("/", 1)[1]
        if not root.is_dir():
            hint = (
                "modprobe rdma_cm (kernel >= 4.11 with CONFIG_CONFIGFS_FS)"
                if name == "rdma_cm"
                else f"the {name} driver in use has no configfs (the vendor's out-of-tree driver has it; see "
                "`fabricd docs nics`), or unset the knobs under this NIC's cc:"
            )
            raise HostBackendError(
                "write", subsystem, f"{name} has no configfs directory", errno=errno.ENOENT, hint=hint
            )
        group = self.resolve(group_path)
        if not group.is_dir():
            try:
                group.mkdir()
            except OSError as exc:
                raise HostBackendError(
                    "mkdir",
                    group_path,
                    f"cannot create the group: {exc.strerror}",
                    errno=exc.errno,
                    hint=f"is {dev} an RDMA device? see `fabricd gids`",
                ) from exc
            self.created_groups.append(dev)
        port_dir = Path(os.path.dirname(self.resolve(step.path)))
        if not port_dir.is_dir():
            raise HostBackendError(
                "write",
                step.path,
                f"device {dev} has no such port in {name}",
                errno=errno.ENOENT,
                hint="check rdma_port in the inventory against `fabricd gids`",
            )


def _hint(path: str, code: int | None) -> str:
    if code == errno.ENOENT:
        if "/ecn/" in path:
            return (
                "this driver exposes no ECN/DCQCN sysfs (MLNX_OFED mlx5 does); install MLNX_OFED/DOCA-OFED or "
                "unset the DCQCN knobs"
            )
        if "/bnxt_re/" in path or "/irdma/" in path:
            return (
                "this driver exposes no such configfs knob (Broadcom's/Intel's out-of-tree driver does); "
                "install it or unset the knob under the NIC's cc:"
            )
        return "the NIC or file is missing: check the netdev/RDMA device names in the inventory"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "run as root on a writable /sys"
    if code == errno.EINVAL:
        return "the driver rejected the value: check its range in fabricd.model.DcqcnRp"
    return "see dmesg for the driver's reason"


class SysfsLinks(ReadOnlyBackend):
    """Read-only link facts from ``/sys/class/net/<if>/{mtu,flags,operstate}`` under a replay root.

    Used by ``fabricd audit host --root DIR`` without ``--netns``: the replay tree has no netlink. It answers the
    netlink paths ``mtu``, ``state`` (IFF_UP from ``flags``) and ``operstate``; VLAN ids, addresses and pause
    are not in sysfs (:attr:`unsupported`), so the audit reports those checks as skipped.
    """

    backend = Backend.NETLINK
    read_only = ("a replay root is read-only for links", "use --netns NS or run on the host to change links")
    unsupported = frozenset({"vlan", "address", "pause"})

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._files = SysfsBackend(root)

    def read(self, obj: str, path: str) -> Reading:
        base = f"/sys/class/net/{obj}"
        if path == "mtu":
            r = self._files.read(obj, f"{base}/mtu")
        elif path == "state":
            r = self._files.read(obj, f"{base}/flags")
            if r.present:
                flags = int(str(r.value), 16) if isinstance(r.value, str) else int(str(r.value))
                r = r.model_copy(update={"value": "up" if flags & 0x1 else "down"})
        elif path == "operstate":
            r = self._files.read(obj, f"{base}/operstate")
            if r.present:
                r = r.model_copy(update={"value": str(r.value).upper()})
        else:
            return Reading(object=obj, path=path, present=False, error="not in sysfs")
        return r.model_copy(update={"path": path})

    def applicable(self, step: HostStep, current: Reading) -> bool:
        return step.path not in self.unsupported
