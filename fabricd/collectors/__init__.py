"""L2: Prometheus collectors, one file per counter source (node_exporter style)."""
