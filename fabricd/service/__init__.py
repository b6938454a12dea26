"""L4, under ``cli/``: the long-running processes. ``fabricd serve`` (host and switch exporters, the PFC storm
watchdog, the drift audit and the HTTP API on one port) and ``fabricd agent`` (the host reconcile agent)."""
