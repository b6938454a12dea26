"""Cisco NX-OS driver (netmiko ``cisco_nxos``): checkpoint, live config, rollback to the checkpoint."""
