"""Files fabricd writes from names in an inventory: always inside the folder the user named, never outside it.

The inventory model already refuses a device name that is not one path component (``model.types.DeviceName``).
This module is the second line: every writer that builds a file name from a name joins it with :func:`inside`,
which resolves the result (``..`` and symbolic links included) and refuses anything outside the folder. A name that
slips past the model (a bug, or a caller that builds a model without validation) is refused here, not written.

Files that may hold configuration or secrets (session logs, captures, the lab log) are created with mode 0600
through :func:`write_private` / :func:`open_private`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from .errors import FabricdError

PRIVATE_MODE = 0o600


class PathEscapeError(FabricdError):
    """A file name built from inventory data would land outside its folder (exit 2)."""


def inside(base: Path, *parts: str) -> Path:
    """``base / parts...`` when it stays inside ``base`` after resolving ``..`` and symbolic links; otherwise
    :class:`PathEscapeError`. Each part must be a relative name without NUL or control characters."""
    for part in parts:
        if not part or "\x00" in part or not part.isprintable() or Path(part).is_absolute():
            raise PathEscapeError(
                f"refusing to write {part!r} under {base}: not a relative file name",
                hint="device names must be one path component (letters, digits and _ . : @ + -); fix the inventory",
            )
    root = base.resolve()
    target = root.joinpath(*parts).resolve()
    if target != root and root not in target.parents:
        raise PathEscapeError(
            f"refusing to write {'/'.join(parts)!r}: it resolves to {target}, outside {root}",
            hint="device names must be one path component (no '/' or '..'); fix the inventory",
        )
    return target


def _open_write(path: Path, flags: int, mode: int) -> int:
    """``os.open`` for writing that never blocks on, nor writes into, anything but a regular file: a FIFO planted
    under the expected name would hang the command (O_NONBLOCK makes the open fail instead), a device or socket is
    refused."""
    fd = os.open(path, flags | os.O_WRONLY | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PathEscapeError(
                f"refusing to write {path}: it is not a regular file",
                hint="remove what sits at that path, or write elsewhere",
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_inside(base: Path, name: str, text: str | bytes, *, private: bool = False) -> Path:
    """Write ``text`` to ``base/name`` (``base`` created if missing) when the target stays inside ``base``: a
    symbolic link placed there under a fixed file name (``fabricd-host.service -> /etc/shadow``) is refused, not
    followed out of the folder. The last component is opened without following links (no swap between the check
    and the write). ``private`` writes mode 0600. Returns the resolved path."""
    base.mkdir(parents=True, exist_ok=True)
    target = inside(base, name)
    fd = _open_write(target, os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, PRIVATE_MODE if private else 0o666)
    with os.fdopen(fd, "wb") as fh:
        if private:
            os.fchmod(fd, PRIVATE_MODE)
        fh.write(text.encode() if isinstance(text, str) else text)
    return target


def private_fd(path: Path, *, append: bool = False) -> int:
    """A write descriptor on ``path`` as a 0600 file (truncated, or appended to); an existing file is narrowed to
    0600 first. The caller owns the descriptor."""
    fd = _open_write(path, os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), PRIVATE_MODE)
    try:
        os.fchmod(fd, PRIVATE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd


def open_private(path: Path, mode: str = "w", *, encoding: str = "utf-8") -> IO[str]:
    """Open ``path`` for text writing (``"w"`` or ``"a"``) as a 0600 file."""
    return os.fdopen(private_fd(path, append=mode == "a"), mode, encoding=encoding)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file."""
    with open_private(path) as fh:
        fh.write(text)
