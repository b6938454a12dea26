"""Reading the watchdog's files fast: where a watched host's files are (:class:`HostTree`), a file read on every
poll (:class:`PolledFile`), the kept-open directory of a replay root (:class:`KeptDir`), and the lookup of a few
``ethtool -S`` names in a statistics text (:class:`StatNames`, :func:`_value`).

The file machinery under the host source's parts (:mod:`fabricd.watchdog.discovery` lists ports through it,
:mod:`fabricd.watchdog.reading` reads a port, :mod:`fabricd.watchdog.changes` stamps files and checks the kept
directories).
"""

from __future__ import annotations

import contextlib
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence

from fabricd.readers.common import read_bytes, read_fd

RawStats = Callable[[str], Mapping[str, int] | None]
"""A live ``ethtool -S`` provider: interface -> {name: value}, or None when the interface is gone."""

Stamp = tuple[int, int, int, int]
"""A file's ``(st_ino, st_mtime_ns, st_ctime_ns, st_size)``: a rename over it gives a new inode, a rewrite new
times."""

stamp_of: Callable[[os.stat_result], Stamp] = operator.attrgetter("st_ino", "st_mtime_ns", "st_ctime_ns", "st_size")


_SEPARATORS = frozenset(b" \t\n")


def _value(data: bytes, name: bytes) -> int | None:
    """The integer after ``name:`` on a line of ``ethtool -S`` text, or None. ``name`` must start the line's
    text (after indentation), so ``rx_prio3_pause`` never matches ``rx_prio3_pause_duration`` or ``xrx_...``."""
    return StatNames((name,)).values(data)[0]


def _locate(raw: bytes, needle: bytes, hint: int) -> int:
    """Where the line of ``needle`` (``name:``) starts its text in ``raw``, or -1: first near ``hint`` (within
    512 bytes), else the first occurrence that follows indentation or a newline."""
    seps = _SEPARATORS
    if hint > 0:
        k = raw.find(needle, max(0, hint - 512), hint + 512 + len(needle))
        if k > 0 and raw[k - 1] in seps:
            return k
    i = raw.find(needle)
    while i > 0 and raw[i - 1] not in seps:
        i = raw.find(needle, i + 1)
    return i


class StatNames:
    """A fixed list of ``ethtool -S`` names to look up on every read, and where each was last found.

    This is the watchdog's hot path: no full parse. Each name is first tried at its *hint* (lines move by a few
    bytes at most when values grow) with a compiled pattern of its whole line (``name: digits``), one C call that
    both checks the name and finds the value; only when that misses is the text searched (:func:`_locate`) and the
    line's value parsed with ``int``.
    """

    __slots__ = ("hints", "keys", "needles", "patterns")

    def __init__(self, names: Sequence[bytes]) -> None:
        self.needles = tuple(n + b":" for n in names)
        self.keys = tuple(n.decode() for n in names)
        self.patterns = tuple(re.compile(re.escape(n) + rb"[ \t]*(\d+)[ \t]*\n") for n in self.needles)
        self.hints = [-1] * len(names)

    def __len__(self) -> int:
        return len(self.needles)

    def values(self, raw: bytes | Mapping[str, int]) -> list[int | None]:
        """The values in ``raw`` (text, or a live {name: value} mapping), in order; None: not there, or not an
        integer."""
        if not isinstance(raw, bytes):
            return [raw.get(k) for k in self.keys]
        out: list[int | None] = []
        hints = self.hints
        seps = _SEPARATORS
        for k, pattern in enumerate(self.patterns):
            i = hints[k]
            if i > 0 and raw[i - 1] in seps:
                m = pattern.match(raw, i)
                if m is not None:
                    out.append(int(m[1]))
                    continue
            needle = self.needles[k]
            i = _locate(raw, needle, i)
            if i < 0:
                out.append(None)
                continue
            hints[k] = i
            j = i + len(needle)
            e = raw.find(b"\n", j)
            try:
                out.append(int(raw[j:e] if e >= 0 else raw[j:]))
            except ValueError:
                out.append(None)
        return out

    def last(self) -> int:
        """The largest hint (-1 when none is known)."""
        return max(self.hints, default=-1)


