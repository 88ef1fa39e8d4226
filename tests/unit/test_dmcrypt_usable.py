# SPDX-License-Identifier: MIT
"""Board profiles requiring or waiving dmcrypt-refuses-driver: `[[expect]] dmcrypt = true`
and `[[waive]] check = "dmcrypt-refuses-driver"`."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.model.results import Finding
from pytest_hwcrypto.profile import ProfileError, parse_profile
from pytest_hwcrypto.verdict.dmcrypt_usable import dmcrypt_usable_verdicts, mark_waived
from pytest_hwcrypto.vocabulary import FindingKind

PROFILE = """
[board]
name = "qemu-virtio"

[[expect]]
algorithm = "cbc(aes)"
driver = "virtio_crypto_aes_cbc"
dmcrypt = true

[[expect]]
algorithm = "cbc(aes)"
driver = "cbc-aes-aesni"
dmcrypt = true
"""
WAIVE = """
[[waive]]
driver = "virtio_crypto_aes_cbc"
check = "dmcrypt-refuses-driver"
reason = "QEMU's virtio-crypto carries CRYPTO_ALG_ALLOCATES_MEMORY since 5.10"
"""
REFUSED = Finding(
    FindingKind.DMCRYPT_REFUSES_DRIVER,
    "cbc(aes)",
    "dm-crypt never uses virtio_crypto_aes_cbc: it carries CRYPTO_ALG_ALLOCATES_MEMORY",
    {"driver": "virtio_crypto_aes_cbc"},
)


def test_a_required_driver_dmcrypt_refuses_fails_naming_the_profile_line() -> None:
    profile = parse_profile(PROFILE, Path("board.toml"))
    verdicts = {v.extra["driver"]: v for v in dmcrypt_usable_verdicts([REFUSED], profile)}
    assert not verdicts["virtio_crypto_aes_cbc"].passed
    message = verdicts["virtio_crypto_aes_cbc"].message
    assert "board.toml:5: [expect #1]" in message and "ALLOCATES_MEMORY" in message
    assert verdicts["cbc-aes-aesni"].passed


def test_a_waiver_accepts_the_refusal_with_its_reason_and_marks_the_finding() -> None:
    profile = parse_profile(PROFILE + WAIVE, Path("board.toml"))
    [virtio, _aesni] = dmcrypt_usable_verdicts([REFUSED], profile)
    assert virtio.passed and "waived by board.toml" in virtio.message
    assert "since 5.10" in virtio.message
    [marked] = mark_waived([REFUSED], profile)
    assert marked.extra["waived"].startswith("QEMU's virtio-crypto")
    assert mark_waived([REFUSED], None) == [REFUSED]


def test_no_profile_or_no_requirement_gives_no_verdict() -> None:
    assert dmcrypt_usable_verdicts([REFUSED], None) == []
    plain = parse_profile('[board]\nname = "b"\n', Path("b.toml"))
    assert dmcrypt_usable_verdicts([REFUSED], plain) == []


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ('algorithm = "cbc(aes)"\ndriver = "d"\ndmcrypt = "yes"', "b.toml:6: [expect #1] dmcrypt"),
        ('algorithm = "cbc(aes)"\nclass = "offload"\ndmcrypt = true', "needs a driver"),
    ],
)
def test_bad_dmcrypt_key_is_one_clear_error(entry: str, complaint: str) -> None:
    text = f'[board]\nname = "b"\n[[expect]]\n{entry}\n'
    with pytest.raises(ProfileError, match=complaint.replace("[", r"\[").replace("(", r"\(")):
        parse_profile(text, Path("b.toml"))
