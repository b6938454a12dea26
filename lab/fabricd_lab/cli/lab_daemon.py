"""The lab daemon's entry point: ``python -m fabricd_lab.cli.lab_daemon --dir DIR`` (started by ``fabricd lab up``).

It parses the command line, sets up logging and exits with :func:`fabricd_lab.daemon.run`'s status; the daemon
itself lives in :mod:`fabricd_lab.daemon` (only cli/ prints or exits).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from fabricd_lab import daemon


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=daemon.DAEMON_MODULE)
    parser.add_argument("--dir", required=True, type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return daemon.run(args.dir)


if __name__ == "__main__":
    raise SystemExit(main())
