# SPDX-License-Identifier: MIT
"""LAVA test case names, signal lines and test sets (pure), on a recorded UML board run."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_hwcrypto.model.results import load_results
from pytest_hwcrypto.report.lava import MAX_NAME, Case, CaseSet, Outcomes, case_sets, sanitize

UML = load_results(Path(__file__).resolve().parent.parent / "data" / "board_uml_results_1.json")
ACCEPTED = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


def test_sanitize_keeps_what_lava_accepts() -> None:
    assert sanitize("test_selftest_passed[cbc(aes)-cbc(aes-fixed-time)]") == (
        "test_selftest_passed_cbc_aes_-cbc_aes-fixed-time"
    )
    assert (
        sanitize("afalg.xts(ecb(aes-generic)).256.encrypt")
        == "afalg.xts_ecb_aes-generic.256.encrypt"
    )
    assert sanitize("a b=c>d") == "a_b_c_d"  # spaces, '=' and '>' would break the signal
    assert sanitize("[]") == "unnamed"


def test_long_names_are_cut_with_a_digest_of_the_whole() -> None:
    one, two = sanitize("x" * 150 + "one"), sanitize("x" * 150 + "two")
    assert len(one) == len(two) == MAX_NAME
    assert one != two
    assert ACCEPTED.match(one)


def test_signal_and_helper_forms() -> None:
    case = Case("afalg.cbc_aes.128.encrypt.cbc_aes-generic.16", "pass", 0.0300, "MiB/s")
    assert case.signal() == (
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=afalg.cbc_aes.128.encrypt.cbc_aes-generic.16 "
        "RESULT=pass MEASUREMENT=0.03 UNITS=MiB/s>"
    )
    assert case.helper_argv()[-4:] == ["--measurement", "0.03", "--units", "MiB/s"]
    assert (
        Case("inventory.t", "skip").signal()
        == "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=inventory.t RESULT=skip>"
    )
    assert CaseSet("throughput", (case,)).signals()[0] == "<LAVA_SIGNAL_TESTSET START throughput>"
    assert CaseSet("throughput", (case,)).signals()[-1] == "<LAVA_SIGNAL_TESTSET STOP>"
    assert CaseSet("t", ()).helper_argvs() == [
        ["lava-test-set", "start", "t"],
        ["lava-test-set", "stop"],
    ]


def test_outcomes_from_phases() -> None:
    outcomes = Outcomes()
    for when, outcome in (("setup", "passed"), ("call", "passed"), ("teardown", "failed")):
        outcomes.record("a.py::t_error_at_teardown", when, outcome, "s")
    for when, outcome in (("setup", "skipped"), ("teardown", "passed")):
        outcomes.record("a.py::t_skipped", when, outcome, "s")
    for when, outcome in (("setup", "passed"), ("call", "passed"), ("teardown", "passed")):
        outcomes.record("a.py::t_passed", when, outcome, "s")
    assert outcomes.results == {
        "a.py::t_error_at_teardown": "fail",
        "a.py::t_skipped": "skip",
        "a.py::t_passed": "pass",
    }


def test_every_test_and_measurement_once_with_names_lava_accepts_in_stable_order() -> None:
    outcomes = Outcomes()
    nodeids = [
        f"suites/test_throughput.py::test_measured_on_every_driver[{a}]"
        for a in ("xts(aes)", "cbc(aes)")
    ]
    for nodeid in nodeids:
        outcomes.record(nodeid, "call", "passed", "throughput")
    reversed_outcomes = Outcomes()
    for nodeid in reversed(nodeids):
        reversed_outcomes.record(nodeid, "call", "passed", "throughput")
    sets = case_sets(outcomes, UML)
    assert sets == case_sets(reversed_outcomes, UML)
    (throughput,) = sets
    names = [case.name for case in throughput.cases]
    assert len(names) == len(set(names))
    assert all(ACCEPTED.match(name) for name in names)
    assert names[:2] == [
        "throughput.test_measured_on_every_driver_cbc_aes",
        "throughput.test_measured_on_every_driver_xts_aes",
    ]
    measured = [case for case in throughput.cases if case.units == "MiB/s"]
    assert len(measured) == len(UML.measurements) == 56
    assert "afalg.ecb_aes.128.encrypt.ecb_aes-generic.65536" in names
