# SPDX-License-Identifier: MIT
"""Inventory suite: what the kernel registered, did it pass its self-test, is what the board
needs there, and which driver wins each algorithm.

One test per registered driver and per profile expectation, so a failure names exactly
the driver or expectation at fault.
"""

from __future__ import annotations

from typing import Callable

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import selftest_log
from pytest_hwcrypto.kernel.classify import is_offload
from pytest_hwcrypto.kernel.facts import KernelFacts
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.model.results import Finding, Verdict
from pytest_hwcrypto.profile import BoardProfile, Expectation
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.verdict import inventory_checks
from pytest_hwcrypto.vocabulary import FindingKind

pytestmark = pytest.mark.hwcrypto_inventory

# The type of pytest's record_testsuite_property fixture (pytest exports no name for it).
RecordProperty = Callable[[str, object], None]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_of(metafunc.config)
    if "registered" in metafunc.fixturenames:
        entries = [e for e in fixtures.inventory(state) if state.options.chooses(e.name)]
        metafunc.parametrize("registered", entries, ids=[entry_id(e) for e in entries])
    if "expectation" in metafunc.fixturenames:
        if state.profile is None:
            no_profile = pytest.mark.skip(
                reason="no board profile: --hwcrypto-board=PROFILE.toml lists the drivers "
                "this board must register"
            )
            metafunc.parametrize("expectation", [pytest.param(None, marks=no_profile)])
            return
        expectations = [e for e in state.profile.expectations if state.options.chooses(e.algorithm)]
        metafunc.parametrize("expectation", expectations, ids=[e.describe() for e in expectations])


def entry_id(entry: InventoryEntry) -> str:
    return f"{entry.name}:{entry.driver}"


def test_kernel_facts_recorded(
    hwcrypto_kernel: KernelFacts, record_testsuite_property: RecordProperty
) -> None:
    for key, value in hwcrypto_kernel.to_json().items():
        record_testsuite_property(f"hwcrypto.kernel.{key}", value)
    assert hwcrypto_kernel.release


def test_selftest_passed(
    hwcrypto_run: HwcryptoRun,
    registered: InventoryEntry,
    hwcrypto_kernel: KernelFacts,
    hwcrypto_profile: BoardProfile | None,
    hwcrypto_results: ResultsRecorder,
) -> None:
    """A registered driver that failed (or never finished) its self-test serves wrong bytes."""
    verdict = inventory_checks.selftest_verdict(registered, hwcrypto_kernel, hwcrypto_profile)
    if verdict.skip:
        pytest.skip(verdict.message)
    if not verdict.passed:
        # The kernel's own words on what went wrong, when its log still has them.
        log = fixtures.kernel_log(hwcrypto_run)
        said = inventory_checks.selftest_log_lines(log, registered.driver)
        message = verdict.message + "".join(f"\n  kernel log: {line}" for line in said)
        hwcrypto_results.add_finding(
            Finding(
                FindingKind.SELFTEST_FAILED,
                registered.name,
                message,
                {"driver": registered.driver},
            )
        )
        pytest.fail(message, pytrace=False)


def test_kernel_log_selftest_failures_reported(
    hwcrypto_run: HwcryptoRun, hwcrypto_results: ResultsRecorder
) -> None:
    """Every "alg: self-tests for ALG using DRIVER failed (rc=N)" in the kernel log is a
    finding naming the driver and the error, registered or not (a module unloaded since)."""
    for failure in selftest_log.failures(fixtures.kernel_log(hwcrypto_run)).values():
        hwcrypto_results.add_finding(
            Finding(
                FindingKind.KERNEL_SELFTEST_FAILED,
                failure.algorithm,
                failure.describe(),
                {"driver": failure.driver, "rc": failure.rc, "error": failure.error},
            )
        )


def test_expected_driver_registered(
    expectation: Expectation,
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_kernel: KernelFacts,
    hwcrypto_profile: BoardProfile | None,
    hwcrypto_results: ResultsRecorder,
) -> None:
    """The board profile's drivers must be there, self-tested: a missing one, or one whose
    self-test failed, is a failure, not a skip."""
    verdict = inventory_checks.expectation_verdict(
        expectation, hwcrypto_inventory, hwcrypto_kernel, hwcrypto_profile
    )
    kind = verdict.finding_kind or FindingKind.DRIVER_MISSING
    fixtures.record_and_judge(
        hwcrypto_results,
        Verdict(f"expect {expectation.describe()}", verdict.passed, verdict.message),
        [] if verdict.passed else [Finding(kind, expectation.algorithm, verdict.message)],
    )


def test_blacklisted_crypto_modules_reported(
    hwcrypto_kernel: KernelFacts, hwcrypto_results: ResultsRecorder
) -> None:
    """Without a profile a blacklisted crypto module is a finding, not a failure."""
    for finding in inventory_checks.blacklist_findings(hwcrypto_kernel):
        hwcrypto_results.add_finding(
            Finding(FindingKind.MODULE_BLACKLISTED, finding.algorithm, finding.detail)
        )


def test_afalg_reaches_the_asynchronous_drivers(
    hwcrypto_run: HwcryptoRun,
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_results: ResultsRecorder,
) -> None:
    """A kernel whose AF_ALG refuses its off-CPU drivers (kernel/afalg_reach.py) is a finding
    once per run, not a failure: dm-crypt and tcrypt still reach them."""
    reach = fixtures.afalg_reach(hwcrypto_run)
    if reach.why_unknown:
        pytest.skip(
            f"cannot tell whether AF_ALG reaches the asynchronous drivers: {reach.why_unknown}"
        )
    if reach.masks_off_cpu:
        engines = {e.driver for e in hwcrypto_inventory if is_offload(e.driver_class)}
        hwcrypto_results.add_finding(
            Finding(
                FindingKind.AFALG_MASKED,
                ", ".join(reach.names),
                reach.describe(first=engines),
                {"drivers": list(reach.refused), "binds_by_name": list(reach.controls)},
            )
        )


def test_winners_recorded(
    hwcrypto_inventory: list[InventoryEntry],
    record_testsuite_property: RecordProperty,
) -> None:
    """The driver the kernel hands out for each algorithm with a choice of drivers."""
    winners = inventory_checks.contested_winners(hwcrypto_inventory)
    for name, entry in winners.items():
        record_testsuite_property(
            f"hwcrypto.winner.{name}",
            f"{entry.driver} ({entry.driver_class}, priority {entry.priority})",
        )
    assert all(entry.winner for entry in winners.values())
