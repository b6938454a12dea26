"""How fabricd reaches a switch: address, username, password and the known_hosts files to verify its host key.

Credentials come from the inventory's reference (``credentials.password_env`` or ``credentials.password_file``),
never from the YAML itself. The password is the environment variable named by ``password_env``, or the content of
the file named by ``password_file``, which must not be readable by group or others (0600 or 0400). Paths expand
``~`` and ``$VAR``/``${VAR}`` (:func:`fabricd.settings.expand_path`; ``${FABRICD_STATE_DIR}`` is fabricd's state
directory). fabricd reads nothing else: a lab (fabricd-lab's ``fabricd lab up``) writes the password and known_hosts
files its inventory names, like any other source of credentials.

Host keys are always verified unless the caller opts out explicitly. Known hosts are read from: files given by the
caller, the device's ``credentials.known_hosts``, and ``~/.ssh/known_hosts``; the device's key must match its entry
in *every* one of them that names it. No file is ever written, except the one named for trust on first use
(``accept_new_host_keys``), to which a new host's key is appended.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fabricd import settings
from fabricd.errors import DriverError
from fabricd.model import Switch

from .secrets import Secret


@dataclass(frozen=True)
class Access:
    """Everything needed to open an SSH session to one switch. ``password`` is a :class:`Secret` (never printed)."""

    target: str
    host: str
    port: int
    username: str
    password: Secret
    known_hosts: tuple[Path, ...]
    verify_host_key: bool = True
    password_source: str = ""
    accept_new_host_keys: Path | None = None
    """Trust on first use: a host no known_hosts file knows is accepted and its key appended to this file."""


_SECRET_FILE_MAX = 4096
"""Longest password file read (a password, not a key or a log: a larger file is refused unread)."""


def check_secret_file(path: Path, target: str) -> str:
    """Read a secret file; refuse one that group or others can read (0600 required), that is missing, that is not a
    regular file (a FIFO would block the read forever, a directory fails it), that is larger than a password or
    not UTF-8 text. The refusals never quote the file's content."""
    hint = "create it with `install -m 600 /dev/null FILE` and write the password into it"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise DriverError(
            target, "credentials", f"password file {path} cannot be read: {exc.strerror}", hint=hint
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DriverError(target, "credentials", f"password file {path} is not a regular file", hint=hint)
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise DriverError(
                target,
                "credentials",
                f"password file {path} is readable by group or others (mode {stat.S_IMODE(st.st_mode):04o}, "
                "expected 0600)",
                hint=f"run `chmod 600 {path}`",
            )
        if st.st_size > _SECRET_FILE_MAX:
            raise DriverError(
                target,
                "credentials",
                f"password file {path} holds {st.st_size} bytes, more than a password (at most {_SECRET_FILE_MAX})",
                hint=hint,
            )
        data = os.read(fd, _SECRET_FILE_MAX + 1)
    except OSError as exc:
        raise DriverError(
            target, "credentials", f"password file {path} cannot be read: {exc.strerror}", hint=hint
        ) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8").strip("\r\n")
    except UnicodeDecodeError:
        raise DriverError(
            target, "credentials", f"password file {path} is not UTF-8 text", hint="write the password as UTF-8 text"
        ) from None


def _expanded(path: Path, target: str, field: str) -> Path:
    try:
        return settings.expand_path(path)
    except settings.UnsetVariableError as exc:
        raise DriverError(target, "credentials", f"{field}: {exc}", hint=exc.hint) from None


def resolve_access(
    switch: Switch,
    *,
    environ: Mapping[str, str] | None = None,
    known_hosts: tuple[Path, ...] = (),
    verify_host_key: bool = True,
    accept_new_host_keys: Path | None = None,
) -> Access:
    """Resolve the password and known_hosts for ``switch`` (order in the module docstring)."""
    env = os.environ if environ is None else environ
    creds = switch.credentials
    password: str | None = None
    source = ""
    if creds.password_env and env.get(creds.password_env):
        password, source = env[creds.password_env], f"environment variable {creds.password_env}"
    elif creds.password_file:
        pw_file = _expanded(creds.password_file, switch.name, "credentials.password_file")
        password, source = check_secret_file(pw_file, switch.name), f"file {pw_file}"
    if password is None:
        if creds.password_env:
            what = f"environment variable {creds.password_env} is not set"
            hint = (
                f"export {creds.password_env}=..., or name a 0600 file with credentials.password_file (a lab "
                "started with `fabricd lab up` writes the files its inventory names)"
            )
        else:
            what = "no password source is configured"
            hint = "set credentials.password_env or credentials.password_file for this switch in the inventory"
        raise DriverError(switch.name, "credentials", what, hint=hint)
    files = list(known_hosts)
    if creds.known_hosts is not None:
        device_hosts = _expanded(creds.known_hosts, switch.name, "credentials.known_hosts")
        if device_hosts.exists():
            files.append(device_hosts)
    user_hosts = Path.home() / ".ssh" / "known_hosts"
    if user_hosts.exists():
        files.append(user_hosts)
    return Access(
        target=switch.name,
        host=switch.mgmt.host,
        port=switch.mgmt.port,
        username=creds.username,
        password=Secret(password),
        known_hosts=tuple(files),
        verify_host_key=verify_host_key,
        password_source=source,
        accept_new_host_keys=accept_new_host_keys,
    )
