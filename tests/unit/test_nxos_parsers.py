"""NX-OS show parsers on the NX-API nesting: a ``ROW_*`` is a dict for one row and a list for several, rows hang
under ``TABLE_module -> ROW_module`` or at the top; non-empty output that yields nothing is a problem. The one-row
outputs come from fabricd's NX-OS simulator, which prints the nesting of Cisco's NX-API schema (no public capture of
these JSON outputs with values exists: see docs/platforms.md)."""

from __future__ import annotations

import json

from fabricd.model import Platform
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd_lab.device import DeviceSpec
from fabricd_lab.nxos import NxosSwitch

G400 = 400_000_000_000


def _switch() -> NxosSwitch:
    sw = NxosSwitch(
        DeviceSpec("sw1", Platform.CISCO_NXOS, password="x", ports=(("Ethernet1/1", G400), ("Ethernet1/2", G400)))
    )
    sw.counters.traffic("Ethernet1/1", 3, 1000, 4096)
    sw.counters.ecn_mark("Ethernet1/1", 3, 7, 4096)
    sw.counters.pause("Ethernet1/1", 3, 11, direction="rx")
    return sw


def test_one_interface_rows_are_dicts_and_parse() -> None:
    out = _switch().open_shell().handle("show queuing interface ethernet1/1 | json").output
    data = json.loads(out)
    rows = data["TABLE_module"]["ROW_module"]["TABLE_queuing_interface"]["ROW_queuing_interface"]
    assert isinstance(rows, list) and len(rows) == 2  # the Egress and the Ingress row of one port
    one = {"TABLE_queuing_interface": {"ROW_queuing_interface": rows[0]}}  # a single row: a dict
    assert isinstance(one["TABLE_queuing_interface"]["ROW_queuing_interface"], dict)
    for text in (out, json.dumps(one)):
        parsed = cisco_nxos.parse_show_queuing(text)
        q3 = next(q for q in parsed.queues if q.index == 3 and q.kind == "unicast")
        assert (q3.interface, q3.packets, q3.bytes, q3.ecn_marked_packets) == ("Ethernet1/1", 1000, 4096000, 7)
        assert not parsed.problems
    pfc = cisco_nxos.parse_show_queuing(out).pfc
    assert [(p.direction, p.frames) for p in pfc if p.priority == 3] == [("rx", 11), ("tx", 0)]


def test_text_and_json_of_the_lab_agree() -> None:
    shell = _switch().open_shell()
    as_json = cisco_nxos.parse_show_queuing(shell.handle("show queuing interface | json").output)
    as_text = cisco_nxos.parse_show_queuing(shell.handle("show queuing interface").output)
    assert set(as_json.queues) == set(as_text.queues) and set(as_json.pfc) == set(as_text.pfc)


def test_non_empty_output_parsed_to_nothing_is_a_problem() -> None:
    for parse, text in (
        (cisco_nxos.parse_show_queuing, '{"interfaces": {"Ethernet1/1": [{"qos-group": 3}]}}'),
        (cisco_nxos.parse_show_queuing, "Egress Queuing for Ethernet1/1 [System]\nno boxes"),
        (cisco_nxos.parse_show_queuing_pfc_queue, '{"TABLE_pfc_queue": {"ROW_pfc_queue": []}}'),
        (cisco_nxos.parse_show_interface_priority_flow_control, "% Invalid command at '^' marker."),
        (cisco_nxos.parse_show_queuing_interface, "Ethernet1/1 queuing information:\n"),
    ):
        parsed = parse(text)
        assert parsed.problems and "no row in a known NX-OS shape" in parsed.problems[0], (text, parsed)
    assert cisco_nxos.parse_show_queuing("").problems == ()
    # the schema's global block without interface rows: no watchdog queue anywhere, not a parse failure
    quiet = cisco_nxos.parse_show_queuing_pfc_queue('{"glb-wd-status": "Disabled", "glb-wd-timer": "100"}')
    assert quiet.pfcwd == () and quiet.problems == ()


def test_pfc_queue_json_takes_the_leading_port_word_and_group_number() -> None:
    """A Cisco engineer's NX-API collector (paregupt/nexus_traffic_monitor) reads ``if_name_str`` and ``eq-qosgrp``
    of `show queuing pfc-queue detail | json` as text with a trailing part (port = first word, group = leading
    number). No capture shows those values: this input is written to that reading, not copied from a device, and
    checks the parser gives the same counters as for the schema's plain values."""

    def doc(name: str, group: str) -> str:
        return json.dumps(
            {
                "TABLE_module": {
                    "ROW_module": {
                        "TABLE_queuing_interface": {
                            "ROW_queuing_interface": [
                                {
                                    "if_name_str": name,
                                    "wd-status": "Enabled",
                                    "TABLE_qosgrp_stats": {
                                        "ROW_qosgrp_stats": [
                                            {
                                                "eq-qosgrp": group,
                                                "eq-qosgrp-state": "Shutdown",
                                                "pfc-configured": "YES",
                                                "pfc-cos": "3",
                                                "TABLE_qosgrp_stats_entry": {
                                                    "ROW_qosgrp_stats_entry": [
                                                        {
                                                            "q-stat-type": "Stats",
                                                            "q-shutdown": "2",
                                                            "q-restored": "1",
                                                            "q-pkt-dropped": "40",
                                                            "q-ing-pkt-dropped": "7",
                                                        }
                                                    ]
                                                },
                                            }
                                        ]
                                    },
                                }
                            ]
                        }
                    }
                }
            }
        )

    plain = cisco_nxos.parse_show_queuing_pfc_queue(doc("Ethernet1/23", "3"))
    trailing = cisco_nxos.parse_show_queuing_pfc_queue(
        doc("Ethernet1/23 Interface PFC watchdog: [Enabled]", "3 [Shutdown] PFC [YES] PFC-COS [3]")
    )
    assert plain.pfcwd == trailing.pfcwd and not trailing.problems
    (wd,) = trailing.pfcwd
    assert (wd.interface, wd.queue, wd.status, wd.detected, wd.restored, wd.tx_drop, wd.rx_drop) == (
        "Ethernet1/23",
        3,
        "stormed",
        2,
        1,
        40,
        7,
    )
    # a non-numbered group (the schema's CONTROL/SPAN rows) is not a data queue
    assert cisco_nxos.parse_show_queuing_pfc_queue(doc("Ethernet1/23", "CONTROL QOS GROUP")).pfcwd == ()
