"""Prints each render conformance suite's verdict (files, lines, rejected, unverified) at the end of the run."""

from __future__ import annotations

from typing import Any

from conformance_corpus import VERDICTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not VERDICTS:
        return
    terminalreporter.section("render conformance verdicts")
    for key in sorted(VERDICTS):
        terminalreporter.write_line(VERDICTS[key].line())
