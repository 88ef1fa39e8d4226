# SPDX-License-Identifier: MIT
"""Self-test verdicts read from the kernel log: each failure names its driver and errno."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_hwcrypto.boards.base import BoardResult
from pytest_hwcrypto.boards.console import scan_kernel_log
from pytest_hwcrypto.boards.runner import record_kernel_events
from pytest_hwcrypto.kernel.facts import KernelFacts
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory, find_driver
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.selftest_log import (
    FAILED,
    NO_TEST,
    failures,
    parse_line,
    parse_log,
)
from pytest_hwcrypto.profile import parse_profile
from pytest_hwcrypto.verdict.inventory_checks import expectation_verdict, selftest_verdict

DATA = Path(__file__).resolve().parents[1] / "data"

# The QEMU board's console, Debian 6.1.0-57-amd64 with virtio-crypto (tests/data's run).
QEMU_61 = [
    "[    3.402113] alg: akcipher: encrypt test failed. err -22",
    "[    3.402650] alg: akcipher: test 1 failed for virtio-crypto-rsa, err=-22",
    "[    3.403001] alg: self-tests for rsa using virtio-crypto-rsa failed (rc=-22)",
    "[    3.403010] ------------[ cut here ]------------",
    "[    3.403011] alg: self-tests for rsa using virtio-crypto-rsa failed (rc=-22)",
    "[    3.403102] WARNING: CPU: 1 PID: 153 at crypto/testmgr.c:5907 alg_test.cold+0x7c/0xf5",
]
# Debian's 7.3.4 on the QEMU board (DESIGN.md section 8).
QEMU_73 = "alg: self-tests for rsa using virtio-crypto-rsa failed (rc=-22)"
# The project's faulty driver (hwcrypto_test wrong_decrypt) on the QEMU board, /dev/kmsg text.
FAULTY = "alg: self-tests for cbc(aes) using cbc-aes-hwcrypto-test-a failed (rc=-22)"


def test_the_61_and_73_line_names_algorithm_driver_and_errno() -> None:
    for line in (QEMU_61[2], QEMU_73):
        report = parse_line(line)
        assert report is not None
        assert (report.kind, report.algorithm, report.driver) == (
            FAILED,
            "rsa",
            "virtio-crypto-rsa",
        )
        assert report.rc == -22
        assert report.error == "EINVAL"
        assert "virtio-crypto-rsa" in report.describe()
        assert "EINVAL" in report.describe()


def test_a_template_algorithm_keeps_its_parentheses() -> None:
    report = parse_line(FAULTY)
    assert report is not None
    assert (report.algorithm, report.driver) == ("cbc(aes)", "cbc-aes-hwcrypto-test-a")


def test_the_pre_516_form_puts_the_driver_first() -> None:
    # crypto/testmgr.c before 5.16: WARN(1, "alg: self-tests for %s (%s) failed (rc=%d)",
    # driver, alg, rc)
    report = parse_line("alg: self-tests for cbc-aes-ccp (cbc(aes)) failed (rc=-2)")
    assert report is not None
    assert (report.algorithm, report.driver, report.error) == ("cbc(aes)", "cbc-aes-ccp", "ENOENT")


def test_the_driver_keyword_form_and_the_panic_line() -> None:
    # The 2025 "$alg (driver $driver)" form, and the FIPS panic in both orders.
    keyword = parse_line("alg: self-tests for sha256 (driver sha256-foo) failed (rc=-74)")
    assert keyword is not None
    assert (keyword.algorithm, keyword.driver, keyword.error) == ("sha256", "sha256-foo", "EBADMSG")
    panic = parse_line(
        "Kernel panic - not syncing: alg: self-tests for aes-ce (aes) failed in fips mode!"
    )
    assert panic is not None
    assert (panic.driver, panic.algorithm, panic.rc) == ("aes-ce", "aes", None)
    assert panic.error == "a panic in fips mode"


def test_no_test_is_kept_apart_from_a_failure() -> None:
    report = parse_line("[    1.1] alg: No test for fips(ansi_cprng) (fips_ansi_cprng)")
    assert report is not None
    assert (report.kind, report.algorithm, report.driver) == (
        NO_TEST,
        "fips(ansi_cprng)",
        "fips_ansi_cprng",
    )
    assert failures([report.line]) == {}


def test_a_failure_logged_twice_is_one_report_and_per_type_lines_are_not_parsed() -> None:
    reports = parse_log(QEMU_61)
    assert [(r.driver, r.kind) for r in reports] == [("virtio-crypto-rsa", FAILED)]
    assert list(failures(QEMU_61)) == ["virtio-crypto-rsa"]


def test_other_lines_are_not_reports() -> None:
    for line in (
        "",
        "alg: extra crypto tests enabled.  This is intended for developer use only.",
        "alg: self-tests disabled",
        "alg: self-tests for sha256 (sha256-generic) passed",
        "random: crng init done",
    ):
        assert parse_line(line) is None


def test_the_recorded_qemu_run_carries_these_lines() -> None:
    # The fixture lines above are the ones the QEMU board's console recorded.
    data = json.loads((DATA / "board_qemu_results.json").read_text())
    details = {f["detail"] for f in data["findings"]}
    assert {QEMU_61[0][15:], QEMU_61[1][15:], QEMU_61[2][15:]} <= details


# --- the inventory, its verdicts and the board's console findings --------------------------

QEMU_CAPTURE = DATA / "proc_crypto" / "qemu-6.1.0-57-amd64.txt"
RSA_PROFILE = """
[board]
name = "qemu"