class KeptDir:
    """A kept-open directory of a replay root: files in it are ``stat``-ed and opened relative to it (one path
    component to resolve instead of the whole path). :meth:`check` (once per regular poll) reopens it when its
    path names another directory (a root rebuilt under the same name); a file that cannot be reached through it is
    looked up by its whole path."""

    __slots__ = ("fd", "ident", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None

    def check(self) -> int | None:
        """The descriptor, valid for the directory the path names now; None when there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            self.close()
            return None
        ident = (st.st_dev, st.st_ino)
        if self.fd is None or ident != self.ident:
            self.close()
            try:
                self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return None
            self.ident = ident
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        self.fd = self.ident = None


class PolledFile:
    """One file read on every poll.

    Live sysfs (``replay=False``): a kept-open descriptor read with ``pread`` at offset 0 (one system call instead of
    open/read/close and a path walk); sysfs attributes regenerate their text on every read at offset 0.

    Replay root (``replay=True``): a writer replaces files by rename, or rewrites them in place. Each read first
    takes the file's :data:`Stamp` (``stat``, or the one the caller just took); the same stamp as at the last read
    means the file has not changed: :attr:`changed` is False and the previous bytes are returned (they are the
    file's content). Otherwise the file is read with open/pread/close. The stamp is taken before the read, so a
    file replaced between the two is read again at the next call, never missed (a read on a watch's word takes
    the stamp of the descriptor it reads, for a later ``stat`` to compare with). No descriptor is kept open on a
    replay root: one kept on a file that the writer then replaces holds the old inode alive, and the reader's
    ``close`` would pay for freeing it (~2 µs per replaced file on tmpfs, measured), a cost that belongs to the
    writer. A same-size in-place rewrite within one kernel clock tick of the previous write (a few ms) is seen at
    the next write; writers should rename.

    ``limit`` reads only the first ``limit`` bytes, cut after their last newline (whole lines only): :attr:`partial`
    then says the file may hold more, and a caller that does not find a name in it must read it all
    (``limit=None``).

    :attr:`renewed` says whether the last call read bytes other than the previous read's (False when it returned
    the previous bytes unread, or read the same ones again): a caller that reads without a ``stat`` learns from it
    whether the file still changes.
    """

    __slots__ = ("changed", "data", "dir", "fd", "limit", "partial", "path", "rel", "renewed", "replay", "stamp")

    def __init__(self, path: str, *, replay: bool, base: KeptDir | None = None) -> None:
        self.path = path
        self.dir = base
        self.rel = os.path.relpath(path, base.path) if base is not None else path
        self.fd: int | None = None
        self.replay = replay
        self.stamp: Stamp | None = None
        self.data: bytes | None = None
        self.limit: int | None = None
        self.changed = True
        self.renewed = True
        self.partial = False

    def read(self, limit: int | None = None, stamp: Stamp | None = None, *, known: bool | None = None) -> bytes | None:
        """The file's bytes (the first ``limit`` whole lines' worth), or None when it cannot be read. ``stamp``: the
        caller just took it. ``known``: an inotify watch on the file says it changed (True: read it, no ``stat``)
        or did not (False: the previous bytes, when there are)."""
        if not self.replay:
            return self._read_kept()
        data = self.data
        if known is False and data is not None and (self.limit is None or (limit is not None and limit <= self.limit)):
            self.changed = self.renewed = False
            return data
        dfd = self.dir.fd if self.dir is not None else None
        if known:
            stamp = None
        elif stamp is None:
            try:
                stamp = stamp_of(os.stat(self.rel, dir_fd=dfd) if dfd is not None else os.stat(self.path))
            except OSError:
                if dfd is None:
                    self.stamp = self.data = None
                    return None
                dfd = None  # the kept directory may be stale: the whole path decides
                try:
                    stamp = stamp_of(os.stat(self.path))
                except OSError:
                    self.stamp = self.data = None
                    return None
        if (
            stamp is not None
            and stamp == self.stamp
            and data is not None
            and (self.limit is None or (limit is not None and limit <= self.limit))
        ):
            self.changed = self.renewed = False
            return data
        fd = self._open(dfd)
        if fd is None:
            self.stamp = self.data = None
            return None
        try:
            if stamp is None:  # read on the watch's word: the stamp of the file read, for a later stat to compare
                stamp = stamp_of(os.fstat(fd))
            if limit is not None:
                data = os.pread(fd, limit, 0)
                partial = len(data) >= limit
                if partial:
                    data = data[: data.rfind(b"\n") + 1]
            else:
                data = read_fd(fd)
                partial = False
        except OSError:
            self.stamp = self.data = None
            return None
        finally:
            os.close(fd)
        self.changed = True
        self.renewed = data != self.data
        self.partial = partial
        self.stamp, self.data, self.limit = stamp, data, limit if partial else None
        return data

    def _open(self, dfd: int | None) -> int | None:
        """A descriptor of the file (relative to the kept directory ``dfd``, else by its whole path); None when
        it cannot be opened."""
        try:
            if dfd is not None:
                return os.open(self.rel, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dfd)
        except OSError:
            pass
        try:
            return os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def _read_kept(self) -> bytes | None:
        fd = self.fd
        if fd is None:
            try:
                fd = self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            data = read_fd(fd)
        except OSError:
            self.close()
            return None
        self.changed = True
        return data

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        self.stamp = None
        self.data = None


class HostTree:
    """Where one watched host's files are: ``<root>/ethtool/<if>.{stats,info}`` (a replay root) or, with ``live``,
    a live ``ethtool -S`` provider instead of the statistics files; ``<root>/sys/class/net/<if>/`` for the link.
    On a replay root both directories are kept open (:class:`KeptDir`, checked by :meth:`check_dirs`)."""

    __slots__ = ("eth", "eth_dir", "live", "net", "net_dir", "replay", "root")

    def __init__(self, root: str | os.PathLike[str], *, live: RawStats | None) -> None:
        self.root = os.fspath(root)
        self.live = live
        self.replay = live is None
        self.net = os.path.join(self.root, "sys", "class", "net")
        self.eth = os.path.join(self.root, "ethtool")
        self.eth_dir = KeptDir(self.eth)
        self.net_dir = KeptDir(self.net)

    def stats_path(self, iface: str) -> str:
        return os.path.join(self.eth, iface + ".stats")

    def link_dir(self, iface: str) -> str:
        return os.path.join(self.net, iface)

    def read_stats(self, iface: str) -> bytes | None:
        """A replay statistics file read the plain way (a port without a plan yet), None when it cannot be."""
        try:
            return read_bytes(self.stats_path(iface))
        except OSError:
            return None

    def check_dirs(self) -> None:
        """Reopen a kept directory whose path names another directory now (once per regular poll)."""
        self.eth_dir.check()
        self.net_dir.check()

    def close(self) -> None:
        self.eth_dir.close()
        self.net_dir.close()
