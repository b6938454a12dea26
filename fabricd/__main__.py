"""``python -m fabricd`` runs the CLI."""

from __future__ import annotations

from fabricd.cli.main import main

main()
