# SPDX-License-Identifier: MIT
"""JUnit XML of a --hwcrypto run: measurement properties on the test cases that measured,
kernel/board/profile and the findings on the test suite."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ["pytester"]

MEASURING_SUITE = """
import pytest
from pytest_hwcrypto.model.results import Finding, Measurement

pytestmark = pytest.mark.hwcrypto_throughput
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def measured(hwcrypto_results):
    drivers = (("cbc(aes-generic)", "generic", 100.0), ("cbc-aes-engine", "offload", 150.0))
    for driver, cls, speed in drivers:
        for size in (16, 65536):
            hwcrypto_results.add_measurement(Measurement(
                "afalg", "cbc(aes)", driver, 128, size, "encrypt",
                (speed if size == 65536 else 1.0) * MIB, driver_class=cls))
    hwcrypto_results.add_measurement(Measurement(
        "afalg", "ecb(aes)", "ecb(aes-generic)", 128, 16, "encrypt", MIB, driver_class="generic"))
    hwcrypto_results.add_finding(Finding("crossover", "cbc(aes)", "engine from 64 KiB on", {}))


@pytest.mark.parametrize("algorithm", ["cbc(aes)", "ecb(aes)"])
def test_per_algorithm(measured, algorithm):
    pass


def test_plain():
    pass
"""


def cases(pytester: pytest.Pytester, *args: str) -> tuple[ET.Element, dict[str, ET.Element]]:
    result = pytester.runpytest("--hwcrypto", "test_suite.py", "--junitxml=junit.xml", *args)
    result.assert_outcomes(passed=3)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    suite = root.find("testsuite")
    assert suite is not None
    return suite, {case.get("name", ""): case for case in suite.iter("testcase")}


def properties(element: ET.Element) -> list[tuple[str, str]]:
    return [
        (prop.get("name", ""), prop.get("value", ""))
        for prop in element.findall("properties/property")
    ]


def test_cases_carry_source_driver_mib_s_and_ratio(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=MEASURING_SUITE)
    _, by_name = cases(pytester, "-p", "no:xdist")
    cbc = dict(properties(by_name["test_per_algorithm[cbc(aes)]"]))
    cell = "hwcrypto.afalg.cbc(aes).128.encrypt"
    assert cbc["hwcrypto.source"] == "afalg"
    assert cbc[f"{cell}.cbc(aes-generic).65536.mib_s"] == "100"
    assert cbc[f"{cell}.cbc-aes-engine.65536.mib_s"] == "150"
    assert cbc[f"{cell}.cbc-aes-engine.65536.ratio"] == "1.50"
    assert f"{cell}.cbc(aes-generic).65536.ratio" not in cbc  # software has no HW/SW ratio
    drivers = [
        v for n, v in properties(by_name["test_per_algorithm[cbc(aes)]"]) if n == "hwcrypto.driver"
    ]
    assert sorted(drivers) == ["cbc(aes-generic)", "cbc-aes-engine"]
    # the second test is about its own algorithm only, the plain test about nothing
    ecb = dict(properties(by_name["test_per_algorithm[ecb(aes)]"]))
    assert set(ecb) == {
        "hwcrypto.source",
        "hwcrypto.driver",
        "hwcrypto.afalg.ecb(aes).128.encrypt.ecb(aes-generic).16.mib_s",
    }
    assert properties(by_name["test_plain"]) == []


def test_suite_carries_kernel_board_profile_and_findings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=MEASURING_SUITE)
    suite, _ = cases(pytester, "-p", "no:xdist")
    props = dict(properties(suite))
    assert props["hwcrypto.run.board"] == "host"
    assert props["hwcrypto.run.profile"] == "none"
    assert props["hwcrypto.run.kernel"]
    assert props["hwcrypto.finding.crossover.cbc(aes)"] == "engine from 64 KiB on"


def test_case_properties_survive_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=MEASURING_SUITE)
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "test_suite.py", "--junitxml=junit.xml", "-n", "2"
    )
    result.assert_outcomes(passed=3)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    names = {
        prop.get("name")
        for case in root.iter("testcase")
        for prop in case.findall("properties/property")
    }
    assert "hwcrypto.afalg.ecb(aes).128.encrypt.ecb(aes-generic).16.mib_s" in names
