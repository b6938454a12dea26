"""SONiC driver (netmiko ``linux``): Generic Config Updater checkpoint, JSON patch, rollback."""
