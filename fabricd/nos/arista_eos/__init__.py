"""The Arista EOS platform pack (docs/ARCHITECTURE.md, "Platform packs"): its rules and checks, intent shaping, watchdog
codec, show/running-config/version/LLDP parsers and gNMI paths, and its driver (netmiko ``arista_eos``): config
sessions, commit timers and checkpoints."""
