"""The apply lock: one applier per host at a time (the reconcile agent, ``fabricd host apply``, a fan-out run).

An advisory ``flock(2)`` on ``/run/lock/fabricd-host-<host>.lock`` (``FABRICD_APPLY_LOCK_DIR`` or the state
directory when /run/lock is not writable). The kernel drops the lock when the holder exits, so a crashed applier
never leaves a stale lock. The holder's pid and purpose are written into the file for the message others see.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from fabricd import settings
from fabricd.errors import FabricdError


class LockBusy(FabricdError):  # noqa: N818 (the name says what happened)
    """Another applier holds the host's apply lock."""

    exit_code = 3


def lock_path(host: str) -> Path:
    env = os.environ.get("FABRICD_APPLY_LOCK_DIR")
    if env:
        return Path(env) / f"fabricd-host-{host}.lock"
    run = Path("/run/lock")
    if run.is_dir() and os.access(run, os.W_OK):
        return run / f"fabricd-host-{host}.lock"
    return settings.state_dir() / "hosts" / host / "apply.lock"


class ApplyLock:
    """``with ApplyLock(host, "agent", wait_s=5):`` holds the lock or raises :class:`LockBusy`."""

    def __init__(self, host: str, purpose: str, *, wait_s: float = 0.0, path: Path | None = None) -> None:
        self.host = host
        self.purpose = purpose
        self.wait_s = wait_s
        self.path = path or lock_path(host)
        self._fd: int | None = None

    def holder(self) -> str:
        try:
            return self.path.read_text().strip() or "unknown"
        except OSError:
            return "unknown"

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # e.g. a lock file another user (root) created in /run/lock
            raise FabricdError(
                f"{self.host}: cannot open the apply lock {self.path}: {exc.strerror}",
                hint="run as the user that owns it, or point FABRICD_APPLY_LOCK_DIR at a directory you can write",
            ) from None
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockBusy(
                        f"{self.host}: another applier holds {self.path} ({self.holder()})",
                        hint="wait for it to finish; the agent retries at its next reconcile",
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} {self.purpose}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ApplyLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
