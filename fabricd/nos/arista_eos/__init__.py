"""Arista EOS driver (netmiko ``arista_eos``): config sessions, commit timers and checkpoints."""
