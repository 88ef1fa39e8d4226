# SPDX-License-Identifier: MIT
"""The dmcrypt suite through cryptsetup: LUKS2 volumes pinned to each xts(aes) driver, a
wrong key detected, and dm-integrity catching a byte changed on disk.

* LUKS2, one volume per xts(aes) driver (`capi:<driver>-plain64`, 4096-byte sectors,
  pbkdf2): the seeded pattern (--hwcrypto-dmcrypt-bytes) read back through a fresh open;
  a wrong passphrase is refused by the header and leaves the backing file unchanged;
* dm-integrity (LUKS2 `--integrity hmac-sha256`, aes-xts-random: cryptsetup builds
  `capi:authenc(hmac(sha256),xts(aes))-random`, so the winner of xts(aes) serves and its
  refcnt proves it): the pattern reads back, then one byte flipped in the data area of the
  backing file makes the read fail with EIO instead of returning altered data.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.block import dmcrypt, luks, pattern_io, tools
from pytest_hwcrypto.block.volume import Volume, VolumeMaker
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.modprobe import load_module_quietly
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.dmcrypt_engine import BARE, dmcrypt_targets
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.vocabulary import MIB, PROC_CRYPTO, AlgType

pytestmark = pytest.mark.hwcrypto_dmcrypt

XTS = "xts(aes)"
XTS_KEY_BITS = 512  # cryptsetup's --key-size for AES-256 in XTS (two keys)
LUKS2_HEADER = 16 * MIB
DEFAULT_SEED = 13


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "xts_target" in metafunc.fixturenames:
        state = run_of(metafunc.config)
        targets = [
            t
            for t in dmcrypt_targets(fixtures.inventory(state))
            if t.algorithm == XTS and t.driver != BARE and state.options.chooses(XTS)
        ]
        metafunc.parametrize("xts_target", targets, ids=[t.driver for t in targets])


@pytest.fixture(scope="module")
def cryptsetup_ready() -> None:
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    if shutil.which("cryptsetup") is None:
        pytest.skip("cryptsetup is not installed: apt-get install cryptsetup-bin")
    for module in ("crypto_user", "dm_integrity"):
        load_module_quietly(module)


def _seed(run: HwcryptoRun) -> int:
    return run.options.seed if run.options.seed is not None else DEFAULT_SEED


def _open(maker: VolumeMaker, spec: luks.CryptsetupFormat, size: int) -> Volume:
    try:
        return maker.open_cryptsetup(spec, size)
    except tools.BlockError as error:
        pytest.fail(str(error), pytrace=False)


def _round_trip(maker: VolumeMaker, volume: Volume, pattern: str, total: int) -> None:
    wrote = pattern_io.write_pattern(volume.path, pattern, total)
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")
    maker.reopen(volume)
    back = pattern_io.read_digest(volume.path, total)
    assert back.digest == wrote and back.io_error_at is None, (
        f"{volume.driver} ({volume.evidence}): read back {back.digest[:16]}… "
        f"({back.size} bytes), wrote {wrote[:16]}…"
    )


@pytest.mark.usefixtures("cryptsetup_ready")
def test_luks2_volume_reads_back_and_refuses_a_wrong_key(
    xts_target: Target, hwcrypto_run: HwcryptoRun
) -> None:
    refused = dmcrypt.refusal(xts_target.driver)
    if refused:
        pytest.skip(f"dm-crypt refuses it (reported as dmcrypt-refuses-driver): {refused}")
    total = hwcrypto_run.options.dmcrypt_bytes
    driver = xts_target.driver
    spec = luks.CryptsetupFormat(luks.LUKS2, f"capi:{driver}-plain64", XTS_KEY_BITS, driver, 4096)
    maker = VolumeMaker(fixtures.run_ledger(hwcrypto_run))
    volume = _open(maker, spec, total + LUKS2_HEADER)
    try:
        _round_trip(maker, volume, f"{_seed(hwcrypto_run)}:luks2:{driver}", total)
        maker.close_crypt(volume)
        before = pattern_io.file_digest(volume.loop.backing)
        with pytest.raises(luks.WrongKey):
            maker.open_crypt(volume, key=os.urandom(luks.PASSPHRASE_BYTES))
        assert pattern_io.file_digest(volume.loop.backing) == before, (
            f"{driver}: a refused wrong key changed the backing file"
        )
    finally:
        maker.close(volume)


def _integrity_unavailable() -> str | None:
    targets = tools.run(["dmsetup", "targets"])
    if any(line.split()[:1] == ["integrity"] for line in targets.splitlines()):
        return None
    return (
        "device-mapper has no integrity target: modprobe dm_integrity "
        "(CONFIG_DM_INTEGRITY; Debian: linux-image-*, UML: user-mode-linux modules)"
    )


def _winner(name: str) -> str | None:
    """The driver the kernel hands out for `name` now (the instance built if need be)."""
    with contextlib.suppress(afalg.AfAlgError):
        afalg.instantiate(name, AlgType.SKCIPHER, key=bytes(64))
    inventory = build_inventory(read_proc_crypto(PROC_CRYPTO))
    return next((e.driver for e in inventory if e.name == name and e.winner), None)


@pytest.mark.usefixtures("cryptsetup_ready")
def test_integrity_volume_turns_a_flipped_byte_into_an_io_error(hwcrypto_run: HwcryptoRun) -> None:
    reason = _integrity_unavailable()
    if reason:
        pytest.skip(reason)
    driver = _winner(XTS)
    if driver is None:
        pytest.skip(f"no driver of {XTS} on this kernel (CONFIG_CRYPTO_XTS)")
    total = hwcrypto_run.options.dmcrypt_bytes
    spec = luks.CryptsetupFormat(
        luks.LUKS2, "aes-xts-random", XTS_KEY_BITS, driver, 512, "hmac-sha256"
    )
    maker = VolumeMaker(fixtures.run_ledger(hwcrypto_run))
    # Room for the header, the journal and a 48-byte tag per 512-byte sector.
    volume = _open(maker, spec, total + total // 8 + 2 * LUKS2_HEADER)
    try:
        before = pattern_io.block_digests(volume.loop.backing)
        _round_trip(maker, volume, f"{_seed(hwcrypto_run)}:integrity", total)
        maker.close_crypt(volume)
        after = pattern_io.block_digests(volume.loop.backing)
        first, count = pattern_io.largest_changed_run(before, after)
        assert count * pattern_io.BLOCK >= total // 2, (
            f"the written data is not in one place on disk ({count} blocks from {first})"
        )
        pattern_io.flip_byte(volume.loop.backing, (first + count // 2) * pattern_io.BLOCK + 7)
        maker.open_crypt(volume)
        read = pattern_io.read_digest(volume.path, total)
        assert read.io_error_at is not None, (
            f"{volume.evidence}: a byte flipped on disk was read back without an I/O error"
        )
    finally:
        maker.close(volume)
