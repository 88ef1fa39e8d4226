# SPDX-License-Identifier: MIT
"""--hwcrypto-lava: test sets and test cases LAVA reads, after the run, once.

Without LAVA's helper the plugin prints the signal lines; with it (here a stand-in script
named lava-test-case / lava-test-set on PATH that logs its arguments, as LAVA's own
helpers would turn them into those lines) the plugin calls it instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import pytest
from pytest_hwcrypto.model.results import Measurement

pytestmark = pytest.mark.hwcrypto_throughput


def test_measures(hwcrypto_results):
    hwcrypto_results.add_measurement(Measurement(
        "afalg", "cbc(aes)", "cbc(aes-generic)", 128, 4096, "encrypt", 50 * 1024 * 1024,
        driver_class="generic"))


@pytest.mark.parametrize("case", ["a b", "c=d"])
def test_odd_names(case):
    pass


def test_fails():
    assert False


def test_skips():
    pytest.skip("not here")
"""
OTHER = """
def test_elsewhere():
    pass
"""
FILES = ("test_suite.py", "test_other.py")
SIGNAL = re.compile(r"^<LAVA_SIGNAL_(TESTSET|TESTCASE) ([^>]+)>$")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(test_suite=SUITE, test_other=OTHER)
    # no helper and no LAVA environment unless a test adds them
    monkeypatch.setenv("PATH", os.defpath)
    for name in list(os.environ):
        if name.startswith("LAVA_"):
            monkeypatch.delenv(name)
    return pytester


def signals(lines: list[str]) -> list[str]:
    return [line for line in lines if SIGNAL.match(line)]


def test_signals_per_suite_with_results_and_measurements(project: pytest.Pytester) -> None:
    result = project.runpytest("--hwcrypto", *FILES, "--hwcrypto-lava", "-p", "no:xdist")
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    assert signals(result.outlines) == [
        "<LAVA_SIGNAL_TESTSET START test_other>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=other.test_elsewhere RESULT=pass>",
        "<LAVA_SIGNAL_TESTSET STOP>",
        "<LAVA_SIGNAL_TESTSET START throughput>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=suite.test_fails RESULT=fail>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=suite.test_measures RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=suite.test_odd_names_a_b RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=suite.test_odd_names_c_d RESULT=pass>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=suite.test_skips RESULT=skip>",
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096 "
        "RESULT=pass MEASUREMENT=50 UNITS=MiB/s>",
        "<LAVA_SIGNAL_TESTSET STOP>",
    ]
    # after the tests, never among the progress dots
    first = next(i for i, line in enumerate(result.outlines) if line.startswith("<LAVA"))
    assert any("hwcrypto summary" in line for line in result.outlines[:first])


def test_on_by_default_under_lava_off_otherwise_and_when_told(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert signals(project.runpytest("--hwcrypto", *FILES, "-p", "no:xdist").outlines) == []
    monkeypatch.setenv("LAVA_JOB_ID", "42")
    assert signals(project.runpytest("--hwcrypto", *FILES, "-p", "no:xdist").outlines)
    monkeypatch.setenv("HWCRYPTO_LAVA", "false")
    assert signals(project.runpytest("--hwcrypto", *FILES, "-p", "no:xdist").outlines) == []


def test_the_helpers_are_used_where_they_are(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = project.path / "lava-bin"
    bin_dir.mkdir()
    log = project.path / "helper.log"
    for helper in ("lava-test-case", "lava-test-set"):
        script = bin_dir / helper
        script.write_text(f'#!/bin/sh\necho "$(basename "$0") $*" >> {log}\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.defpath}")
    result = project.runpytest("--hwcrypto", *FILES, "-p", "no:xdist")  # on: the helper is there
    assert signals(result.outlines) == []
    calls = Path(log).read_text().splitlines()
    assert calls[:3] == [
        "lava-test-set start test_other",
        "lava-test-case other.test_elsewhere --result pass",
        "lava-test-set stop",
    ]
    assert (
        "lava-test-case afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096 --result pass "
        "--measurement 50 --units MiB/s"
    ) in calls


def test_under_xdist_the_same_cases_once(project: pytest.Pytester) -> None:
    alone = signals(
        project.runpytest("--hwcrypto", *FILES, "--hwcrypto-lava", "-p", "no:xdist").outlines
    )
    spread = signals(
        project.runpytest_subprocess("--hwcrypto", *FILES, "--hwcrypto-lava", "-n", "2").outlines
    )
    assert spread == alone
