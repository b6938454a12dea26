"""EOS queue counters in ``| json`` form (issue 26 acceptance: a JSON form of a command fabricd read only as text).

**Unverified**: no device capture of these JSON forms is kept in this repository. The documents below are built
from the key paths ANTA's VerifyInterfacesEgressQueueDrops / VerifyInterfacesVoqAndEgressQueueDrops read and from
Arista's snmpext sample of ``show interfaces counters queue | json`` (``ingressVoqCounters``); the values are
arbitrary. The parser role ``arista_eos/queue-json`` is declared unverified for that reason (fabricd/nos/roles.py).
"""

from __future__ import annotations

import json

from fabricd.nos.arista_eos.show import parse_show_interfaces_counters_queue_detail as parse


def test_egress_queue_counters_per_drop_precedence() -> None:
    doc = {
        "egressQueueCounters": {
            "interfaces": {
                "Ethernet1": {
                    "ucastQueues": {
                        "trafficClasses": {
                            "TC3": {
                                "dropPrecedences": {
                                    "DP0": {"droppedPackets": 2, "enqueuedPackets": 10},
                                    "DP1": {"droppedPackets": 1},
                                }
                            }
                        }
                    },
                    "mcastQueues": {"trafficClasses": {"TC1": {"dropPrecedences": {"DP0": {"droppedPackets": 3}}}}},
                }
            }
        }
    }
    got = parse("switch# show interfaces counters queue detail | json\n" + json.dumps(doc, indent=2))
    rows = {(q.interface, q.index, q.kind): (q.packets, q.dropped_packets) for q in got.queues}
    assert rows == {("Ethernet1", 3, "unicast"): (10, 3), ("Ethernet1", 1, "multicast"): (None, 3)}
    assert not got.problems


def test_egress_and_voq_drops_per_traffic_class() -> None:
    doc = {
        "interfaces": {
            "Ethernet48": {
                "trafficClasses": {
                    "TC1": {
                        "ingressVoqCounters": {"countersSum": {"droppedPackets": 4}},
                        "egressQueueCounters": {"countersSum": {"droppedPackets": 5}},
                    }
                }
            }
        }
    }
    got = parse(json.dumps(doc))
    assert [(q.interface, q.index, q.kind, q.dropped_packets) for q in got.queues] == [("Ethernet48", 1, "all", 5)]
    assert [(i.counter, i.reason, i.value) for i in got.interfaces] == [("discards", "voq_tc1", 4)]


def test_ingress_voq_counters() -> None:
    doc = {
        "ingressVoqCounters": {
            "interfaces": {
                "Ethernet23/1": {
                    "trafficClasses": {
                        "TC0": {"droppedBytes": 9, "enqueuedPackets": 1, "enqueuedBytes": 2, "droppedPackets": 7}
                    }
                }
            }
        }
    }
    got = parse(json.dumps(doc))
    assert [(i.interface, i.reason, i.value) for i in got.interfaces] == [("Ethernet23/1", "voq_tc0", 7)]


def test_an_unknown_json_shape_is_a_problem() -> None:
    got = parse(json.dumps({"something": {"else": 1}}))
    assert not got.queues and got.problems and "egressQueueCounters" in got.problems[0]
