# SPDX-License-Identifier: MIT
"""Under pytest-xdist the measuring suites measure: all their tests in one worker, each
alone in the run, while other tests spread over the workers; the reason is said once."""

from __future__ import annotations

import json
import os
import re
import tempfile

import pytest

pytest_plugins = ["pytester"]

SPAN = """
import json, os, time

LOG = {log!r}


def span(name):
    start = time.monotonic()
    time.sleep(0.3)
    with open(LOG, "a") as log:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        log.write(json.dumps([name, worker, start, time.monotonic()]) + "\\n")
"""
# Named like the shipped suites' modules: the scheduler groups by module name.
MEASURING = """
import pytest
from pytest_hwcrypto import fixtures
from span import span


@pytest.mark.hwcrypto_throughput
@pytest.mark.parametrize("n", range(3))
def test_measures(n, pytestconfig):
    assert fixtures.concurrent_measuring_reason(pytestconfig, "throughput") is None
    span(f"measure-{n}")


@pytest.mark.hwcrypto_dmcrypt
def test_measures_disk(pytestconfig):
    print("RUN-ID", pytestconfig.workerinput["testrunuid"])
    span("measure-disk")
"""
CHECKS = """
import pytest
from span import span


@pytest.mark.parametrize("n", range(8))
def test_checks(n):
    span(f"check-{n}")
"""


def run_id(result: pytest.RunResult) -> str:
    found = re.search(r"RUN-ID (\w+)", result.stdout.str())
    assert found, result.stdout.str()
    return found.group(1)


def test_measuring_tests_run_alone_in_one_worker(pytester: pytest.Pytester) -> None:
    log = pytester.path / "spans.jsonl"
    pytester.makepyfile(
        span=SPAN.format(log=str(log)), test_throughput=MEASURING, test_checks=CHECKS
    )
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "test_throughput.py", "test_checks.py", "-n", "2", "-rP"
    )
    result.assert_outcomes(passed=12)
    assert result.stdout.str().count("run in one worker, each test alone") == 1
    spans = [json.loads(line) for line in log.read_text().splitlines()]
    measuring = [s for s in spans if s[0].startswith("measure")]
    checks = [s for s in spans if s[0].startswith("check")]
    assert len({worker for _, worker, _, _ in measuring}) == 1
    assert len({worker for _, worker, _, _ in checks}) == 2  # the rest is spread
    for name, _, start, end in measuring:
        overlapping = [o for o in spans if o[0] != name and o[2] < end and start < o[3]]
        assert overlapping == [], (name, overlapping)
    # the controller removed the run's lock files
    assert not [p for p in os.listdir(tempfile.gettempdir()) if run_id(result) in p]


def test_another_distribution_keeps_the_skip(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_other="""
        import pytest
        from pytest_hwcrypto import fixtures

        @pytest.mark.hwcrypto_throughput
        def test_reason(pytestconfig):
            reason = fixtures.concurrent_measuring_reason(pytestconfig, "throughput")
            assert "--dist loadgroup" in reason
        """
    )
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "test_other.py", "-n", "2", "--dist", "worksteal"
    )
    result.assert_outcomes(passed=1)
