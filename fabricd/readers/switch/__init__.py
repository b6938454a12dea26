"""What the platform packs' switch parsers share: the normalised counter snapshot (:mod:`.model`), the lossless
settings read back from a running config (:mod:`.config_model`), column-table helpers (:mod:`.tables`), the
empty-parse rule (:mod:`.empty`), version helpers (:mod:`.version`), and ``fabricd capture``'s replay folder and
secret scrubbing (:mod:`.replay`, :mod:`.scrub`). The parsers themselves live in each pack:
``fabricd/nos/<id>/show.py`` (``COMMANDS``, ``OPTIONAL_COMMANDS``, ``PARSERS``), ``running.py`` and ``version.py``."""
