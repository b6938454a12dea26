"""L2: the in-process PFC storm and drop detector."""
