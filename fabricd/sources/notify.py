"""Change notification for a replay root's files: Linux inotify through ctypes (the C library's
``inotify_init1``/``inotify_add_watch``; the standard library has no binding).

On a replay root the watchdog must notice, on every poll, which ``ethtool/<if>.stats`` files and which link files
(``sys/class/net/<if>/{operstate,carrier_changes}``) changed. :class:`Watch` keeps an inotify watch on each
statistics file (set again after a writer replaces it) and on each interface's directory, and says which keys had a
change since the last call: one ``read`` per poll instead of one ``stat`` per port and two per changed port
(bench/watchdog.py, docs/PERFORMANCE.md).

inotify only reports changes made through this kernel's VFS. :func:`notifies` therefore allows it only on local
file systems (tmpfs, ext4, xfs, btrfs, overlay...; ``/proc/self/mountinfo``): a replay root on NFS, CIFS, 9p or FUSE
that another machine writes, and sysfs itself (whose attributes change without events), keep the per-port ``stat``.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import struct
from collections.abc import KeysView
from functools import lru_cache

log = logging.getLogger(__name__)

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

DIR_CHANGES = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
"""Every change to a directory's entries or to the files in it (written in place, replaced by rename, created,
removed), and the directory itself going away."""

FILE_CHANGES = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF
"""Every change to one file (an inode): written in place, and replaced by rename (its link count drops:
``IN_ATTRIB``, then ``IN_DELETE_SELF``) or moved away. After a replacement the watch must be set again on the path
(:meth:`Watch.add`), which then names the new file."""

LOCAL_FILESYSTEMS = frozenset(
    {
        "tmpfs",
        "ramfs",
        "ext2",
        "ext3",
        "ext4",
        "xfs",
        "btrfs",
        "f2fs",
        "jfs",
        "reiserfs",
        "overlay",
        "zfs",
        "bcachefs",
        "nilfs2",
        "vfat",
        "exfat",
    }
)
"""File systems whose every change goes through this kernel (so inotify sees it). Not sysfs/procfs (attributes
change without events), not network or FUSE file systems (another machine or process may write them unseen)."""

_EVENT = struct.Struct("iIII")


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(None, use_errno=True)  # this process: libc is loaded (find_library runs ldconfig)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_init1.restype = ctypes.c_int
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_add_watch.restype = ctypes.c_int
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.inotify_rm_watch.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return lib


def filesystem_of(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The type of the file system that holds ``path`` (``tmpfs``, ``ext4``...), from the mount table: the mount
    with the longest mount point above the path's real location (the last one listed when several share it)."""
    real = os.path.realpath(path)
    best: tuple[int, str] | None = None
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split(" - ", 1)
                if len(fields) != 2:
                    continue
                head, tail = fields[0].split(), fields[1].split()
                if len(head) < 5 or not tail:
                    continue
                point = _unescape(head[4])
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and (best is None or len(point) >= best[0]):
                    best = (len(point), tail[0])
    except OSError:
        return None
    return best[1] if best is not None else None


def _unescape(text: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as ``\\ooo`` octal."""
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 4 <= len(text) and text[i + 1 : i + 4].isdigit():
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def notifies(path: str) -> bool:
    """Whether inotify reports every change under ``path``: a local file system and a working C library."""
    return filesystem_of(path) in LOCAL_FILESYSTEMS and _libc() is not None


class Watch:
    """inotify watches, each standing for a key (an interface name): directories (``mask=DIR_CHANGES``) or single
    files (``mask=FILE_CHANGES``).

    :meth:`changed` (one non-blocking ``read`` while events are queued) gives the keys whose directory or file had
    any change since the last call, or None when the kernel's event queue overflowed (then anything may have
    changed). A watched directory or file that goes away, is replaced or moved loses its watch: its key is reported
    changed and :meth:`watching` turns False until :meth:`add` succeeds again (on a file replaced by rename,
    :meth:`add` watches the new file). Raises ``OSError`` when inotify cannot be set up (no C library, instance
    limit).
    """

    def __init__(self, mask: int = DIR_CHANGES) -> None:
        lib = _libc()
        if lib is None:
            raise OSError("inotify: no C library")
        fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self._lib = lib
        self.mask = mask
        self.fd: int | None = fd
        self._keys: dict[int, str] = {}
        self._wds: dict[str, int] = {}

    def add(self, key: str, path: str) -> bool:
        """Watch ``path`` for ``key`` (what the path names now); False when it cannot be watched (missing, wrong
        kind, watch limit)."""
        if self.fd is None:
            return False
        wd = self._lib.inotify_add_watch(self.fd, os.fsencode(path), self.mask)
        if wd < 0:
            log.debug("inotify_add_watch %s: %s", path, os.strerror(ctypes.get_errno()))
            self._wds.pop(key, None)
            return False
        old = self._keys.get(wd)
        if old is not None and old != key and self._wds.get(old) == wd:
            del self._wds[old]
        self._keys[wd] = key
        self._wds[key] = wd
        return True

    def discard(self, key: str) -> None:
        """Stop watching ``key`` (nothing more is reported for it until :meth:`add`)."""
        wd = self._wds.pop(key, None)
        if wd is not None and self.fd is not None:
            self._lib.inotify_rm_watch(self.fd, wd)  # its IN_IGNORED follows, for a watch no key has: skipped

    def watching(self, key: str) -> bool:
        return key in self._wds

    def keys(self) -> KeysView[str]:
        """The keys being watched (a live view)."""
        return self._wds.keys()

    def changed(self) -> set[str] | None:
        """Keys whose directory or file changed since the last call; None after a queue overflow."""
        if self.fd is None:
            return None
        out: set[str] = set()
        overflow = False
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                return None
            if not buf:
                break
            off = 0
            while off + _EVENT.size <= len(buf):
                wd, mask, _cookie, length = _EVENT.unpack_from(buf, off)
                off += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    overflow = True
                    continue
                key = self._keys.get(wd)
                if key is None:
                    continue
                if mask & IN_IGNORED:
                    del self._keys[wd]
                if self._wds.get(key) != wd:
                    continue  # a file the key's path no longer names (replaced, and watched again since)
                out.add(key)
                if mask & (IN_IGNORED | IN_MOVE_SELF):  # gone, replaced or moved away: this watch no longer counts
                    del self._wds[key]
                    if mask & IN_MOVE_SELF:
                        self._lib.inotify_rm_watch(self.fd, wd)  # its IN_IGNORED follows
        return None if overflow else out

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        self._keys.clear()
        self._wds.clear()

    def __del__(self) -> None:
        self.close()
