"""Secrets that never reach a log, an error message or a session log.

:class:`Secret` wraps a password: ``str()`` and ``repr()`` print ``********``; only :meth:`Secret.reveal` gives the
value, and only the SSH login calls it. Every revealed secret is remembered by :data:`REDACTOR`, a
:class:`logging.Filter` that masks those values in any record it sees (message, arguments, traceback); drivers
install it as a log record factory, so that every record is masked as it is made, and attach it to the fabricd,
netmiko and paramiko loggers (and their handlers), when they open a session. netmiko masks the password in its own
session logs (``no_log``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

MASK = "********"


class Secret:
    """A string that hides itself. Compare with ``==`` against another Secret only."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        REDACTOR.remember(self._value)
        return self._value

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __bool__(self) -> bool:
        return bool(self._value)


class RedactingFilter(logging.Filter):
    """Masks every remembered secret in log records (message, args and exception text)."""

    def __init__(self) -> None:
        super().__init__("fabricd-redact")
        self._secrets: set[str] = set()
        self._ordered: list[str] = []
        self._lock = threading.Lock()

    def remember(self, value: str) -> None:
        """Mask ``value`` from now on, whatever its length (a short password is still a password; its cost is
        that its letters are masked wherever they appear)."""
        if value:
            with self._lock:
                self._secrets.add(value)
                # longest first, so that a secret containing another is masked whole
                self._ordered = sorted(self._secrets, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for value in self._ordered:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # format the traceback now, redacted: the handler's formatter would format it later, unredacted (it
            # uses exc_text when set)
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


REDACTOR = RedactingFilter()
_installed: set[int] = set()
_install_lock = threading.Lock()


def _redacting_factory(base: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        REDACTOR.filter(record)
        return record

    make.fabricd_redacting = True  # type: ignore[attr-defined]
    return make


def install_redaction(*logger_names: str) -> None:
    """Redact every log record as it is made (a record factory: a logger's filter misses its children's records,
    e.g. ``netmiko.base_connection``, and a handler added later has no filter); also attach :data:`REDACTOR` to the
    named loggers and to every handler of them and of the root logger."""
    with _install_lock:
        factory = logging.getLogRecordFactory()
        if not getattr(factory, "fabricd_redacting", False):
            logging.setLogRecordFactory(_redacting_factory(factory))
        names = logger_names or ("fabricd", "netmiko", "paramiko", "paramiko.transport")
        targets: list[logging.Filterer] = []
        for name in names:
            lg = logging.getLogger(name)
            targets.append(lg)
            targets.extend(lg.handlers)
        targets.extend(logging.getLogger().handlers)
        for target in targets:
            if id(target) not in _installed:
                target.addFilter(REDACTOR)
                _installed.add(id(target))
