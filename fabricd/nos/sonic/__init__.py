"""The SONiC platform pack (docs/ARCHITECTURE.md, "Platform packs"): its rules and checks, intent shaping, watchdog
codec, show/running-config/version/LLDP parsers and gNMI paths, and its driver (netmiko ``linux``): Generic Config
Updater checkpoint, JSON patch, rollback."""
