"""Change detection: which ports of a replay root a poll must visit, and since when each port's files are known
unchanged.

With the detector's ``settled`` (the runner passes it) a poll of a replay root does not read every port: a port
whose statistics file did not change, and whose channels are all settled in the detector, needs nothing. The
:class:`ChangeTracker` finds the others, with inotify where the file system reports every change
(:mod:`fabricd.sources.notify`: a watch on the statistics files, and one on the ``sys/class/net/<if>``
directories for the link files) or else with one ``stat`` per statistics file (the *sweep*, relative to the
kept-open ``ethtool`` directory). A port whose file changes at every read (traffic) is not watched but stat-ed
while it does (:meth:`ChangeTracker.rewatch`). For each port to visit it gives the *floor* of the port's last
observation: the latest time at which its file was known to still hold what it held at its last read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Set
from functools import partial
from itertools import compress
from operator import ne
from typing import NamedTuple

from fabricd.sources.notify import DIR_CHANGES, FILE_CHANGES, Watch, notifies

from .files import HostTree, Stamp, stamp_of

log = logging.getLogger(__name__)

_NEVER = float("-inf")


class Visit(NamedTuple):
    """A port to read: its statistics file's ``stamp`` (just taken by a sweep, else None), whether the file watch
    says the file changed (``known`` True: watch it again, then read it; False: its last bytes still hold; None: not
    watched, stat it) and the floor of its last observation's time (``seen``)."""

    port: str
    stamp: Stamp | None
    known: bool | None
    seen: float


