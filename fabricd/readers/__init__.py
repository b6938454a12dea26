"""L1: text and files in, frozen typed snapshots out (procfs style, every reader takes a root)."""
