"""L2: one switch driver per platform (netmiko), vendor quirks as data in patterns.py."""
