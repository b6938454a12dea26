"""L1: model -> per-device desired state; every decision (headroom, lossless queues, units) and the semantic checks."""
