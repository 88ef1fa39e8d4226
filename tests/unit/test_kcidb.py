# SPDX-License-Identifier: MIT
"""KCIDB output (lab/kcidb.py): valid against kcidb-io's latest schema, paths in KCIDB's
alphabet with a stable spelling of kernel names, measurements in `number`."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_hwcrypto.lab import kcidb
from pytest_hwcrypto.model.results import Results, Verdict
from pytest_hwcrypto.report.lava import Outcomes, case_sets
from pytest_hwcrypto.vocabulary import MIB
from tests.factories import at_mib_s

kcidb_io = pytest.importorskip("kcidb_io", reason="pip install kcidb-io (the dev extra)")

PATH_SEGMENT = re.compile(r"^[A-Za-z0-9_-]+$")


def run_results() -> Results:
    inventory = [
        {"name": "cbc(aes)", "driver": "cbc(aes-generic)", "class": "generic", "winner": False},
        {"name": "cbc(aes)", "driver": "cbc-aes-aesni", "class": "cpu-accel", "winner": True},
    ]
    measurements = [
        at_mib_s(driver, mib, block_size=size, driver_class=cls)
        for driver, cls, size, mib in (
            ("cbc(aes-generic)", "generic", 4096, 50.0),
            ("cbc-aes-aesni", "cpu-accel", 4096, 200.0),
            ("cbc(aes-generic)", "generic", 65536, 60.0),
            ("cbc-aes-aesni", "cpu-accel", 65536, 30.0),
        )
    ]
    verdicts = [
        Verdict("hw-beats-sw cbc(aes) >=65536", False, "cbc-aes-aesni 0.50x cbc(aes-generic)"),
        Verdict("floor sha256", True, "ok"),
    ]
    return Results(
        kernel={"release": "6.1.0-57-amd64", "machine": "x86_64", "config_sha256": "ab" * 32},
        inventory=inventory,
        measurements=measurements,
        verdicts=verdicts,
        environment={"board": {"kind": "qemu", "profile_name": "strict"}, "cpu": {"x": 1}},
    )


def document(results: Results | None = None, origin: str = "mylab") -> dict[str, Any]:
    results = results or run_results()
    outcomes = Outcomes()
    for nodeid, outcome in (
        ("suites/test_throughput.py::test_rules[cbc(aes)]", "failed"),
        ("suites/test_inventory.py::test_selftest_passed[aes-generic]", "passed"),
        ("suites/test_inventory.py::test_skipped", "skipped"),
    ):
        suite = nodeid.split("/test_")[1].split(".py")[0]
        outcomes.record(nodeid, "call", outcome, suite)
    return kcidb.kcidb_data(
        results,
        case_sets(outcomes, results),
        origin=origin,
        run="20261206T120000-42-abcd",
        start_time="2026-12-06T12:00:00+00:00",
    )


def test_the_document_validates_against_kcidb_ios_latest_schema() -> None:
    data = document()
    latest = kcidb_io.schema.LATEST
    assert (latest.major, latest.minor) >= (5, 3)
    latest.validate_exactly(data)  # raises on any violation
    assert data["version"] == {"major": 5, "minor": 3}
    assert [c["id"] for c in data["checkouts"]] == ["mylab:6.1.0-57-amd64"]
    assert data["builds"][0]["checkout_id"] == data["checkouts"][0]["id"]
    assert all(test["build_id"] == data["builds"][0]["id"] for test in data["tests"])


def test_a_broken_document_is_refused_by_the_same_check() -> None:
    """The validation above can fail: a path with parentheses is not KCIDB's."""
    data = document()
    data["tests"][0]["path"] = "hwcrypto.cbc(aes)"
    with pytest.raises(Exception, match="does not match"):
        kcidb_io.schema.LATEST.validate_exactly(data)


def test_paths_use_only_kcidb_alphabet_and_are_unique() -> None:
    tests = document()["tests"]
    paths = [test["path"] for test in tests]
    assert len(set(paths)) == len(paths)
    assert len({test["id"] for test in tests}) == len(tests)
    for path in paths:
        assert all(PATH_SEGMENT.match(segment) for segment in path.split(".")), path


@pytest.mark.parametrize(
    ("name", "spelled"),
    [
        ("cbc(aes)", "cbc_aes"),
        ("authenc(hmac(sha256),cbc(aes))", "authenc_hmac_sha256_cbc_aes"),
        ("xts-aes-aesni", "xts-aes-aesni"),
        ("rfc4106(gcm(aes))", "rfc4106_gcm_aes"),
        ("sha3-256", "sha3-256"),
    ],
)
def test_the_documented_spelling_of_kernel_names(name: str, spelled: str) -> None:
    assert kcidb.path_segment(name) == spelled
    assert kcidb.test_path("hwcrypto", f"afalg.{name}.4096") == f"hwcrypto.afalg.{spelled}.4096"


def test_measurements_are_done_with_their_number_and_unit() -> None:
    by_path = {test["path"]: test for test in document()["tests"]}
    cell = by_path["hwcrypto.throughput.afalg.cbc_aes.128.encrypt.cbc-aes-aesni.4096"]
    assert cell["status"] == "DONE"
    assert cell["number"] == {"value": 200.0 * MIB, "unit": "B/s", "prefix": "binary"}
    ratio = by_path["hwcrypto.throughput.afalg.cbc_aes.128.encrypt.cbc-aes-aesni.65536.ratio"]
    assert ratio["number"] == {"value": 0.5}  # dimensionless
    assert by_path["hwcrypto.throughput.afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096"]["number"][
        "value"
    ] == pytest.approx(50.0 * MIB)


def test_tests_rules_and_the_root_carry_their_status() -> None:
    by_path = {test["path"]: test for test in document()["tests"]}
    assert by_path["hwcrypto.throughput.throughput.test_rules_cbc_aes"]["status"] == "FAIL"
    assert (
        by_path["hwcrypto.inventory.inventory.test_selftest_passed_aes-generic"]["status"] == "PASS"
    )
    assert by_path["hwcrypto.inventory.inventory.test_skipped"]["status"] == "SKIP"
    rule = by_path["hwcrypto.rule.hw-beats-sw_cbc_aes_65536"]
    assert (rule["status"], rule["comment"]) == ("FAIL", "cbc-aes-aesni 0.50x cbc(aes-generic)")
    assert by_path["hwcrypto.rule.floor_sha256"]["status"] == "PASS"
    root = by_path["hwcrypto"]
    assert root["status"] == "FAIL" and "2 failed" in root["comment"]
    assert root["environment"]["comment"] == "board qemu, profile strict"


def test_the_same_run_spells_the_same_paths_whatever_the_order() -> None:
    results = run_results()
    shuffled = Results(
        kernel=results.kernel,
        inventory=results.inventory,
        measurements=list(reversed(results.measurements)),
        verdicts=results.verdicts,
    )
    first = sorted(test["path"] for test in document(results)["tests"])
    assert first == sorted(test["path"] for test in document(shuffled)["tests"])


def test_two_names_that_spell_alike_stay_two_tests() -> None:
    results = run_results()
    results.verdicts = [Verdict("floor (a)", True, "x"), Verdict("floor [a]", False, "y")]
    paths = [t["path"] for t in document(results)["tests"] if ".rule." in t["path"]]
    assert paths == ["hwcrypto.rule.floor_a", "hwcrypto.rule.floor_a-2"]


def test_an_origin_outside_kcidbs_alphabet_is_refused() -> None:
    with pytest.raises(ValueError, match="not a KCIDB origin"):
        document(origin="My-Lab")
