# SPDX-License-Identifier: MIT
"""/dev/crypto on the QEMU board: who serves a session, steering it, and the bytes it returns.

Run inside the board with cryptodev-linux loaded:
`pytest --hwcrypto-vm=qemu --hwcrypto-cryptodev tests/board/test_cryptodev.py`. There
cbc(aes) has three drivers: cbc-aes-aesni (priority 400, the boot winner),
virtio_crypto_aes_cbc (150, the virtio-crypto offload engine) and cbc(aes-generic) (100,
a template instance that exists once bound). cryptodev opens by name, so it gets the
winner unless another driver is made to win while the session is opened; the session keeps
its driver afterwards. Every test leaves every priority as it found it (checked at the end).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pytest_hwcrypto.fixtures import rerank_unavailable_reason
from pytest_hwcrypto.kernel import afalg, cryptodev
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Reranker
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.cryptodev_engine import CryptodevEngine
from pytest_hwcrypto.measure.engine import Timing
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.run import CRYPTODEV_STATE_ENV, run_of

AESNI = "cbc-aes-aesni"
VIRTIO = "virtio_crypto_aes_cbc"
GENERIC = "cbc(aes-generic)"
# NIST SP 800-38A F.2.1 CBC-AES128.Encrypt, first block.
NIST_KEY = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
NIST_IV = bytes.fromhex("000102030405060708090a0b0c0d0e0f")
NIST_PLAIN = bytes.fromhex("6bc1bee22e409f96e93d7e117393172a")
NIST_CIPHER = bytes.fromhex("7649abac8119b246cee98e9b12e9197d")
SIZES = (16, 4096, 65536)


def pyca_cbc(key: bytes, iv: bytes, data: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def priorities() -> dict[str, int | None]:
    return {a.driver: a.priority for a in read_proc_crypto() if not a.is_internal}


@pytest.fixture(scope="module")
def boot_priorities(board_kind: str, request: pytest.FixtureRequest) -> Iterator[None]:
    """Skip off the QEMU board or without /dev/crypto; afterwards every priority is back."""
    if board_kind != "qemu":
        pytest.skip("needs the QEMU board: pytest --hwcrypto-vm=qemu --hwcrypto-cryptodev")
    reason = cryptodev.unavailable_reason()
    if reason is not None:
        said = os.environ.get(CRYPTODEV_STATE_ENV)
        message = f"{reason}" + (f" (the board says: {said})" if said else "")
        if run_of(request.config).options.cryptodev:
            pytest.fail(f"--hwcrypto-cryptodev was given: {message}", pytrace=False)
        pytest.skip(message)
    afalg.instantiate_any(GENERIC)  # exists from here on, with its default priority
    before = priorities()
    yield
    assert priorities() == before, "a priority was left changed"


@pytest.fixture
def device(boot_priorities: None) -> Iterator[cryptodev.CryptoDevice]:
    with cryptodev.CryptoDevice() as opened:
        yield opened


def instantiate(driver: str) -> None:
    afalg.instantiate_any(driver)


@pytest.fixture
def reranker(tmp_path: Path) -> Reranker:
    """Re-ranking with a ledger of this test's own (priorities restored on leaving)."""
    reason = rerank_unavailable_reason()
    if reason:
        pytest.skip(reason)
    return Reranker(Ledger(tmp_path), instantiate)


def check_bytes(session: cryptodev.CipherSession, key: bytes) -> None:
    """The NIST block and random 16 B / 4 KiB / 64 KiB equal pyca's, and decrypt back."""
    assert session.encrypt(NIST_PLAIN, NIST_IV) == NIST_CIPHER
    for size in SIZES:
        data, iv = os.urandom(size), os.urandom(16)
        sealed = session.encrypt(data, iv, misalign=size % 7)
        assert sealed == pyca_cbc(key, iv, data), f"{session.driver}, {size} B"
        assert session.decrypt(sealed, iv) == data, f"{session.driver}, {size} B back"


def test_the_ioctl_numbers_are_the_ones_the_module_answers(device: cryptodev.CryptoDevice) -> None:
    with cryptodev.open_session(device, "cbc(aes)", NIST_KEY) as session:
        assert session.info.name == "cbc(aes)" and session.ses != 0


