"""The unit tier's guard, end to end: a small suite run in-process (pytester) with this repository's conftest and
``--unit``, as ``make unit`` runs it. Unmarked tests that open a socket or start a process fail (also when they
swallow the error), marked ones are left out, pure ones pass."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

SUITE = """
import os
import socket
import subprocess

import pytest


def test_binds_a_socket():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
    finally:
        s.close()


def test_connects_and_swallows_the_error():
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    except Exception:
        pass


def test_starts_a_process():
    subprocess.run(["true"], check=False)


def test_forks():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


@pytest.mark.integration
def test_marked_may_start_a_process():
    subprocess.run(["true"], check=True)


@pytest.mark.slow
def test_marked_slow():
    pass


def test_pure():
    assert sorted([3, 1, 2]) == [1, 2, 3]


def test_a_socket_pair_opens_nothing():
    a, b = socket.socketpair()
    a.sendall(b"x")
    assert b.recv(1) == b"x"
    a.close()
    b.close()
"""


def test_unit_tier_fails_unmarked_sockets_and_processes(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text())
    markers = "".join(f"  {m}: a tier\n" for m in ("integration", "netns", "vm", "slow"))
    pytester.makeini(f"[pytest]\nmarkers =\n{markers}addopts = --strict-markers\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess("--unit", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=4, deselected=2)
    for name in ("test_binds_a_socket", "test_connects_and_swallows_the_error", "test_starts_a_process", "test_forks"):
        result.stdout.fnmatch_lines([f"FAILED test_suite.py::{name}*"])
    for line in ("socket bind ('127.0.0.1', 0)", "socket connect ('127.0.0.1', 9)", "subprocess ['true']", "os.fork"):
        pattern = line.replace("[", "[[]")  # fnmatch: a literal [
        result.stdout.fnmatch_lines([f"{pattern}: the unit tier (make unit, pytest --unit) opens no socket*"])
