"""The simulators' command grammar: templates, error positions, keys."""

from __future__ import annotations

import pytest

from fabricd_lab.grammar import Rule, classify, compile_template, key_rule, match
from fabricd_lab.textconfig import Editor, Node, render


def toks(line: str) -> list[str]:
    return line.split()


def test_literals_params_ranges_and_optionals() -> None:
    el = compile_template("random-detect ecn minimum-threshold <int> (kbytes|bytes) [weight <int:0-15>]")
    assert match(el, toks("random-detect ecn minimum-threshold 150 kbytes")).ok
    assert match(el, toks("random-detect ecn minimum-threshold 150 kbytes weight 0")).ok
    bad = match(el, toks("random-detect ecn minimum-threshold 150 furlongs"))
    assert (bad.ok, bad.bad_token) == (False, 4)
    assert match(el, toks("random-detect ecn minimum-threshold 150 kbytes weight 16")).bad_token == 6
    assert match(el, toks("random-detect ecn")).incomplete


def test_ints_backtrack_and_lists() -> None:
    el = compile_template("qos map dscp <ints> to traffic-class <int:0-7>")
    assert match(el, toks("qos map dscp 0 1 2 3 to traffic-class 0")).ok
    assert match(el, toks("qos map dscp to traffic-class 0")).bad_token == 3
    assert match(compile_template("match dscp <list>"), toks("match dscp 0-25,27-47")).ok
    assert not match(compile_template("match dscp <list>"), toks("match dscp 0-25,x")).ok


def test_classify_reports_the_furthest_bad_token() -> None:
    rules = (Rule.of("mtu <int:68-9216>", key=1), Rule.of("description <rest>", key=1))
    assert classify(rules, toks("mtu 9999")).bad_token == 1
    assert classify(rules, toks("speed 100g")).bad_token == 0
    assert classify(rules, toks("mtu")).bad_token == -1
    assert classify(rules, toks("description uplink to spine")).rule is rules[1]


def test_keys_and_no_forms() -> None:
    rules = (Rule.of("mtu <int>", key=1), Rule.of("shutdown", name="shutdown"), Rule.of("no shutdown", name="shutdown"))
    assert key_rule(rules, toks("mtu")) == (rules[0], "mtu")
    assert key_rule(rules, toks("mtu 1500"))[1] == "mtu"  # type: ignore[index]
    assert key_rule(rules, toks("speed")) is None


def test_editor_modes_fallback_replace_and_no() -> None:
    grammar = {
        "config": (Rule.of("interface <word>", mode="if", key=2), Rule.of("hostname <word>", key=1)),
        "if": (Rule.of("mtu <int>", key=1), Rule.of("tx-queue <int:0-7>", mode="txq", key=2)),
        "txq": (Rule.of("bandwidth percent <int:1-100>", key=2),),
    }
    root = Node("")
    ed = Editor(grammar, root)
    for line in (
        "interface Ethernet1",
        "mtu 1500",
        "tx-queue 3",
        "bandwidth percent 50",
        "mtu 9216",
        "hostname sw1",
        "interface Ethernet1",
        "tx-queue 3",
        "bandwidth percent 40",
    ):
        assert ed.apply(line) is None, line
    assert render(root, "   ", block_bang=True) == [
        "interface Ethernet1",
        "   mtu 9216",
        "   !",
        "   tx-queue 3",
        "      bandwidth percent 40",
        "!",
        "hostname sw1",
    ]
    assert ed.apply("no tx-queue 3") is None
    assert "tx-queue 3" not in root.children["interface Ethernet1"].children
    err = ed.apply("mtu lots")
    assert err is not None and err.bad_token == 1
    with pytest.raises(ValueError):
        compile_template("a [b [c]]")
