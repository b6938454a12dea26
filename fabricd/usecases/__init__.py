"""Use cases: what a user asks fabricd to do, as plain functions with typed requests and results.

This layer sits between the front ends (``fabricd.cli``, ``fabricd.service``: the agent and ``serve``) and the
machinery (``fabricd.deploy``, ``fabricd.audit``, the host backends). A front end turns its input (flags, an agent
option, an HTTP request) into a request, calls the use case, and renders the result; it never re-implements the
use case. Nothing here prints, exits or knows a command-line flag.

- :mod:`fabricd.usecases.host`: plan, apply and audit a host against its intent (``fabricd host plan|apply``,
  ``fabricd audit host``, ``fabricd agent``).
"""
