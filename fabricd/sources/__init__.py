"""L2: stateful counter sources, shared by collectors/ and watchdog/ (docs/ARCHITECTURE.md "Layers").

Anything that keeps files open between reads, watches files, or calls an ioctl lives here; ``fabricd.readers`` (L1)
stays pure: text and files in, frozen snapshots out. An import-linter contract keeps it so.

- :mod:`fabricd.sources.kept`: kept-open descriptors read with ``pread``, file layouts cached while their
  directories' stamps hold, a per-process descriptor budget;
- :mod:`fabricd.sources.kept_files`: ``EthtoolFiles``, ``RdmaFiles``, ``NicConfigFiles``, the readers' kept-open
  twins (same values as the readers, or None: read it the slow way);
- :mod:`fabricd.sources.ethtool_live`: the live host's ETHTOOL_GSTATS/GDRVINFO ioctl through pyroute2;
- :mod:`fabricd.sources.notify`: inotify on a replay root's files (local file systems only), so the watchdog and
  the ``nic_config`` collector learn which files changed without a ``stat`` each.
"""
