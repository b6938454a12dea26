"""A real Prometheus server for ``fabricd demo``: Debian's ``/usr/bin/prometheus`` started on 127.0.0.1 with a free
port, its own storage directory, a 1 s scrape and evaluation interval and fabricd's shipped rule pack
(``exporters/rules``), plus the few HTTP API calls the demo needs (``/api/v1/query``, ``/api/v1/alerts``,
``/api/v1/targets``), standard library only.

The server runs in its own session (``start_new_session``), so a Ctrl-C in the terminal reaches the demo, which
then stops it in order; with ``--keep-running`` it is left up and its pid is written next to its config.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricd.errors import FabricdError

log = logging.getLogger(__name__)

PROMETHEUS_BIN = "/usr/bin/prometheus"
PID_FILE = "prometheus.pid"


class PrometheusError(FabricdError):
    """The demo's Prometheus server could not be started or queried."""


@dataclass(frozen=True)
class ScrapeJob:
    """One scrape job: ``targets`` are (``host:port``, extra target labels) pairs."""

    name: str
    targets: Sequence[tuple[str, Mapping[str, str]]]
    metrics_path: str = "/metrics"


@dataclass(frozen=True)
class Sample:
    """One instant-vector element: its labels and value."""

    labels: dict[str, str]
    value: float


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML flow scalar


def config_text(jobs: Sequence[ScrapeJob], rule_files: Sequence[Path], *, interval_s: float = 1.0) -> str:
    """prometheus.yml for ``jobs`` with ``interval_s`` scrape and rule evaluation (YAML written by hand: flat)."""
    lines = [
        "global:",
        f"  scrape_interval: {int(interval_s * 1000)}ms",
        f"  scrape_timeout: {int(max(interval_s * 0.8, 0.5) * 1000)}ms",
        f"  evaluation_interval: {int(interval_s * 1000)}ms",
        "rule_files:",
        *[f"  - {_yaml_str(str(p))}" for p in rule_files],
        "scrape_configs:",
    ]
    for job in jobs:
        lines += [
            f"  - job_name: {_yaml_str(job.name)}",
            f"    metrics_path: {_yaml_str(job.metrics_path)}",
            "    static_configs:",
        ]
        for addr, labels in job.targets:
            lines.append(f"      - targets: [{_yaml_str(addr)}]")
            if labels:
                lines.append("        labels: {" + ", ".join(f"{k}: {_yaml_str(v)}" for k, v in labels.items()) + "}")
    return "\n".join(lines) + "\n"


@dataclass
class PrometheusServer:
    """One Prometheus process. ``workdir`` holds ``prometheus.yml``, ``data/`` and ``prometheus.log``."""

    workdir: Path
    jobs: list[ScrapeJob]
    rule_files: list[Path]
    binary: str = PROMETHEUS_BIN
    interval_s: float = 1.0
    port: int = 0
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.workdir / "prometheus.yml"

    @property
    def log_path(self) -> Path:
        return self.workdir / "prometheus.log"

    def version(self) -> str:
        """``prometheus --version``'s first line, e.g. ``prometheus, version 2.42.0+ds``."""
        out = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=10, check=False)
        text = (out.stdout or out.stderr).strip().splitlines()
        return text[0].split(" (")[0] if text else "unknown"

    def write_config(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(config_text(self.jobs, self.rule_files, interval_s=self.interval_s))

    def start(self, timeout_s: float = 30.0, attempts: int = 3) -> str:
        """Start the server and wait until ``/-/ready``; returns its base URL. Retries on a lost port race."""
        if shutil.which(self.binary) is None and not os.access(self.binary, os.X_OK):
            raise PrometheusError(
                f"{self.binary}: Prometheus is not installed", hint="as root: apt-get install prometheus"
            )
        self.write_config()
        last = ""
        for _ in range(attempts):
            self.port = free_port()
            data = self.workdir / "data"
            data.mkdir(parents=True, exist_ok=True)
            argv = [
                self.binary,
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
                "--storage.tsdb.retention.time=1d",
                "--log.level=warn",
            ]
            with self.log_path.open("ab") as logf:
                self.proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True
                )
            (self.workdir / PID_FILE).write_text(f"{self.proc.pid}\n")
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if self._ready():
                    log.info("prometheus %s up at %s", self.proc.pid, self.url)
                    return self.url
                time.sleep(0.1)
            last = self._log_tail()
            self.stop()
            if "address already in use" not in last:
                break
        raise PrometheusError(
            f"Prometheus did not start: {last or 'no output'}",
            hint=f"see {self.log_path}; check that {self.binary} runs (`fabricd doctor`)",
        )

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1.0) as resp:
                return int(resp.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def _log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def reload(self, jobs: list[ScrapeJob]) -> None:
        """Replace the scrape jobs and tell the server to re-read its config (``POST /-/reload``)."""
        self.jobs = jobs
        self.write_config()
        req = urllib.request.Request(f"{self.url}/-/reload", method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10.0):
                pass
        except (urllib.error.URLError, OSError) as exc:
            raise PrometheusError(f"{self.url}: config reload failed: {exc}") from None

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM, wait, SIGKILL if needed. Safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5.0)
        (self.workdir / PID_FILE).unlink(missing_ok=True)

    def detach(self) -> int:
        """Forget the process without stopping it (``--keep-running``); returns its pid."""
        proc, self.proc = self.proc, None
        if proc is None:
            raise PrometheusError("Prometheus is not running")
        # Popen would warn about a child still running at exit: this one is meant to outlive the demo
        proc.returncode = 0
        return int(proc.pid)

    # -- HTTP API -------------------------------------------------------------------------------------------------

    def api(self, path: str, params: Mapping[str, str] | None = None, timeout_s: float = 10.0) -> Any:
        """GET ``/api/v1/<path>`` and return ``data``; PrometheusError on HTTP or API errors."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        url = f"{self.url}/api/v1/{path}{query}"
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as resp:
                body = json.loads(resp.read().decode("utf-8"))
        except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
            raise PrometheusError(f"{url}: {exc}") from None
        if body.get("status") != "success":
            raise PrometheusError(f"{url}: {body.get('error', 'unknown error')}")
        return body["data"]

    def query(self, promql: str) -> list[Sample]:
        """An instant query; vector results only (scalars come back as one unlabelled sample)."""
        data = self.api("query", {"query": promql})
        if data.get("resultType") == "scalar":
            return [Sample({}, float(data["result"][1]))]
        return [Sample(dict(r.get("metric", {})), float(r["value"][1])) for r in data.get("result", [])]

    def alerts(self) -> list[dict[str, Any]]:
        """Active alerts (pending and firing) as ``/api/v1/alerts`` lists them."""
        return list(self.api("alerts").get("alerts", []))

    def targets(self) -> list[dict[str, Any]]:
        return list(self.api("targets").get("activeTargets", []))
