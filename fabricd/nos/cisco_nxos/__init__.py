"""The Cisco NX-OS platform pack (docs/ARCHITECTURE.md, "Platform packs"): its rules and checks, intent shaping,
watchdog codec, show/running-config/version/LLDP parsers and gNMI paths, and its driver (netmiko ``cisco_nxos``):
checkpoint, live config, rollback to the checkpoint."""
