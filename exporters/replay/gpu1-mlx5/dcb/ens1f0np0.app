dscp-prio AF31:3
