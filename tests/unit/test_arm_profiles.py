# SPDX-License-Identifier: MIT
"""The ARM boards' shipped profiles judge dm-crypt: the CPU drivers a lab board's disks
use must be usable by it, and virtio-crypto's refusal (ALLOCATES_MEMORY) is waived.

Without `dmcrypt = true` the dmcrypt suite's profile test skipped on both boards
(2026-12-07 suite matrix): no driver was required of dm-crypt there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_hwcrypto.boards.profiles as shipped
from pytest_hwcrypto.model.results import Finding
from pytest_hwcrypto.profile import load_profile
from pytest_hwcrypto.verdict.dmcrypt_usable import dmcrypt_usable_verdicts
from pytest_hwcrypto.vocabulary import FindingKind

PROFILES = Path(next(iter(shipped.__path__)))
REQUIRED = {
    "qemu-arm64": {"xts-aes-ce", "cbc-aes-ce"},
    "qemu-armhf": {"xts-aes-neonbs", "cbc-aes-neonbs"},
}


def refusal(driver: str, algorithm: str = "cbc(aes)") -> Finding:
    return Finding(
        FindingKind.DMCRYPT_REFUSES_DRIVER,
        algorithm,
        f"dm-crypt never uses {driver}: it carries CRYPTO_ALG_ALLOCATES_MEMORY",
        {"driver": driver},
    )


@pytest.mark.parametrize("board", sorted(REQUIRED))
def test_cpu_drivers_are_required_of_dmcrypt_and_virtio_is_waived(board: str) -> None:
    profile = load_profile(PROFILES / f"{board}.toml")
    verdicts = dmcrypt_usable_verdicts([refusal("virtio_crypto_aes_cbc")], profile)
    assert {v.extra["driver"] for v in verdicts} == REQUIRED[board]
    assert all(v.passed for v in verdicts)


@pytest.mark.parametrize("board", sorted(REQUIRED))
def test_a_cpu_driver_dmcrypt_refuses_fails(board: str) -> None:
    profile = load_profile(PROFILES / f"{board}.toml")
    refused = sorted(REQUIRED[board])[0]
    verdicts = dmcrypt_usable_verdicts([refusal(refused, "xts(aes)")], profile)
    failed = [v for v in verdicts if not v.passed]
    assert [v.extra["driver"] for v in failed] == [refused]
    assert "requires dm-crypt to use" in failed[0].message
