"""L4: fabricd serve, the long-running exporter, watchdog and drift auditor."""
