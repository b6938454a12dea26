"""L3: pictures of a run (storm timeline, dashboard panels, topology with the storm's origin) for docs and users."""
