"""Switch show-output parsers, one module per platform id (``sonic``, ``arista_eos``, ``cisco_nxos``,
``cumulus_nvue``). Each module has ``COMMANDS`` (role -> CLI command the exporter runs), ``PARSERS`` (role -> pure
``parse_<command>(text) -> SwitchCounters``) and more parsers for other captured commands."""
