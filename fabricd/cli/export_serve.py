"""The slim serving process of ``fabricd export host``.

``fabricd export host`` checks its options, then replaces itself (``execv``, same pid) with
``python -m fabricd.cli.export_serve ...``, which imports only the collectors and the HTTP server: the full CLI
imports every command (rich, pydantic, jinja2, netmiko, matplotlib...) and would keep ~88 MB resident for the
exporter's lifetime; this process keeps ~27 MB (bench/scrape.py, docs/PERFORMANCE.md). It uses argparse and plain
stderr writes, so that it never imports typer or rich.
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from types import FrameType

from fabricd.collectors.core import Registry
from fabricd.collectors.host import HOST_COLLECTORS, host_collectors
from fabricd.collectors.nic_config import CONFIG_INTERVAL_S
from fabricd.collectors.server import DEFAULT_LISTEN, ExporterServer, bind_error, listen_option
from fabricd.collectors.webconfig import WebConfig, load_web_config
from fabricd.errors import FabricdError


def serve_registry(registry: Registry, listen: str, web: WebConfig | None, what: str) -> None:
    """Serve ``registry`` on ``listen`` until SIGTERM/SIGINT. Raises :class:`UsageError` on a bad address or one
    that cannot be bound."""
    host, port = listen_option(listen)
    try:
        server = ExporterServer((host, port), registry.exposition, web)
    except OSError as exc:
        raise bind_error(listen, exc) from exc
    if server.exposed:
        sys.stderr.write(f"warning: serving {what} on {host} without TLS or authentication; "
                         "give --web-config to protect it\n")
    sys.stderr.write(f"fabricd {what} exporter on {server.url} (stop with Ctrl-C or SIGTERM)\n")
    sys.stderr.flush()

    def _stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    old = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fabricd export host", description=__doc__)
    parser.add_argument("--root", default=None)
    parser.add_argument("--listen", default=DEFAULT_LISTEN)
    parser.add_argument("--web-config", default=None)
    parser.add_argument("--include", default=None)
    parser.add_argument("--collectors", default=",".join(HOST_COLLECTORS))
    parser.add_argument("--include-virtual", action="store_true")
    parser.add_argument("--config-interval", type=float, default=CONFIG_INTERVAL_S)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s", stream=sys.stderr)
    try:
        web = load_web_config(args.web_config) if args.web_config else None
        registry = Registry(host_collectors(
            args.root or "/", replay=args.root is not None,
            include=re.compile(args.include) if args.include else None,
            enabled=tuple(n for n in args.collectors.split(",") if n),
            include_virtual=args.include_virtual, config_interval=args.config_interval,
        ))
        serve_registry(registry, args.listen, web, "host")
    except FabricdError as exc:
        sys.stderr.write(f"error: {exc.render()}\n")
        return exc.exit_code
    except (OSError, ValueError, re.error) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
