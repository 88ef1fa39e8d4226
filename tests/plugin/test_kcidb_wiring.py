# SPDX-License-Identifier: MIT
"""--hwcrypto-kcidb: the run as KCIDB I/O data, written once, valid for kcidb-io."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

kcidb_io = pytest.importorskip("kcidb_io", reason="pip install kcidb-io (the dev extra)")

SUITE = """
import pytest
from pytest_hwcrypto.model.results import Measurement

pytestmark = pytest.mark.hwcrypto_throughput


def test_measures(hwcrypto_results):
    hwcrypto_results.add_measurement(Measurement(
        "afalg", "cbc(aes)", "cbc(aes-generic)", 128, 4096, "encrypt", 50 * 1024 * 1024,
        driver_class="generic"))


def test_fails():
    assert False
"""


@pytest.mark.parametrize("workers", [None])  # xdist: see test_lava_wiring (same outcomes)
def test_kcidb_file_per_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str | None
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("HWCRYPTO_LAVA", "false")
    out = pytester.path / "kcidb.json"
    xdist = ["-n", workers] if workers else ["-p", "no:xdist"]
    result = pytester.runpytest(
        "--hwcrypto",
        "test_suite.py",
        f"--hwcrypto-kcidb={out}",
        "--hwcrypto-kcidb-origin=mylab",
        *xdist,
    )
    result.assert_outcomes(passed=1, failed=1)
    assert not [line for line in result.outlines if line.startswith("<LAVA_SIGNAL")]
    data = json.loads(Path(out).read_text())
    kcidb_io.schema.LATEST.validate_exactly(data)
    status = {test["path"]: test["status"] for test in data["tests"]}
    assert status["hwcrypto.throughput.suite.test_fails"] == "FAIL"
    assert status["hwcrypto.throughput.suite.test_measures"] == "PASS"
    assert status["hwcrypto.throughput.afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096"] == "DONE"
    assert status["hwcrypto"] == "FAIL"
    assert {test["origin"] for test in data["tests"]} == {"mylab"}


def test_a_bad_origin_is_one_usage_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-kcidb-origin=My Lab", "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any("kcidb" in line and "lower-case" in line for line in result.errlines)
