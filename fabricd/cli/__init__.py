"""L4: the command line. The only layer that prints or exits (DESIGN.md §4.5)."""
