"""L2: what every switch driver builds on: the ``SwitchDriver`` Protocol (:mod:`.base`), the driver registry through
the platform packs (:mod:`.registry`), the netmiko base class (:mod:`.netmiko_base`), SSH host keys and credentials
(:mod:`.host_keys`, :mod:`.known_hosts`, :mod:`.access`, :mod:`.secrets`), owned-section comparison of indented
configs (:mod:`.textcfg`) and the gNMI client (:mod:`.gnmi`). Each platform's own driver, with its prompts and error
patterns, is its pack's ``fabricd/nos/<id>/driver.py`` and ``patterns.py``."""
