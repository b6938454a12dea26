"""L1: text and files in, frozen typed snapshots out (procfs style, every host reader takes a root).

Host readers (``root`` is ``/`` on a live host or a replay directory, docs/contracts.md "Replay root"):

- :func:`fabricd.readers.ethtool.read_ethtool` -> :class:`~fabricd.readers.ethtool.EthtoolStats`
  (per-priority pause frames/duration, priority bytes/packets, discards; ``stats.get(kind, dir, prio)``);
- :func:`fabricd.readers.rdma.read_rdma` / ``read_rdma_device`` -> :class:`~fabricd.readers.rdma.RdmaDevice`
  (ports with state, rate, PMA counters and hw_counters; ``port.normalised()`` by meaning, data in bytes);
- :func:`fabricd.readers.nic_config.read_nic_config` / ``read_roce_tos`` (ECN/DCQCN, trust, PFC, RDMA-CM ToS).

Text parsers: :func:`fabricd.readers.ethtool.parse_ethtool_stats`, :func:`fabricd.readers.perfquery.parse_perfquery`,
and each platform pack's ``fabricd.nos.<platform>.show.parse_<command>(text) -> SwitchCounters``.

Readers never raise for a bad file: values are ``int | None`` and problems are listed on the snapshot.
They never cache values; a replay tree may be rewritten between calls.
"""
