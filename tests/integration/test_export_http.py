"""The host exporter over real HTTP(S) on 127.0.0.1: TLS and basic auth from an exporter-toolkit web config, gzip,
clean shutdown on SIGTERM, and a real Prometheus server (Debian package) scraping it while the replay tree changes."""

from __future__ import annotations

import base64
import datetime
import gzip
import ipaddress
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import bcrypt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from fabricd_lab.replay import ReplayHost

pytestmark = pytest.mark.integration
FABRICD = str(Path(sys.executable).parent / "fabricd")


def self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    crt, kf = tmp / "server.crt", tmp / "server.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    kf.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return crt, kf


def start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start an exporter on an ephemeral port; return the process and the URL it printed."""
    proc = subprocess.Popen([FABRICD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"(https?://\S+/metrics)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise AssertionError(f"exporter did not start: {proc.communicate()}")


def stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=10)


@pytest.fixture
def host(tmp_path: Path) -> ReplayHost:
    h = ReplayHost.mlx5(tmp_path / "root", 2, channels=2)
    h.build()
    return h


def test_tls_basic_auth_gzip_and_sigterm(host: ReplayHost, tmp_path: Path) -> None:
    crt, key = self_signed(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(
        f"tls_server_config:\n  cert_file: {crt.name}\n  key_file: {key.name}\n"
        f"basic_auth_users:\n  prometheus: '{hashed}'\n"
    )
    proc, url = start(["export", "host", "--root", str(host.root), "--listen", "127.0.0.1:0", "--web-config", str(web)])
    try:
        assert url.startswith("https://127.0.0.1:")
        ctx = ssl.create_default_context(cafile=str(crt))
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url, context=ctx, timeout=10)
        assert err.value.code == 401
        wrong = "Basic " + base64.b64encode(b"prometheus:no").decode()
        bad = urllib.request.Request(url, headers={"Authorization": wrong})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(bad, context=ctx, timeout=10)
        assert err.value.code == 401
        auth = "Basic " + base64.b64encode(b"prometheus:s3cret").decode()
        req = urllib.request.Request(url, headers={"Authorization": auth, "Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            assert resp.headers["Content-Encoding"] == "gzip"
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            body = gzip.decompress(resp.read()).decode()
        assert 'fabricd_nic_info{interface="eth0",driver="mlx5_core"' in body
        with pytest.raises(urllib.error.URLError) as untrusted:  # the server really speaks TLS with this cert
            urllib.request.urlopen(url, context=ssl.create_default_context(), timeout=10)
        assert isinstance(untrusted.value.reason, ssl.SSLError)
    finally:
        assert stop(proc) == 0


def test_bad_web_config_is_a_located_error(host: ReplayHost, tmp_path: Path) -> None:
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prometheus: plaintext\n")
    res = subprocess.run(
        [FABRICD, "export", "host", "--root", str(host.root), "--web-config", str(web)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2
    assert "basic_auth_users.prometheus" in res.stderr and "bcrypt" in res.stderr and "Traceback" not in res.stderr
    web.write_text("tls_server_config:\n  cert_file: x.crt\n  keyfile: x.key\n")
    res = subprocess.run(
        [FABRICD, "export", "host", "--root", str(host.root), "--web-config", str(web)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2 and "keyfile" in res.stderr and "unknown key" in res.stderr


@pytest.fixture
def prometheus_bin() -> Iterator[str]:
    path = shutil.which("prometheus")
    if path is None:
        pytest.skip("prometheus not installed (Debian package prometheus; scripts/sysdeps.sh installs it)")
    yield path


def query(base: str, expr: str) -> list[dict[str, object]]:
    url = f"{base}/api/v1/query?query={urllib.request.quote(expr)}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        data = json.load(resp)
    assert data["status"] == "success"
    return list(data["data"]["result"])


def test_real_prometheus_scrapes_the_exporter(
    host: ReplayHost, tmp_path: Path, prometheus_bin: str, reserve_port: Callable[[], int]
) -> None:
    proc, url = start(["export", "host", "--root", str(host.root), "--listen", "127.0.0.1:0"])
    target = url.split("//", 1)[1].split("/", 1)[0]
    port = reserve_port()  # Prometheus's (it does not report a port 0 it bound)
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: fabricd-host\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    prom = subprocess.Popen(
        [
            prometheus_bin,
            f"--config.file={cfg}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        series = 'fabricd_nic_pfc_pause_frames_total{interface="eth0",priority="3",direction="rx"}'
        deadline = time.monotonic() + 60
        seen_before = None
        while time.monotonic() < deadline:
            try:
                res = query(base, series)
            except (urllib.error.URLError, ConnectionError):
                res = []
            if res:
                seen_before = float(res[0]["value"][1])  # type: ignore[index]
                break
            time.sleep(0.5)
        assert seen_before == 0.0, "Prometheus never scraped the exporter"
        host.pause("eth0", 3, frames=500, duration_us=250_000)
        host.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            res = query(base, series)
            if res and float(res[0]["value"][1]) == 500.0:  # type: ignore[index]
                break
            time.sleep(0.5)
        else:
            raise AssertionError("the live-rewritten replay tree never reached Prometheus")
        up = query(base, 'up{job="fabricd-host"}')
        assert up and up[0]["value"][1] == "1"  # type: ignore[index]
        ok = query(base, "min(fabricd_scrape_collector_success)")
        assert ok and ok[0]["value"][1] == "1"  # type: ignore[index]
    finally:
        prom.terminate()
        prom.wait(timeout=20)
        assert stop(proc) == 0
