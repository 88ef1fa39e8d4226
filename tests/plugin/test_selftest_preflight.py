# SPDX-License-Identifier: MIT
"""The inventory suite on the QEMU board's capture and kernel log: an expected driver whose
self-test failed fails its expectation, a waived or passing one does not, and every failure
in the log is a finding naming the driver and the errno."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"
QEMU_PROC_CRYPTO = DATA / "proc_crypto" / "qemu-6.1.0-57-amd64.txt"
# The QEMU board's kernel log (Debian 6.1.0-57-amd64, virtio-crypto), as /dev/kmsg gives it.
QEMU_LOG = [
    "alg: akcipher: encrypt test failed. err -22",
    "alg: akcipher: test 1 failed for virtio-crypto-rsa, err=-22",
    "alg: self-tests for rsa using virtio-crypto-rsa failed (rc=-22)",
    "alg: self-tests for rsa using virtio-crypto-rsa failed (rc=-22)",
]
CONFTEST = f"""
import pathlib
from pytest_hwcrypto import fixtures

def pytest_configure(config):
    fixtures.PROC_CRYPTO = pathlib.Path({str(QEMU_PROC_CRYPTO)!r})
    fixtures.kernel_log = lambda run: {QEMU_LOG!r}
"""
PROFILE = """
[board]
name = "qemu-virtio"

[[expect]]
algorithm = "{algorithm}"
driver = "{driver}"
"""
WAIVER = """
[[waive]]
driver = "virtio-crypto-rsa"
check = "selftest"
reason = "QEMU's builtin backend lacks RSA raw padding"
"""


def run_inventory(pytester: pytest.Pytester, profile: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.path.joinpath("board.toml").write_text(profile)
    return pytester.runpytest_subprocess(
        "--hwcrypto",
        "--hwcrypto-suite=inventory",
        "--hwcrypto-board=board.toml",
        "--hwcrypto-json=r.json",
        "-k",
        "expected_driver or kernel_log_selftest",
        "-p",
        "no:cacheprovider",
    )


def findings(pytester: pytest.Pytester, kind: str) -> list[dict[str, object]]:
    data = json.loads((pytester.path / "r.json").read_text())
    return [f for f in data["findings"] if f["kind"] == kind]


def test_an_expected_driver_that_failed_its_selftest_fails(pytester: pytest.Pytester) -> None:
    result = run_inventory(pytester, PROFILE.format(algorithm="rsa", driver="virtio-crypto-rsa"))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*virtio-crypto-rsa failed its self-test with EINVAL (rc=-22)*"])
    (failed,) = findings(pytester, "selftest-failed")
    assert failed["algorithm"] == "rsa"
    (logged,) = findings(pytester, "kernel-selftest-failed")
    assert (logged["driver"], logged["error"], logged["rc"]) == ("virtio-crypto-rsa", "EINVAL", -22)


def test_a_waived_or_passing_expected_driver_passes(pytester: pytest.Pytester) -> None:
    waived = PROFILE.format(algorithm="rsa", driver="virtio-crypto-rsa") + WAIVER
    run_inventory(pytester, waived).assert_outcomes(passed=2)
    passing = PROFILE.format(algorithm="cbc(aes)", driver="virtio_crypto_aes_cbc")
    run_inventory(pytester, passing).assert_outcomes(passed=2)
    # The log's failure is still a finding, whatever the profile expects.
    assert [f["driver"] for f in findings(pytester, "kernel-selftest-failed")] == [
        "virtio-crypto-rsa"
    ]
