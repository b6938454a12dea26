"""L3: simulators for switches and hosts, the fabric counter model and the Soft-RoCE VM."""
