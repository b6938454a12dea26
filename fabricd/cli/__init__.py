"""L4: the command line. The only layer that prints or exits (docs/ARCHITECTURE.md)."""
