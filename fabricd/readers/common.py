"""Shared pieces of the readers: cheap file reads, counter parsing and the problem list.

Readers never raise for a bad file. They return ``None`` for a value they could not read and record a
:class:`ReadProblem` saying which file and why, so one broken counter never hides the others. A file
that is simply absent (an optional attribute the driver does not expose) is *not* a problem.

Files are re-read on every call: a replay root may be rewritten while fabricd runs (docs/contracts.md, "Replay root").
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Literal

Direction = Literal["rx", "tx"]
"""Traffic direction as seen from the port that reports the counter: ``rx`` received, ``tx`` transmitted."""

DIRECTIONS: tuple[Direction, Direction] = ("rx", "tx")

SATURATED_U32 = 2**32 - 1
"""A 32-bit PMA counter that reads this value has saturated (IBTA PortCounters stop at 0xFFFFFFFF)."""

_NOT_AVAILABLE_PREFIX = "N/A"
"""sysfs prints ``N/A (no PMA)`` for PMA counters of devices without a performance-management agent (i40iw, rxe)."""

_CHUNK = 65536
_FIRST_READ = 4096
"""Bytes asked for by the first read of a file: one page, which holds any sysfs attribute on x86 (CPython allocates
the whole request for every ``os.read``/``os.pread``, so asking for 64 KiB made each one-line read several times
dearer; bench/scrape.py). Longer files are read on in 64 KiB chunks."""


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """One file the reader could not use: its path and what was wrong (e.g. ``not a number: 'abc'``)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class Problems(list[ReadProblem]):
    """The problems found while building one snapshot, in the order they were met."""

    def add(self, path: str, message: str) -> None:
        self.append(ReadProblem(path, message))


def read_bytes(path: str) -> bytes:
    """Read a whole file with ``os.open``/``os.read`` (about 3x cheaper than ``open()`` for sysfs-sized files).

    Raises ``OSError`` like ``open()`` would.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    """Everything from an open descriptor, read from offset 0 with ``pread`` (:data:`_FIRST_READ` bytes first)."""
    data = os.pread(fd, _FIRST_READ, 0)
    if len(data) < _FIRST_READ:
        return data
    parts = [data]
    offset = len(data)
    while chunk := os.pread(fd, _CHUNK, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def read_text(path: str, problems: Problems, *, optional: bool = True) -> str | None:
    """Return the file's text with surrounding whitespace stripped, or ``None``.

    A missing file is silent when ``optional`` (the attribute is not exposed by this driver); any other error,
    or a missing file that discovery had promised (``optional=False``), is recorded in ``problems``.
    """
    try:
        return read_bytes(path).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        if not optional:
            problems.add(path, "vanished after discovery (device removed or tree rewritten)")
        return None
    except OSError as exc:
        problems.add(path, os.strerror(exc.errno) if exc.errno else str(exc))
        return None


def parse_counter(text: str, path: str, problems: Problems) -> int | None:
    """Parse a sysfs counter value: a decimal integer, or ``N/A (...)`` meaning "not available" (``None``).

    Anything else is recorded as a problem and gives ``None``.
    """
    try:
        return int(text)
    except ValueError:
        if text.startswith(_NOT_AVAILABLE_PREFIX):
            return None
        problems.add(path, f"not a number: {text[:40]!r}")
        return None


def read_counter(path: str, problems: Problems, *, optional: bool = False) -> int | None:
    """Read one counter file (see :func:`parse_counter`). Counters listed by discovery are not optional."""
    text = read_text(path, problems, optional=optional)
    if text is None:
        return None
    return parse_counter(text, path, problems)


def list_dir(path: str, problems: Problems, *, optional: bool = True) -> list[str]:
    """Sorted entry names of a directory; ``[]`` when it does not exist (recorded unless ``optional``)."""
    try:
        return sorted(os.listdir(path))
    except FileNotFoundError:
        if not optional:
            problems.add(path, "vanished after discovery (device removed or tree rewritten)")
        return []
    except NotADirectoryError:
        problems.add(path, "expected a directory")
        return []
    except OSError as exc:
        problems.add(path, os.strerror(exc.errno) if exc.errno else str(exc))
        return []


def read_dir_values(
    path: str, problems: Problems, *, optional: bool = True, skip_dirs: bool = False
) -> dict[str, str | None]:
    """Every file of one directory as ``{name: stripped text}`` (sorted by name), opened relative to a directory fd.

    Opening ``name`` under an open directory saves the kernel the whole path walk per file (sysfs counter
    directories hold 20-40 one-line files). A file that fails is recorded in ``problems`` and maps to None; with
    ``skip_dirs`` sub-directories are left out silently. A missing directory gives ``{}`` (recorded unless
    ``optional``).
    """
    try:
        dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not optional:
            problems.add(path, "vanished after discovery (device removed or tree rewritten)")
        return {}
    except OSError as exc:
        problems.add(path, os.strerror(exc.errno) if exc.errno else str(exc))
        return {}
    out: dict[str, str | None] = {}
    try:
        for name in sorted(os.listdir(dfd)):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dfd)
            except OSError as exc:
                if exc.errno == errno.EISDIR and skip_dirs:
                    continue
                problems.add(
                    f"{path}/{name}",
                    "vanished after discovery (device removed or tree rewritten)"
                    if exc.errno == errno.ENOENT
                    else os.strerror(exc.errno or 0),
                )
                out[name] = None
                continue
            try:
                data = read_fd(fd)
            except IsADirectoryError:
                if not skip_dirs:
                    problems.add(f"{path}/{name}", "is a directory, expected a file")
                    out[name] = None
                continue
            except OSError as exc:
                problems.add(f"{path}/{name}", os.strerror(exc.errno or 0))
                out[name] = None
                continue
            finally:
                os.close(fd)
            out[name] = data.decode("utf-8", "replace").strip()
    except OSError as exc:
        problems.add(path, os.strerror(exc.errno or 0))
    finally:
        os.close(dfd)
    return out


def is_missing(exc: OSError) -> bool:
    """True when an ``OSError`` means the path is gone (ENOENT/ENODEV/ENXIO), as for a hot-removed device."""
    return exc.errno in (errno.ENOENT, errno.ENODEV, errno.ENXIO)