class ChangeTracker:
    """The change detection of one host's replay root (a live host is read in full on every poll).

    ``clock`` (monotonic seconds) stamps a sweep with the time it was taken; without it the poll's time is used.
    """

    def __init__(self, tree: HostTree, *, clock: Callable[[], float] | None) -> None:
        self.tree = tree
        self.clock = clock
        self._swept: list[str] = []
        self._swept_set: frozenset[str] = frozenset()
        self._swept_names: list[str] = []
        self._swept_names_of: list[str] = []
        self._stamps: list[Stamp | None] = []
        self._loud: set[str] = set()
        """Ports that a sweep must visit even when their file is unchanged: some channel is not settled."""
        self._swept_t = _NEVER
        """Monotonic time of the last sweep (or read of the file watch): every port whose file it found unchanged
        (and that is not dirty) was observed then."""
        self._polled: frozenset[str] = frozenset()
        """The ports of the last regular poll that swept or read the file watch (``_swept_t`` is its time)."""
        self._dirty: dict[str, float] = {}
        """Ports whose file watch reported a change not read yet, each with the last time it was known clean."""
        self._links: Watch | None = None
        """inotify on the ``sys/class/net/<if>`` directories (see :meth:`_link_changes`)."""
        self._link_clean: set[str] = set()
        """Ports whose link files are unchanged since their last read (the directory watch says so)."""
        self._files: Watch | None = None
        """inotify on the statistics files (see :meth:`_notified`)."""
        self._busy: set[str] = set()
        """Ports whose last read found new bytes: not watched, stat-ed at every visit (see :meth:`rewatch`)."""
        self._renewed: dict[str, int] = {}
        """Per port, the regular poll (:attr:`_polls`) of its last read that found new bytes."""
        self._polls = 0
        self._cooling: set[str] = set()
        """Busy ports whose last read found their file unchanged: watched again, and stat-ed, at their next visit."""
        self._notify_tried = False

    # -- which ports to visit -------------------------------------------------------------------------------------

    def visits(
        self, t: float, ports: list[str], *, regular: bool, replan: bool, settle: bool, planned: Collection[str]
    ) -> tuple[list[Visit], float | None]:
        """The ports of a poll at ``t`` to visit, and the time this poll found every other port's file unchanged
        (None: every port is visited). ``regular``: a regular poll (else a deadline read of ``ports``);
        ``replan``: it re-plans every port; ``settle``: the caller passes the detector's ``settled`` (without it,
        or on a live host, every port is visited). ``planned``: the ports read before."""
        tree = self.tree
        if settle:
            self._link_changes()
        if tree.replay and regular:
            tree.check_dirs()
            self._polls += 1
        todo: list[Visit] | None = None
        checked: float | None = None
        files = self._files if settle else None
        if files is not None:
            checked = self._now(t)
            clean = self._drain(files, planned)
            files = self._files  # a new watch after an overflow, or none
            if files is not None:
                todo = self._notified(files, ports, every=not regular or replan or not clean)
        elif settle and regular and not replan:
            checked = self._now(t)
            todo = self._sweep(ports)
        if todo is None:  # every port, each with its own stat (or a live read)
            return [Visit(p, None, None, self.floor(p)) for p in ports], None
        return todo, checked

    def swept(self, ports: list[str], checked: float) -> None:
        """A regular poll of ``ports`` that found every unvisited port's file unchanged at ``checked`` is done."""
        self._swept_t, self._polled = checked, self._port_set(ports)

    def floor(self, port: str) -> float:
        """The last regular poll's time if that poll found ``port``'s file unchanged or read it (it held then what
        it holds in the port's last observation), else -inf. A port that was not dirty then was one of those."""
        dirty = self._dirty.get(port)
        if dirty is not None:
            return dirty
        return self._swept_t if port in self._polled else _NEVER

    def _now(self, t: float) -> float:
        return self.clock() if self.clock is not None else t

    def _port_set(self, ports: list[str]) -> frozenset[str]:
        if ports != self._swept:
            self._swept = list(ports)
            self._swept_set = frozenset(ports)
        return self._swept_set

    def _sweep(self, ports: list[str]) -> list[Visit] | None:
        """Stamp every port's statistics file (one ``stat`` each, relative to the kept-open ``ethtool``
        directory) and return the ports to visit: those whose file changed since the last sweep and those with a
        channel that is not settled, with their stamps and their last observation floor (the previous sweep). The
        time of this sweep (taken before the first ``stat``: a file found unchanged held its last values then)
        becomes the floor once the visits are done. None when a file or the directory is missing: the caller
        then visits every port, which reports what vanished."""
        if ports != self._swept_names_of:
            self._swept_names_of = list(ports)
            self._swept_names = [p + ".stats" for p in ports]
            self._stamps = [None] * len(ports)
        dfd = self.tree.eth_dir.fd
        if dfd is None:
            return None
        try:
            stamps: list[Stamp | None] = list(map(stamp_of, map(partial(os.stat, dir_fd=dfd), self._swept_names)))
        except OSError:
            self._stamps = [None] * len(ports)
            return None
        visit = set(compress(range(len(ports)), map(ne, stamps, self._stamps)))
        self._stamps = stamps
        if self._loud:
            index = {p: i for i, p in enumerate(ports)} if len(self._loud) > 4 else None
            for p in self._loud:
                i = index.get(p, -1) if index is not None else (ports.index(p) if p in ports else -1)
                if i >= 0:
                    visit.add(i)
        return [Visit(ports[i], stamps[i], None, self.floor(ports[i])) for i in sorted(visit)]

    def _notified(self, files: Watch, ports: list[str], *, every: bool) -> list[Visit]:
        """The ports to visit, with the file watch: on a regular poll those that are dirty, not watched yet (new,
        or replaced and not watched again) or have a channel that is not settled; with ``every`` (a deadline read,
        a re-plan, after an overflow) all of ``ports``."""
        if every:
            unwatched: Set[str] = {p for p in ports if not files.watching(p)}
        else:
            unwatched = self._port_set(ports) - files.keys()
            if not self._dirty and not unwatched and not self._loud:
                return []
        dirty = self._dirty
        out: list[Visit] = []
        for p in ports:
            if p in dirty or p in unwatched:
                out.append(Visit(p, None, True, self.floor(p)))
            elif every or p in self._loud:
                out.append(Visit(p, None, False, self.floor(p)))
        return out

    def _drain(self, files: Watch, planned: Collection[str]) -> bool:
        """Read the statistics-file watch: each port with an event is *dirty* (read at its next visit) and keeps
        the floor it had before (:meth:`floor`): the last regular poll, where it was still clean. False after an
        event queue overflow: then every port is dirty and watched again at its next read."""
        changed = files.changed()
        dirty = self._dirty
        if changed is None:
            changed = set(planned)
            self._forget_watches(files)
        for p in changed:
            if p not in dirty:
                dirty[p] = self.floor(p)
        return files is self._files

    def _forget_watches(self, files: Watch) -> None:
        """After an overflow nothing the watch said can be trusted: watch every file again at its next read."""
        files.close()
        try:
            self._files = Watch(files.mask)
        except OSError as exc:
            log.info("%s is checked with stat on every poll: %s", self.tree.eth, exc)
            self._files = None

    # -- what a visit learnt ------------------------------------------------------------------------------------

    def visited(self, port: str) -> None:
        """``port`` is being read: whatever its file watch reported is read now."""
        self._dirty.pop(port, None)

    def mark(self, port: str, *, loud: bool) -> None:
        """After a read: ``loud``, some channel of ``port`` is not settled (visit it at every poll)."""
        if loud:
            self._loud.add(port)
        else:
            self._loud.discard(port)

    def rewatch(self, port: str, path: str, known: bool | None) -> bool | None:
        """Before reading a file the watch said changed (``known`` True): watch it again first, so a change after
        the read is reported. None when it cannot be watched (gone?): stat it, as without a watch.

        A *busy* port (its reads at two polls in a row found new bytes: :meth:`read_done`) is not watched again but
        stat-ed, as without a watch: a writer that replaces the file at every poll (a port with traffic) would cost
        a new watch, its events and their parsing on every poll, where one ``stat`` says the same. Unwatched, the
        port is visited at every regular poll (:meth:`_notified`), and watched again at the first visit after a
        read that found its file unchanged; that visit stats it too (it is not dirty: a read on the watch's word
        would take an unchanged file for a changed one).
        """
        files = self._files
        if not known or files is None:
            return known
        if port in self._busy:
            if files.watching(port):
                files.discard(port)  # a watch may still hold the file it replaced (open elsewhere)
            return None
        if not files.add(port, path):
            return None
        if port in self._cooling:
            self._cooling.discard(port)
            return None
        return known

    def read_done(self, port: str, *, renewed: bool) -> None:
        """After the read of a port the watch said changed or does not watch: ``renewed``, it found bytes other
        than the port's previous read (see :meth:`rewatch`)."""
        if renewed:
            last = self._renewed.get(port)
            self._renewed[port] = self._polls
            if last is not None and self._polls - last <= 1:
                self._busy.add(port)
        elif port in self._busy:
            self._busy.discard(port)
            self._cooling.add(port)

    # -- link files ---------------------------------------------------------------------------------------------

    def link_current(self, port: str) -> bool:
        """The port's link files are unchanged since their last read (the directory watch says so)."""
        links = self._links
        return links is not None and port in self._link_clean and links.watching(port)

    def watch_link(self, port: str, path: str) -> None:
        """Before the port's link files are read: watch their directory first, so a change after the read is
        reported at the next call."""
        links = self._links
        if links is not None and (links.watching(port) or links.add(port, path)):
            self._link_clean.add(port)
        else:
            self._link_clean.discard(port)

    def forget_link(self, port: str) -> None:
        """The port has a new plan: read its link files at its next read."""
        self._link_clean.discard(port)

    def _notify_setup(self) -> None:
        """Set up inotify on first use, where the file system reports every change (:func:`notifies`)."""
        self._notify_tried = True
        tree = self.tree
        if notifies(tree.eth):
            self._files = self._watch(tree.eth, FILE_CHANGES)
        if notifies(tree.net):
            self._links = self._watch(tree.net, DIR_CHANGES)
        self._link_clean.clear()

    @staticmethod
    def _watch(path: str, mask: int) -> Watch | None:
        try:
            return Watch(mask)
        except OSError as exc:
            log.info("%s is checked with stat on every poll: %s", path, exc)
            return None

    def _link_changes(self) -> None:
        """Forget the link state of the ports whose link files changed since the last call (the
        ``sys/class/net/<if>`` directory watch)."""
        if not self._notify_tried:
            self._notify_setup()
        links = self._links
        if links is None:
            return
        dirty = links.changed()
        if dirty is None:  # the event queue overflowed: anything may have changed
            self._link_clean.clear()
            return
        self._link_clean.difference_update(dirty)

    def close(self) -> None:
        for watch in (self._links, self._files):
            if watch is not None:
                watch.close()
        self._links = self._files = None
