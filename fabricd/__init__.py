"""fabricd: declarative lossless RoCEv2 fabrics.

One YAML inventory describes the fabric and its lossless policy; fabricd validates it, renders switch and host
configs, pushes them, exports counters to Prometheus, watches for PFC storms, audits hosts and proves the fabric
with verbs traffic. See docs/ARCHITECTURE.md for the layers.
"""

from __future__ import annotations

__version__ = "0.1.0"
