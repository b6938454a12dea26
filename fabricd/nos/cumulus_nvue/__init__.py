"""NVIDIA Cumulus Linux NVUE driver (netmiko ``cumulus_linux``): nv set/unset, nv config diff/apply --confirm."""
