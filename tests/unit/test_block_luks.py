# SPDX-License-Identifier: MIT
"""Pure parts of the cryptsetup volumes and pattern I/O: the dm UUIDs cryptsetup will set
(recorded in the ledger before it runs), essiv recomputed, and where a write landed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.block import luks, pattern_io
from pytest_hwcrypto.block.crypt_table import CryptSpec, table_line
from pytest_hwcrypto.block.plain_format import decrypt_plain, plain64_iv
from pytest_hwcrypto.block.tools import BlockError

UUID = "11111111-2222-3333-4444-555555555555"
HEX = "11111111222233334444555555555555"


def test_luks2_uuids_follow_the_luks_uuid_and_name() -> None:
    spec = luks.CryptsetupFormat(luks.LUKS2, "aes-xts-random", 512, "x", integrity="hmac-sha256")
    assert luks.dm_uuids(spec, "hw-1", UUID) == (
        f"CRYPT-LUKS2-{HEX}-hw-1",
        f"CRYPT-INTEGRITY-{HEX}-hw-1_dif",
    )
    plain = luks.CryptsetupFormat(luks.PLAIN, "capi:cbc(aes-generic)-plain64", 128, "x")
    assert luks.dm_uuids(plain, "hw-2", None) == ("CRYPT-PLAIN-hw-2", None)
    with pytest.raises(BlockError, match="LUKS UUID"):
        luks.dm_uuids(spec, "hw-1", None)


def test_essiv_spec_names_the_instance_dm_crypt_builds() -> None:
    spec = CryptSpec("cbc(aes-generic)", "essiv:sha256-generic")
    assert spec.cipher == "capi:cbc(aes-generic)-essiv:sha256-generic"
    assert spec.serving_driver == "essiv(cbc(aes-generic),sha256-generic)"
    assert CryptSpec("xts-aes-aesni").serving_driver == "xts-aes-aesni"
    with pytest.raises(BlockError, match="essiv:<hash driver>"):
        table_line(CryptSpec("cbc(aes-generic)", "essiv:"), bytes(16), "7:0", 4096, 512)


def test_essiv_decrypt_matches_an_independent_cbc_essiv_encryption() -> None:
    key, plaintext = bytes(range(16)), bytes(range(256)) * 8  # 2048 bytes, 4 sectors
    salt = Cipher(algorithms.AES(hashlib.sha256(key).digest()), modes.ECB()).encryptor()
    raw = b""
    for sector in range(4):
        iv = salt.update(plain64_iv(10 + sector))
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        raw += encryptor.update(plaintext[sector * 512 : (sector + 1) * 512])
    assert decrypt_plain("cbc(aes)", key, raw, 512, "essiv:sha256", first_sector=10) == plaintext
    assert decrypt_plain("cbc(aes)", key, raw, 512, "plain64", first_sector=10) != plaintext


def test_pattern_is_reproducible_in_chunks_and_its_digest_matches(tmp_path: Path) -> None:
    whole = b"".join(pattern_io.pattern_chunks("seed", 10_000, chunk=3000))
    assert len(whole) == 10_000 and whole == b"".join(pattern_io.pattern_chunks("seed", 10_000))
    assert whole != b"".join(pattern_io.pattern_chunks("other", 10_000))
    target = tmp_path / "f"
    target.write_bytes(bytes(12_000))
    digest = pattern_io.write_pattern(target, "seed", 10_000)
    assert digest == hashlib.sha256(whole).hexdigest() == pattern_io.pattern_digest("seed", 10_000)
    assert pattern_io.read_digest(target, 10_000, chunk=4096) == pattern_io.ReadBack(digest, 10_000)


def test_largest_changed_run_and_flip_byte(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(bytes(4096 * 10))
    before = pattern_io.block_digests(target)
    data = bytearray(target.read_bytes())
    data[4096 * 1 : 4096 * 2] = b"x" * 4096  # a run of one
    data[4096 * 4 : 4096 * 8] = b"y" * 4096 * 4  # a run of four
    target.write_bytes(bytes(data))
    assert pattern_io.largest_changed_run(before, pattern_io.block_digests(target)) == (4, 4)
    pattern_io.flip_byte(target, 5)
    assert target.read_bytes()[5] == 0xFF
