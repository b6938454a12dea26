"""fabricd-lab's commands: `fabricd lab`, `fabricd demo`, `fabricd report` (registered through fabricd_lab.plugin)."""
