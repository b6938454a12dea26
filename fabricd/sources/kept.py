"""Kept-open files for sources read on every scrape (the readers' kept-open twins in
:mod:`fabricd.sources.kept_files`, the watchdog's RDMA drop files): the *layout* of a sysfs-like tree (which
directories and files exist) is cached between calls, every *value* is re-read on every call.

Why: a host scrape reads ~800 one-line files. ``open``/``read``/``close`` per file and a directory listing per
counter directory cost more than the read itself; a kept-open descriptor read with ``pread`` at offset 0 is one
system call, and the kernel regenerates a sysfs attribute's text on every read at offset 0 (kernfs ``seq_file``).
On a regular file (a replay root) ``pread`` sees a file rewritten in place.

A layout is only trusted while nothing could have changed it without us noticing:

- each directory the layout was listed from is *stamped* (``st_dev``, ``st_ino``, ``st_mtime_ns``,
  ``st_ctime_ns``) before it is listed and re-stamped on every call (:meth:`KeptFiles.fresh`). Creating, removing
  or renaming an entry changes the directory's mtime and ctime (a replay writer that replaces a file by rename, a
  device directory removed and recreated: new inode). ctime cannot be set back, so ``rsync``/``cp -p`` restoring a
  directory's mtime is still seen;
- a directory whose ctime is within :data:`RACY_NS` of the clock is *racy* (file timestamps come from a coarse
  clock, and some file systems keep whole seconds): a later change could leave the same stamp, so no layout is built
  from it (git's "racily clean" rule). A tree rewritten continuously is therefore always read the slow way;
- any read that fails (a hot-removed sysfs device reads ``ENODEV``) drops the layout;
- sysfs (kernfs) directories do not change their mtime when the kernel adds an attribute, so a layout is also
  rebuilt after :data:`MAX_AGE_NS`, whatever its stamps say.

Files under configfs (``sys/kernel/config``) are never kept open: configfs fills a descriptor's buffer once and
serves it again on later reads. Callers read those with open/read/close on every call.

Descriptors are bounded per process by :class:`FdBudget` (half the soft ``RLIMIT_NOFILE`` by default); past it,
callers fall back to open/read/close. Sources built on this module return the same values as the pure readers
(``fabricd.readers``); the collectors' tests compare both paths on every golden tree.
"""

from __future__ import annotations

import contextlib
import operator
import os
import resource
import stat
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from itertools import repeat
from typing import Generic, TypeVar

Stamp = tuple[int, int, int, int]
"""A directory's identity and change times: ``(st_dev, st_ino, st_mtime_ns, st_ctime_ns)``."""

Clock = Callable[[], int]
"""Wall-clock time in nanoseconds on the file timestamps' base (``time.time_ns``)."""

RACY_NS = 2_000_000_000
"""A directory changed less than this long ago (2 s) is not trusted: timestamps are coarse (a kernel tick, or whole
seconds on some file systems), so a later change could leave the same stamp."""

MAX_AGE_NS = 60_000_000_000
"""A layout is rebuilt after this long (60 s) even when its stamps are unchanged (sysfs directories keep their
mtime when the kernel adds an attribute)."""

K = TypeVar("K", bound=Hashable)
L = TypeVar("L")

_CHUNK = 65536
_FIRST_READ = 256
"""Bytes asked for by the first ``pread`` of a kept file (one sysfs value fits). A file that fills its read size is
read to the end and asked for the next power of two above its length from then on. A small request matters: CPython
allocates the whole requested size for every ``os.pread`` call, and 64 KiB per call made reading ~500 one-line files
2.5x slower (bench/scrape.py)."""
_FLAGS = os.O_RDONLY | os.O_CLOEXEC


def _read_size(length: int) -> int:
    """The read size for a file of ``length`` bytes: the next power of two above it (so that one read ends short)."""
    return max(_FIRST_READ, 1 << length.bit_length())