def test_by_name_cbc_aes_is_served_by_aesni(device: cryptodev.CryptoDevice) -> None:
    with cryptodev.open_session(device, "cbc(aes)", NIST_KEY) as session:
        assert session.driver == AESNI
        assert isinstance(session, cryptodev.CipherSession)
        check_bytes(session, NIST_KEY)


@pytest.mark.parametrize("driver", [VIRTIO, GENERIC, AESNI])
def test_a_preferred_driver_serves_the_session_and_keeps_it(
    device: cryptodev.CryptoDevice, reranker: Reranker, driver: str
) -> None:
    before = priorities()
    session = cryptodev.open_on_driver(device, "cbc(aes)", NIST_KEY, driver, reranker.prefer)
    with session:
        assert priorities() == before, "the preference lasts only while the session opens"
        assert session.driver == driver and session.ask_driver() == driver
        assert isinstance(session, cryptodev.CipherSession)
        check_bytes(session, NIST_KEY)
        with cryptodev.open_session(device, "cbc(aes)", NIST_KEY) as by_name:
            assert by_name.driver == AESNI, "by name it is the boot winner again"


def test_without_a_preference_a_mismatch_names_both(device: cryptodev.CryptoDevice) -> None:
    with pytest.raises(cryptodev.CryptodevError) as error:
        cryptodev.open_on_driver(device, "cbc(aes)", NIST_KEY, VIRTIO)
    assert f"asked /dev/crypto for {VIRTIO}" in str(error.value)
    assert f"served by {AESNI}" in str(error.value)


def test_gcm_through_ciocauthcrypt(device: cryptodev.CryptoDevice) -> None:
    key, nonce, aad = os.urandom(16), os.urandom(12), b"header"
    with cryptodev.open_session(device, "gcm(aes)", key) as session:
        assert isinstance(session, cryptodev.AeadSession)
        assert session.driver == "generic-gcm-aesni"
        for size in (0, *SIZES):
            data = os.urandom(size)
            sealed = session.encrypt(data, nonce, aad)
            assert sealed == AESGCM(key).encrypt(nonce, data, aad), f"{size} B"
            assert session.decrypt(sealed, nonce, aad) == data
        forged = bytearray(sealed)
        forged[-1] ^= 1
        with pytest.raises(cryptodev.CryptodevError) as refused:
            session.decrypt(bytes(forged), nonce, aad)
        assert refused.value.authentication_failed


def test_the_kernel_refusals_say_why(device: cryptodev.CryptoDevice) -> None:
    with pytest.raises(cryptodev.CryptodevError, match=r"7-byte key.*EINVAL"):
        cryptodev.open_session(device, "cbc(aes)", bytes(7))
    with cryptodev.open_session(device, "cbc(aes)", NIST_KEY) as session:
        assert isinstance(session, cryptodev.CipherSession)
        with pytest.raises(cryptodev.CryptodevError, match=r"whole cipher blocks.*EINVAL"):
            session.encrypt(bytes(15), NIST_IV)
    with pytest.raises(cryptodev.CryptodevError, match="no id for chacha20"):
        cryptodev.open_session(device, "chacha20", bytes(32))


def test_the_engine_measures_every_cbc_aes_driver_with_its_evidence(
    device: cryptodev.CryptoDevice, reranker: Reranker
) -> None:
    engine = CryptodevEngine(reranker)
    timing = Timing(time.perf_counter, CpuMeter())
    for driver in (AESNI, VIRTIO, GENERIC):
        target = Target("cbc(aes)", driver, "skcipher", 128, 0, registered=driver != GENERIC)
        bound = engine.open(target, timing)
        try:
            assert bound.evidence.driver == driver
            assert f"CIOCGSESSINFO of a /dev/crypto cbc(aes) session names {driver}" in (
                bound.evidence.how
            )
            bound.warm_up("encrypt", 4096, 0.05)
            sample = bound.sample("encrypt", 4096, 0.1)
            assert sample.operations > 0 and sample.bytes_per_second > 0
        finally:
            bound.close()
