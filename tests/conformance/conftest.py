"""Prints each render conformance suite's verdict (files, lines, rejected, unverified), the lossless-path verdicts
(files, violations) and the whole-model draw counts at the end of the run."""

from __future__ import annotations

from typing import Any

from conformance_corpus import DRAWS, PATHS, VERDICTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not VERDICTS and not PATHS:
        return
    terminalreporter.section("render conformance verdicts")
    for key in sorted(VERDICTS):
        terminalreporter.write_line(VERDICTS[key].line())
    for platform in sorted(PATHS):
        terminalreporter.write_line(PATHS[platform].line())
    if DRAWS:
        terminalreporter.write_line("whole-model draws: " + " ".join(f"{k}={v}" for k, v in DRAWS.items()))
