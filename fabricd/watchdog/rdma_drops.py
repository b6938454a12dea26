"""RDMA drops of a watched host: ``hw_counters/out_of_buffer`` per RDMA device and port (a receive WQE was
missing: an RDMA drop), read at the watchdog's slower drop cadence.

The files are found once and read through kept-open descriptors (:mod:`fabricd.sources.kept`) while the
directories they were listed from are unchanged; every value is read again on every call. While a directory is
too recently changed to be trusted, the files are listed and read the plain way.
"""

from __future__ import annotations

import os

from fabricd.readers.common import read_bytes
from fabricd.readers.rdma import class_dir
from fabricd.sources.kept import LayoutBuilder, Layouts

from .types import DropKey, DropSample, Scope

_RDMA_RETRY_NS = 10_000_000_000
"""After a kept layout of the RDMA drop files could not be built, wait this long (10 s) before the next try."""

_KEY = "rdma"


class RdmaDrops:
    """The RDMA drop counters under ``root`` of host ``device``."""

    def __init__(self, root: str, device: str) -> None:
        self.root = root
        self.device = device
        self._layouts: Layouts[str, list[DropKey]] = Layouts()
        self._retry_ns = 0

    def read(self, t: float) -> list[DropSample]:
        """Every ``out_of_buffer`` counter now, stamped ``t``; a file that does not hold an integer is left out."""
        keys, texts = self._read()
        out: list[DropSample] = []
        for key, text in zip(keys, texts, strict=True):
            try:
                value = int(text)
            except ValueError:
                continue
            out.append(DropSample(key, t, value))
        return out

    def _read(self) -> tuple[list[DropKey], list[bytes]]:
        """The files' keys and bytes: through the kept layout, built now when there is none and a try is due, or
        else the plain way."""
        layouts = self._layouts
        entry = layouts.get(_KEY, layouts.clock())
        if entry is not None:
            kept, keys = entry
            texts = kept.read()
            if texts is not None:
                return keys, texts
            layouts.drop(_KEY)
        now_ns = layouts.clock()
        if now_ns >= self._retry_ns:
            builder = layouts.builder()
            keys, paths = self._files(builder)
            built = builder.build() if builder.ok else None
            if built is not None:
                layouts.put(_KEY, built, keys)
                texts = built.read()
                if texts is not None:
                    return keys, texts
            else:  # racy or changing directories: list them the plain way for a while
                self._retry_ns = now_ns + _RDMA_RETRY_NS
            if builder.ok:
                return keys, _read_all(paths)
        keys, paths = self._files(None)
        return keys, _read_all(paths)

    def _files(self, builder: LayoutBuilder | None) -> tuple[list[DropKey], list[str]]:
        """Every ``out_of_buffer`` file of the root's RDMA ports and its drop key, listed through ``builder`` (which
        stamps the directories) or, without one, with plain ``listdir``."""

        def listdir(path: str) -> list[str]:
            if builder is not None:
                return builder.listdir(path) or []
            try:
                return sorted(os.listdir(path))
            except OSError:
                return []

        keys: list[DropKey] = []
        paths: list[str] = []
        base = class_dir(self.root)
        for dev in listdir(base):
            for port in listdir(os.path.join(base, dev, "ports")):
                hw = os.path.join(base, dev, "ports", port, "hw_counters")
                path = os.path.join(hw, "out_of_buffer")
                if (builder is None or builder.watch(hw)) and os.path.exists(path):
                    if builder is not None:
                        builder.add(path)
                    paths.append(path)
                    keys.append(DropKey(Scope.NIC, self.device, f"{dev}/{port}", None, "rdma_out_of_buffer"))
        return keys, paths

    def close(self) -> None:
        self._layouts.drop(_KEY)


def _read_all(paths: list[str]) -> list[bytes]:
    """Each file's bytes read the plain way (empty when it cannot be read)."""
    texts: list[bytes] = []
    for path in paths:
        try:
            texts.append(read_bytes(path))
        except OSError:
            texts.append(b"")
    return texts
