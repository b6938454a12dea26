"""The NVIDIA Cumulus Linux NVUE platform pack (docs/ARCHITECTURE.md, "Platform packs"): its rules and checks, intent
shaping, watchdog codec, show/running-config/version/LLDP parsers and gNMI paths, and its driver (netmiko
``cumulus_linux``): nv set/unset, nv config diff/apply --confirm."""
