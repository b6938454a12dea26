"""L2: the pyverbs traffic generator."""
