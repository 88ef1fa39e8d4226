# SPDX-License-Identifier: MIT
"""Is every driver a board profile requires for dm-crypt usable by it? (pure)

A profile line `[[expect]] ... driver = "D", dmcrypt = true` says dm-crypt must be able to
use D (a board whose disk encryption is meant to run on its engine). A
`dmcrypt-refuses-driver` finding for D then fails -- unless a `[[waive]]` for D with
`check = "dmcrypt-refuses-driver"` (or "*") accepts it, with its reason. Waived findings
are marked (`extra["waived"]`) whether or not anything required the driver, so a report
shows which refusals are known and accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pytest_hwcrypto.model.results import Finding, Verdict
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.vocabulary import FindingKind

RULE = "dmcrypt-usable"
CHECK = str(FindingKind.DMCRYPT_REFUSES_DRIVER)


def mark_waived(findings: Sequence[Finding], profile: BoardProfile | None) -> list[Finding]:
    """The findings, each refusal a profile waives carrying the waiver's reason."""
    out = []
    for finding in findings:
        driver = str(finding.extra.get("driver", ""))
        waiver = profile.waiver_for(driver, CHECK) if profile else None
        if finding.kind == FindingKind.DMCRYPT_REFUSES_DRIVER and waiver is not None:
            finding = replace(finding, extra={**finding.extra, "waived": waiver.reason})
        out.append(finding)
    return out


def dmcrypt_usable_verdicts(
    findings: Sequence[Finding], profile: BoardProfile | None
) -> list[Verdict]:
    """One verdict per driver the profile requires dm-crypt to use."""
    if profile is None:
        return []
    refused = {
        str(f.extra.get("driver")): f
        for f in findings
        if f.kind == FindingKind.DMCRYPT_REFUSES_DRIVER
    }
    verdicts = []
    for expectation in profile.expectations:
        if not expectation.dmcrypt or expectation.driver is None:
            continue
        driver = expectation.driver
        finding = refused.get(driver)
        if finding is None:
            message = f"{driver} ({expectation.algorithm}): dm-crypt can use it"
            verdicts.append(Verdict(RULE, True, message, {"driver": driver}))
            continue
        waiver = profile.waiver_for(driver, CHECK)
        if waiver is not None:
            message = f"{finding.detail}; waived by {profile.path}: {waiver.reason}"
            verdicts.append(Verdict(RULE, True, message, {"driver": driver, "waived": True}))
            continue
        message = f"{expectation.where} requires dm-crypt to use {driver}: {finding.detail}"
        verdicts.append(Verdict(RULE, False, message, {"driver": driver}))
    return verdicts
