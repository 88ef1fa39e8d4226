# SPDX-License-Identifier: MIT
"""The crypto manager's self-test verdicts as the kernel logs them (pure).

crypto/testmgr.c's alg_test() ends every failed self-test with one summary line, whatever
the algorithm type, and that line is what names the driver:

* 5.16 to 7.3 (Debian's 6.1 and 7.3.4 print it): ``alg: self-tests for rsa using
  virtio-crypto-rsa failed (rc=-22)`` -- algorithm first, then driver;
* before 5.16: ``alg: self-tests for virtio-crypto-rsa (rsa) failed (rc=-22)`` -- driver
  first, algorithm in parentheses;
* the form proposed in 2025 to end that ambiguity: ``alg: self-tests for rsa (driver
  virtio-crypto-rsa) failed (rc=-22)``;
* in FIPS mode (and with cryptomgr.panic_on_fail before 6.16) the kernel panics instead:
  ``alg: self-tests for DRIVER (ALG) failed in fips mode!``, or the 2025 form with
  ``(driver X)``.

The per-type lines before it (``alg: akcipher: test 1 failed for virtio-crypto-rsa,
err=-22``, ``alg: skcipher: cbc-aes-foo encryption test failed (wrong result) on test
vector 0, ...``) say what went wrong, but not all of them name the driver (``alg:
akcipher: encrypt test failed. err -22``); they are quoted, not parsed.

``alg: No test for ALG (DRIVER)`` is not a failure: the kernel has no test vectors for the
algorithm, registers the driver as tested, and /proc/crypto says ``passed``. It is kept as
what it is, so a report can say the driver was never checked.

The summary line is printed twice for one failure (pr_warn, then the WARN() banner), and
the ring buffer may hold an earlier module load's failure too: one report per driver and
outcome, the last one logged winning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_hwcrypto.units import errno_name

FAILED = "failed"
NO_TEST = "no-test"
# Kinds of report this module returns.
KINDS = (FAILED, NO_TEST)

_TIMESTAMP = re.compile(r"^\s*(?:<\d+>)?\s*(?:\[\s*\d+\.\d+\]\s*)?")
_ALG_USING_DRIVER = re.compile(
    r"alg: self-tests for (?P<alg>\S+) using (?P<driver>\S+) failed \(rc=(?P<rc>-?\d+)\)"
)
_ALG_DRIVER_KEYWORD = re.compile(
    r"alg: self-tests for (?P<alg>\S+) \(driver (?P<driver>\S+)\) failed "
    r"(?:\(rc=(?P<rc>-?\d+)\)|in (?P<mode>[\w-]+) mode)"
)
_DRIVER_THEN_ALG = re.compile(
    r"alg: self-tests for (?P<driver>\S+) \((?P<alg>[^\s]+?)\) failed "
    r"(?:\(rc=(?P<rc>-?\d+)\)|in (?P<mode>[\w-]+) mode)"
)
_NO_TEST = re.compile(r"alg: No test for (?P<alg>\S+) \((?:driver )?(?P<driver>[^\s]+?)\)\s*$")


@dataclass(frozen=True)
class SelftestReport:
    """One driver's self-test outcome in the kernel log."""

    kind: str  # FAILED or NO_TEST
    algorithm: str
    driver: str
    line: str  # the kernel's words, without the timestamp
    rc: int | None = None  # the negative errno alg_test() returned; None for a panic line
    mode: str | None = None  # "fips" / "panic_on_fail" when the kernel panicked instead

    @property
    def error(self) -> str:
        """``EINVAL`` for rc=-22; what a panic line says instead of an rc."""
        if self.rc is not None:
            return errno_name(-self.rc)
        if self.mode is not None:
            return f"a panic in {self.mode} mode"
        return "an unknown error"

    def describe(self) -> str:
        """One line naming the driver, the algorithm and the error."""
        if self.kind == NO_TEST:
            return (
                f"{self.algorithm}: the kernel has no self-test for {self.driver}; "
                "/proc/crypto says passed without a check"
            )
        rc = f" (rc={self.rc})" if self.rc is not None else ""
        return (
            f"{self.algorithm}: {self.driver} failed its self-test with {self.error}{rc}; "
            f"kernel log: {self.line}"
        )


def parse_line(raw: str) -> SelftestReport | None:
    """The report one log line carries, or None for any other line."""
    line = _TIMESTAMP.sub("", raw.rstrip("\r\n")).strip()
    start = line.find("alg: ")
    if start < 0:
        return None
    text = line[start:]
    # Order matters: "(driver X)" would also read as the old "DRIVER (ALG)" form.
    for pattern in (_ALG_USING_DRIVER, _ALG_DRIVER_KEYWORD, _DRIVER_THEN_ALG):
        found = pattern.search(text)
        if found:
            groups = found.groupdict()
            rc = groups.get("rc")
            return SelftestReport(
                FAILED,
                found["alg"],
                found["driver"],
                text,
                rc=int(rc) if rc is not None else None,
                mode=groups.get("mode"),
            )
    found = _NO_TEST.search(text)
    if found:
        return SelftestReport(NO_TEST, found["alg"], found["driver"], text)
    return None


def parse_log(lines: Iterable[str]) -> list[SelftestReport]:
    """Every driver's report in the log, once per (driver, kind), in first-seen order; a
    later line for the same driver and kind replaces the earlier one."""
    reports: dict[tuple[str, str], SelftestReport] = {}
    for raw in lines:
        for piece in raw.splitlines() or [raw]:
            report = parse_line(piece)
            if report is None:
                continue
            reports[(report.driver, report.kind)] = report
    return list(reports.values())


def failures(lines: Iterable[str]) -> dict[str, SelftestReport]:
    """The drivers the log says failed their self-test, by driver name."""
    return {r.driver: r for r in parse_log(lines) if r.kind == FAILED}


__all__ = ["FAILED", "KINDS", "NO_TEST", "SelftestReport", "failures", "parse_line", "parse_log"]
