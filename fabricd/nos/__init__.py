"""Platform packs: everything fabricd knows about one switch OS, in one folder per platform (docs/ARCHITECTURE.md).

``fabricd/nos/<id>/`` holds the pack of platform ``<id>``; :mod:`fabricd.nos.registry` maps every
:class:`~fabricd.model.Platform` to its :class:`~fabricd.nos.spec.PlatformSpec`.
"""
