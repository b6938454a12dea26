"""L2: host backends (netlink, sysfs, dcb): read_state, plan, apply, restore."""