def stamp_of(path: str) -> Stamp | None:
    """The directory's :data:`Stamp`, or None when ``path`` is missing, unreadable or not a directory."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def on_configfs(path: str) -> bool:
    """True for paths under a ``sys/kernel/config`` directory (configfs caches a descriptor's first read)."""
    return "/sys/kernel/config/" in path or path.startswith("sys/kernel/config/")


class FdBudget:
    """How many descriptors :class:`KeptFiles` may hold in this process. Thread-safe.

    ``limit`` defaults to half the soft ``RLIMIT_NOFILE`` (at most 65536), leaving the rest to sockets and to
    open/read/close fallbacks.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is None:
            soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            limit = 65536 if soft == resource.RLIM_INFINITY else min(65536, soft // 2)
        self.limit = max(0, limit)
        self.used = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Reserve ``n`` descriptors; False (nothing reserved) when that would pass the limit."""
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True

    def give(self, n: int) -> None:
        """Return ``n`` descriptors reserved with :meth:`take`."""
        with self._lock:
            self.used = max(0, self.used - n)


@lru_cache(maxsize=1)
def default_budget() -> FdBudget:
    """The process-wide :class:`FdBudget` (created on first use)."""
    return FdBudget()


class KeptFiles:
    """A fixed list of files read through kept-open descriptors while the directories that listed them are unchanged.

    Build one with :class:`LayoutBuilder`. :meth:`fresh` says whether the layout still holds; :meth:`read` re-reads
    every file (``pread`` at offset 0) in the order they were added. Descriptors are closed by :meth:`close` or when
    the object is collected.
    """

    __slots__ = ("_budget", "_dirs", "_stamps", "born_ns", "fds", "sizes")

    def __init__(
        self, dirs: Sequence[str], stamps: Sequence[Stamp], fds: list[int], budget: FdBudget, born_ns: int
    ) -> None:
        self._dirs = tuple(dirs)
        self._stamps = tuple(stamps)
        self.fds = fds
        self.sizes = [_FIRST_READ] * len(fds)
        self._budget = budget
        self.born_ns = born_ns

    def fresh(self, now_ns: int, max_age_ns: int = MAX_AGE_NS) -> bool:
        """True while every stamped directory is unchanged and the layout is younger than ``max_age_ns``."""
        if not self.fds and not self._dirs:
            return False
        if now_ns - self.born_ns > max_age_ns:
            return False
        for path, old in zip(self._dirs, self._stamps, strict=True):
            try:
                st = os.stat(path)
            except OSError:
                return False
            if (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns) != old:
                return False
        return True

    def read(self) -> list[bytes] | None:
        """Every file's bytes, in the order added; None when any read fails (the layout must then be dropped)."""
        sizes = self.sizes
        try:
            out = list(map(os.pread, self.fds, sizes, repeat(0)))
        except OSError:
            return None
        if not any(map(operator.eq, map(len, out), sizes)):
            return out
        for i, data in enumerate(out):
            if len(data) == sizes[i]:  # the file may be longer than its read size: read the rest, read more next time
                parts = [data]
                offset = len(data)
                try:
                    while chunk := os.pread(self.fds[i], _CHUNK, offset):
                        parts.append(chunk)
                        offset += len(chunk)
                except OSError:
                    return None
                out[i] = b"".join(parts)
                sizes[i] = _read_size(offset)
        return out

    def close(self) -> None:
        """Close every descriptor and return them to the budget."""
        fds, self.fds = self.fds, []
        self.sizes = []
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if fds:
            self._budget.give(len(fds))

    def __del__(self) -> None:
        self.close()


class LayoutBuilder:
    """Lists directories and records the files a layout reads, stamping each directory *before* listing it (so a
    change made while building shows in the next :meth:`KeptFiles.fresh`).

    Use :meth:`listdir` / :meth:`scandir` for directories whose entries decide the layout, :meth:`watch` for a
    directory whose optional children are probed with :meth:`exists`, and :meth:`add` for each file to read.
    :meth:`build` opens them, or gives None when the layout cannot be trusted (a racy or vanished directory, an
    unopenable file, the descriptor budget spent).
    """

    def __init__(self, now_ns: int, *, racy_ns: int = RACY_NS) -> None:
        self.now_ns = now_ns
        self.racy_ns = racy_ns
        self.dirs: list[str] = []
        self.stamps: list[Stamp] = []
        self.files: list[str] = []
        self.ok = True

    def watch(self, path: str) -> bool:
        """Stamp a directory; False (and the build fails) when it is missing or racy."""
        st = stamp_of(path)
        if st is None or st[3] >= self.now_ns - self.racy_ns or st[2] >= self.now_ns - self.racy_ns:
            self.ok = False
            return False
        self.dirs.append(path)
        self.stamps.append(st)
        return True

    def listdir(self, path: str) -> list[str] | None:
        """Sorted entry names of a stamped directory, or None (build failed)."""
        if not self.watch(path):
            return None
        try:
            return sorted(os.listdir(path))
        except OSError:
            self.ok = False
            return None

    def scandir(self, path: str) -> tuple[list[str], list[str]] | None:
        """``(files, directories)`` of a stamped directory, each sorted by name (symlinks followed), or None."""
        if not self.watch(path):
            return None
        files: list[str] = []
        dirs: list[str] = []
        try:
            with os.scandir(path) as it:
                for entry in it:
                    (dirs if entry.is_dir() else files).append(entry.name)
        except OSError:
            self.ok = False
            return None
        return sorted(files), sorted(dirs)

    @staticmethod
    def exists(path: str) -> bool:
        """Whether ``path`` exists (its parent directory must be watched for the answer to stay true)."""
        return os.path.exists(path)

    def add(self, path: str) -> int:
        """Record a file to read; returns its index in :meth:`KeptFiles.read`'s list."""
        self.files.append(path)
        return len(self.files) - 1

    def build(self, budget: FdBudget | None = None) -> KeptFiles | None:
        """Open every recorded file; None when the layout cannot be trusted or the budget is spent."""
        if not self.ok or any(on_configfs(p) for p in self.files):
            return None
        budget = budget or default_budget()
        if not budget.take(len(self.files)):
            return None
        fds: list[int] = []
        try:
            for path in self.files:
                fds.append(os.open(path, _FLAGS))
        except OSError:
            for fd in fds:
                os.close(fd)
            budget.give(len(self.files))
            return None
        kept = KeptFiles(self.dirs, self.stamps, fds, budget, self.now_ns)
        if not kept.fresh(self.now_ns):  # a directory changed while we were listing or opening
            kept.close()
            return None
        return kept

    def stamps_only(self) -> KeptFiles:
        """A :class:`KeptFiles` with no descriptors that stays fresh while the stamped directories are unchanged (to
        remember that a layout could not be built from their current content)."""
        return KeptFiles(self.dirs, self.stamps, [], default_budget(), self.now_ns)


class Layouts(Generic[K, L]):
    """Per-key cache of ``(KeptFiles, layout)`` pairs for one reader, with the clock and budget they share.

    ``get`` returns a fresh entry or None; ``put``/``drop`` replace or close one; ``keep_only`` closes the entries
    of keys that were not seen in this scrape (a removed device).
    """

    def __init__(
        self,
        *,
        clock: Clock = time.time_ns,
        budget: FdBudget | None = None,
        racy_ns: int = RACY_NS,
        max_age_ns: int = MAX_AGE_NS,
        enabled: bool = True,
    ) -> None:
        self.clock = clock
        self.budget = budget
        self.racy_ns = racy_ns
        self.max_age_ns = max_age_ns
        self.enabled = enabled
        self._entries: dict[K, tuple[KeptFiles, L]] = {}

    def builder(self) -> LayoutBuilder:
        return LayoutBuilder(self.clock(), racy_ns=self.racy_ns)

    def get(self, key: K, now_ns: int) -> tuple[KeptFiles, L] | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if not entry[0].fresh(now_ns, self.max_age_ns):
            self.drop(key)
            return None
        return entry

    def put(self, key: K, kept: KeptFiles, layout: L) -> None:
        self.drop(key)
        self._entries[key] = (kept, layout)

    def drop(self, key: K) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            entry[0].close()

    def keep_only(self, keys: set[K]) -> None:
        for key in [k for k in self._entries if k not in keys]:
            self.drop(key)

    def __len__(self) -> int:
        return len(self._entries)