[[expect]]
algorithm = "rsa"
driver = "virtio-crypto-rsa"
"""
WAIVER = """
[[waive]]
driver = "virtio-crypto-rsa"
check = "selftest"
reason = "QEMU's builtin backend lacks RSA raw padding"
"""


def qemu_inventory(log: list[str]) -> list[InventoryEntry]:
    return build_inventory(read_proc_crypto(QEMU_CAPTURE), selftest_failures=failures(log))


def rsa_entry(entries: list[InventoryEntry]) -> InventoryEntry:
    entry = find_driver(entries, "virtio-crypto-rsa")
    assert entry is not None
    return entry


def test_the_inventory_says_failed_where_the_log_has_the_failure() -> None:
    entry = rsa_entry(qemu_inventory(QEMU_61))
    assert entry.selftest == "failed"
    assert entry.to_json()["selftest"] == "failed"
    assert entry.to_json()["selftest_log"] == QEMU_73
    assert not entry.winner
    # Without the log it stays what /proc/crypto says, and a driver that passed stays passed.
    assert rsa_entry(qemu_inventory([])).selftest == "unknown"
    stale = FAULTY.replace("cbc-aes-hwcrypto-test-a", "cbc-aes-aesni")
    generic = find_driver(qemu_inventory([*QEMU_61, stale]), "cbc-aes-aesni")
    assert generic is not None and generic.selftest == "passed"


def test_the_selftest_verdict_names_driver_and_errno() -> None:
    facts = KernelFacts(release="6.1.0-57-amd64", machine="x86_64")
    verdict = selftest_verdict(rsa_entry(qemu_inventory(QEMU_61)), facts, None)
    assert not verdict.passed
    assert "virtio-crypto-rsa" in verdict.message and "EINVAL" in verdict.message


def test_an_expected_driver_that_failed_its_selftest_fails_the_expectation() -> None:
    facts = KernelFacts(release="6.1.0-57-amd64", machine="x86_64")
    entries = qemu_inventory(QEMU_61)
    profile = parse_profile(RSA_PROFILE, Path("qemu.toml"))
    verdict = expectation_verdict(profile.expectations[0], entries, facts, profile)
    assert not verdict.passed
    assert verdict.finding_kind == "selftest-failed"
    assert "virtio-crypto-rsa failed its self-test with EINVAL (rc=-22)" in verdict.message
    waived = parse_profile(RSA_PROFILE + WAIVER, Path("qemu.toml"))
    assert expectation_verdict(waived.expectations[0], entries, facts, waived).passed


def test_an_expected_driver_that_passed_still_passes() -> None:
    facts = KernelFacts(release="6.1.0-57-amd64", machine="x86_64")
    profile = parse_profile(
        RSA_PROFILE.replace('"rsa"', '"cbc(aes)"').replace(
            "virtio-crypto-rsa", "virtio_crypto_aes_cbc"
        ),
        Path("qemu.toml"),
    )
    verdict = expectation_verdict(profile.expectations[0], qemu_inventory(QEMU_61), facts, profile)
    assert verdict.passed, verdict.message


def test_the_console_finding_names_the_driver_once(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    inner = {"kind": "kernel-selftest-failed", "algorithm": "rsa", "driver": "virtio-crypto-rsa"}
    results.write_text(json.dumps({"findings": [inner]}))
    events = scan_kernel_log("\n".join(QEMU_61))
    board = BoardResult("qemu", "6.1", 0, 1.0, 2.0, False, tmp_path / "console.log", None, events)
    record_kernel_events(results, board)
    findings = json.loads(results.read_text())["findings"]
    kinds = [(f["kind"], f.get("driver")) for f in findings]
    # The inner session's finding stays alone for that driver; the per-type lines (which
    # name no driver the parser trusts) and the WARNING stay as the console said them.
    assert kinds.count(("kernel-selftest-failed", "virtio-crypto-rsa")) == 1
    results.write_text(json.dumps({"findings": []}))
    record_kernel_events(results, board)
    named = [f for f in json.loads(results.read_text())["findings"] if f.get("driver")]
    assert [(f["algorithm"], f["driver"], f["error"]) for f in named] == [
        ("rsa", "virtio-crypto-rsa", "EINVAL")
    ]
