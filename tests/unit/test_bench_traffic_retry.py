"""bench/traffic.py retries a perftest pair that does not finish and reports a failure cleanly.

A fake lab instance stands in for the Soft-RoCE VMs (a mock: a guest agent timing out cannot be provoked on
purpose in the real VMs); the retry and reporting logic under test is the bench's own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from fabricd.traffic.remote import CommandResult
from fabricd_lab.vm.qga import AgentError

BENCH = Path(__file__).resolve().parents[2] / "bench" / "traffic.py"


def _bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("traffic_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "gid_index", lambda inst, role: 1)
    monkeypatch.setattr(mod.time, "sleep", lambda s: None)
    return mod


class _Server:
    def __init__(self, hang: bool) -> None:
        self.hang, self.killed = hang, False

    def wait(self, timeout_s: float) -> CommandResult:
        if self.hang:
            raise AgentError("rxe-b: 'ib_write_bw ...' did not finish within 120s (killed)")
        return CommandResult(("ib_write_bw",), 0, "", "", 1.0)

    def kill(self) -> None:
        self.killed = True


class _Inst:
    """Server hangs on the first ``hangs`` attempts; the client always answers."""

    def __init__(self, hangs: int) -> None:
        self.hangs, self.servers, self.ports = hangs, [], []  # type: ignore[var-annotated]

    def endpoint(self, role: str) -> Any:
        return SimpleNamespace(rdma_device="rxe0")

    def runner(self, role: str) -> Any:
        inst = self

        def start(argv: list[str]) -> _Server:
            inst.ports.append(argv[argv.index("-p") + 1])
            srv = _Server(hang=len(inst.servers) < inst.hangs)
            inst.servers.append(srv)
            return srv

        def run(argv: list[str], timeout_s: float) -> CommandResult:
            return CommandResult(tuple(argv), 0, "65536 1000 0.1 0.170 0.000324\n", "", 5.0)

        return SimpleNamespace(start=start, run=run)


def test_a_server_that_does_not_finish_is_killed_and_retried_on_a_fresh_port(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mod = _bench(monkeypatch)
    inst = _Inst(hangs=2)
    out = mod.perftest(inst, "ib_write_bw", ["-s", "65536"], roles=("b", "a"), peer="198.18.100.2", port=18700)
    assert mod.parse_bw(out, 65536) == (0.170, 0.000324)
    assert inst.ports == ["18700", "18710", "18720"]
    assert [s.killed for s in inst.servers] == [True, True, False]
    assert capsys.readouterr().out.count("did not finish") == 2


def test_three_failures_are_reported_not_raised_as_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _bench(monkeypatch)
    with pytest.raises(mod.BenchError) as info:
        mod.perftest(_Inst(hangs=3), "ib_write_bw", [], roles=("b", "a"), peer="198.18.100.2", port=18700)
    assert "failed 3 times" in str(info.value) and "did not finish" in str(info.value)
