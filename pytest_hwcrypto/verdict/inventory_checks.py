# SPDX-License-Identifier: MIT
"""Verdicts of the inventory suite (pure): self-tests, expected drivers, blacklisted modules.

Each function takes the parsed inventory and kernel facts and returns a verdict whose
message names the driver, module and what to do — the suite only turns it into pass,
fail or skip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_hwcrypto.kernel.facts import KernelFacts
from pytest_hwcrypto.kernel.inventory import InventoryEntry, algorithms_with_multiple_drivers
from pytest_hwcrypto.kernel.modprobe import BlacklistEntry
from pytest_hwcrypto.profile import BoardProfile, Expectation


@dataclass(frozen=True)
class CheckVerdict:
    passed: bool
    message: str
    skip: bool = False
    finding_kind: str | None = None


@dataclass(frozen=True)
class InventoryFinding:
    algorithm: str
    detail: str


def _describe(entry: InventoryEntry) -> str:
    module = entry.module or "?"
    return f"{entry.driver} ({entry.driver_class}, module {module}, priority {entry.priority})"


def selftest_verdict(
    entry: InventoryEntry, facts: KernelFacts, profile: BoardProfile | None
) -> CheckVerdict:
    """Did the crypto manager's self-test pass for this registered driver?"""
    if entry.selftest == "passed":
        return CheckVerdict(True, f"{entry.name}: {_describe(entry)} passed its self-test")
    waiver = profile.waiver_for(entry.driver, "selftest") if profile else None
    if waiver is not None:
        return CheckVerdict(
            True,
            f"{entry.name}: {entry.driver} self-test "
            f"{entry.selftest or 'not reported'}, waived: {waiver.reason}",
            skip=True,
        )
    if facts.selftests_enabled is False:
        return CheckVerdict(
            True,
            f"{entry.name}: {entry.driver} was not self-tested: this "
            "kernel has crypto self-tests compiled out (enable "
            "CONFIG_CRYPTO_SELFTESTS, or unset "
            "CONFIG_CRYPTO_MANAGER_DISABLE_TESTS on older kernels)",
            skip=True,
        )
    failure = entry.selftest_failure
    if failure is not None and entry.selftest == "failed":
        return CheckVerdict(
            False,
            f"{entry.name}: {_describe(entry)} failed its self-test with {failure.error} "
            f"(rc={failure.rc}); the kernel does not hand it out by name",
            finding_kind="selftest-failed",
        )
    return CheckVerdict(
        False,
        f"{entry.name}: {_describe(entry)} is registered but its "
        f"self-test is {entry.selftest or 'not reported'}, not passed: "
        "the kernel may hand it out although it was never proven correct",
        finding_kind="selftest-failed",
    )


def selftest_log_lines(log: Sequence[str], driver: str) -> list[str]:
    """The crypto manager's own lines about `driver` ("alg: skcipher: <driver> decryption
    test failed (wrong result) on test vector 0, ..."), in log order, each once."""
    named = re.compile(rf"(?<![\w-]){re.escape(driver)}(?![\w-])")
    found: list[str] = []
    for line in log:
        if line.startswith("alg:") and named.search(line) and line not in found:
            found.append(line)
    return found


def _blacklist_entry(facts: KernelFacts, module: str | None) -> BlacklistEntry | None:
    if not module:
        return None
    wanted = module.replace("-", "_")
    return next(
        (b for b in facts.blacklisted_modules if b.module.replace("-", "_") == wanted), None
    )


def expectation_verdict(
    expectation: Expectation,
    entries: Sequence[InventoryEntry],
    facts: KernelFacts,
    profile: BoardProfile | None = None,
) -> CheckVerdict:
    """Is the driver (or a driver of the class) the board profile expects registered, and
    did it pass its self-test (or has the profile waived that for it)?"""
    blacklisted = _blacklist_entry(facts, expectation.module)
    if blacklisted is not None:
        return CheckVerdict(
            False,
            f"{expectation.algorithm}: module {blacklisted.module} is "
            f"blacklisted at {blacklisted.file}:{blacklisted.line}, so "
            f"{expectation.describe()} cannot serve it",
            finding_kind="module-blacklisted",
        )
    registered = [e for e in entries if e.name == expectation.algorithm]
    matching = [e for e in registered if _matches(expectation, e)]
    proven = [e for e in matching if _selftest_stands(e, profile)]
    if matching and not proven:
        return CheckVerdict(
            False,
            f"{expectation.algorithm}: expected {expectation.describe()} is registered "
            f"but {_selftest_words(matching)}: the kernel will not hand it out by name "
            '(waive with [[waive]] driver = ..., check = "selftest" and a reason)',
            finding_kind="selftest-failed",
        )
    if matching:
        matching = proven
        winner = next((e for e in registered if e.winner), None)
        note = (
            ""
            if winner is None or winner in matching
            else f"; note: the kernel hands out {winner.driver} first (higher priority)"
        )
        return CheckVerdict(True, f"{expectation.algorithm}: {_describe(matching[0])}{note}")
    present = ", ".join(_describe(e) for e in registered) or "nothing"
    return CheckVerdict(
        False,
        f"{expectation.algorithm}: expected {expectation.describe()} "
        f"is not registered (registered: {present})",
        finding_kind="driver-missing",
    )


def _selftest_stands(entry: InventoryEntry, profile: BoardProfile | None) -> bool:
    """Passed, never reported (a capture without the line), or waived by the profile."""
    if entry.selftest in (None, "passed"):
        return True
    return profile is not None and profile.waiver_for(entry.driver, "selftest") is not None


def _selftest_words(entries: Sequence[InventoryEntry]) -> str:
    """What went wrong with each expected driver's self-test, in the kernel's words."""
    said = []
    for entry in entries:
        failure = entry.selftest_failure
        if failure is not None and entry.selftest == "failed":
            said.append(
                f"{entry.driver} failed its self-test with {failure.error} (rc={failure.rc})"
            )
        else:
            said.append(f"{entry.driver}'s self-test is {entry.selftest}, not passed")
    return "; ".join(said)


def _matches(expectation: Expectation, entry: InventoryEntry) -> bool:
    if expectation.driver is not None and entry.driver != expectation.driver:
        return False
    if expectation.driver_class is not None and entry.driver_class != expectation.driver_class:
        return False
    return not (expectation.module is not None and entry.module != expectation.module)


def blacklist_findings(facts: KernelFacts) -> list[InventoryFinding]:
    """Every blacklisted module, so a laptop that lost AES-NI this way is told so."""
    return [
        InventoryFinding("", f"module {b.module} is blacklisted at {b.file}:{b.line}")
        for b in facts.blacklisted_crypto_modules
    ]


def contested_winners(entries: Iterable[InventoryEntry]) -> dict[str, InventoryEntry]:
    """The winning driver of every algorithm name that has more than one driver."""
    entries = list(entries)
    names = algorithms_with_multiple_drivers(entries)
    return {
        name: entry for entry in entries for name in names if entry.name == name and entry.winner
    }
