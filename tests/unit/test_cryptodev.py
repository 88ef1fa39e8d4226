# SPDX-License-Identifier: MIT
"""The /dev/crypto client without a kernel: interface numbers, layouts, encoding, errors.

The numbers are the ones checked on the QEMU board (../shared/third_party/README.md); the
sessions are exercised against a fake device that answers the ioctls as cryptodev does.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.kernel import cryptodev
from pytest_hwcrypto.kernel.cryptodev import abi, sessions
from pytest_hwcrypto.kernel.cryptodev.device import Buffer
from pytest_hwcrypto.vocabulary import AlgType, Op

x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="the values are x86-64's")


@x86_64
def test_ioctl_numbers_are_those_the_module_answers_on_the_qemu_board() -> None:
    assert abi.CIOCGSESSION == 0xC0306366
    assert abi.CIOCFSESSION == 0x40046367
    assert abi.CIOCCRYPT == 0xC0306368
    assert abi.CIOCGSESSINFO == 0xC10C636B


@x86_64
def test_struct_sizes_match_the_module() -> None:
    assert ctypes.sizeof(abi.SessionOp) == 48
    assert ctypes.sizeof(abi.CryptOp) == 48
    assert ctypes.sizeof(abi.SessionInfoOp) == 268
    # crypt_auth_op: five 32-bit fields, four pointers, tag_len, iv, iv_len, padded to 8.
    assert ctypes.sizeof(abi.CryptAuthOp) == 72
    assert abi.CIOCAUTHCRYPT == abi.iowr("c", 109, 72) == 0xC048636D


def test_ioc_arithmetic() -> None:
    assert abi.iowr("c", 102, 48) == (3 << 30) | (48 << 16) | (ord("c") << 8) | 102
    assert abi.iow("c", 103, 4) >> 30 == abi.IOC_WRITE
    with pytest.raises(ValueError, match="does not fit"):
        abi.ioc(abi.IOC_READ, "c", 1, 1 << 14)


def test_algorithm_ids_come_from_the_header() -> None:
    table = {name: (alg.ident, alg.kind) for name, alg in abi.ALGORITHMS.items()}
    assert table["cbc(aes)"] == (11, AlgType.SKCIPHER)
    assert table["ecb(aes)"] == (23, AlgType.SKCIPHER)
    assert table["ctr(aes)"] == (21, AlgType.SKCIPHER)
    assert table["xts(aes)"] == (22, AlgType.SKCIPHER)
    assert table["gcm(aes)"] == (50, AlgType.AEAD)
    assert table["sha1"] == (14, AlgType.HASH)
    assert table["sha256"] == (104, AlgType.HASH)
    assert table["hmac(sha256)"] == (18, AlgType.HASH)
    assert table["hmac(sha224)"] == (107, AlgType.HASH)
    assert abi.algorithm("chacha20") is None
    assert abi.ALGORITHMS["xts(aes)"].block_size == 16  # no ciphertext stealing
    assert abi.ALGORITHMS["ctr(aes)"].block_size == 1


def test_a_cipher_goes_into_cipher_a_hash_into_mac() -> None:
    cipher = abi.session_request(abi.ALGORITHMS["cbc(aes)"], 0x1000, 16)
    assert (cipher.cipher, cipher.mac, cipher.key, cipher.keylen) == (11, 0, 0x1000, 16)
    mac = abi.session_request(abi.ALGORITHMS["hmac(sha256)"], 0x2000, 100)
    assert (mac.cipher, mac.mac, mac.mackey, mac.mackeylen) == (0, 18, 0x2000, 100)
    plain = abi.session_request(abi.ALGORITHMS["sha256"], None, 0)
    assert (plain.mac, plain.mackey, plain.mackeylen) == (104, None, 0)


def test_session_info_is_decoded_from_the_right_half() -> None:
    info = abi.SessionInfoOp(ses=5, alignmask=15, flags=abi.SIOP_FLAG_KERNEL_DRIVER_ONLY)
    info.cipher_info.cra_name = b"cbc(aes)"
    info.cipher_info.cra_driver_name = b"virtio_crypto_aes_cbc"
    info.hash_info.cra_driver_name = b"sha256-avx2"
    decoded = abi.decode_session_info(info, abi.ALGORITHMS["cbc(aes)"])
    assert decoded == abi.SessionInfo("cbc(aes)", "virtio_crypto_aes_cbc", 15, 1)
    assert decoded.kernel_driver_only
    assert abi.decode_session_info(info, abi.ALGORITHMS["sha256"]).driver == "sha256-avx2"
    assert abi.decode_name(b"abc\0junk") == "abc"


def test_buffers_are_aligned_then_misaligned_as_asked() -> None:
    for misalign in (0, 3, 15):
        buffer = Buffer(10, b"0123456789", misalign)
        assert buffer.address % cryptodev.device.ALIGNMENT == misalign
        assert buffer.read() == b"0123456789"


def test_unavailable_says_why_and_how(tmp_path: Path) -> None:
    missing = cryptodev.unavailable_reason(tmp_path / "crypto")
    assert missing is not None and "is missing" in missing and "--hwcrypto-cryptodev" in missing
    plain = tmp_path / "file"
    plain.write_text("")
    reason = cryptodev.unavailable_reason(plain)
    assert reason is not None and "not a character device" in reason
    with pytest.raises(cryptodev.CryptodevError, match="is missing") as error:
        cryptodev.CryptoDevice(tmp_path / "crypto")
    assert error.value.errno == errno.ENOENT


def test_authentication_failure_is_told_apart() -> None:
    assert cryptodev.CryptodevError("x", errno.EBADMSG).authentication_failed
    assert not cryptodev.CryptodevError("x", errno.EINVAL).authentication_failed


# --- sessions against a fake device -----------------------------------------------------------


class FakeDevice(cryptodev.CryptoDevice):
    """Answers CIOCGSESSION and CIOCGSESSINFO like cryptodev: the winner serves the name."""

    def __init__(self, winner: str = "cbc-aes-aesni") -> None:
        self.fd = 99
        self.timeout = 1.0
        self.winner = winner
        self.next_ses = 1
        self.finished: list[int] = []
        self.refuse: int | None = None

    def ioctl(self, request: int, argument: Any, what: str, explain: Any = None) -> None:
        if request == abi.CIOCGSESSION:
            if self.refuse is not None:
                detail = explain(self.refuse) if explain else None
                raise cryptodev.CryptodevError(f"{what}: {detail}", self.refuse)
            argument.ses = self.next_ses
            self.next_ses += 1
        elif request == abi.CIOCGSESSINFO:
            argument.cipher_info.cra_name = b"cbc(aes)"
            argument.cipher_info.cra_driver_name = self.winner.encode()

    def finish_session(self, ses: int) -> None:
        self.finished.append(ses)


@contextmanager
def preferring(device: FakeDevice, driver: str) -> Iterator[None]:
    before, device.winner = device.winner, driver
    try:
        yield
    finally:
        device.winner = before


def test_open_on_driver_checks_the_driver_that_serves() -> None:
    device = FakeDevice()
    session = cryptodev.open_on_driver(
        device, "cbc(aes)", bytes(16), "virtio_crypto_aes_cbc", lambda d: preferring(device, d)
    )
    assert session.driver == "virtio_crypto_aes_cbc"
    assert device.winner == "cbc-aes-aesni", "the preference ended once the session was open"
    assert isinstance(session, cryptodev.CipherSession)


def test_a_mismatch_names_both_drivers_and_ends_the_session() -> None:
    device = FakeDevice()
    with pytest.raises(cryptodev.CryptodevError) as error:
        cryptodev.open_on_driver(device, "cbc(aes)", bytes(16), "virtio_crypto_aes_cbc")
    assert "asked /dev/crypto for virtio_crypto_aes_cbc" in str(error.value)
    assert "served by cbc-aes-aesni" in str(error.value)
    assert "no re-ranking" in str(error.value)
    assert device.finished == [1]


def test_many_keys_open_in_one_window_and_keep_their_errors() -> None:
    device = FakeDevice()
    windows: list[str] = []

    @contextmanager
    def prefer(driver: str) -> Iterator[None]:
        windows.append(driver)
        with preferring(device, driver):
            yield

    opened = cryptodev.open_many_on_driver(
        device, "cbc(aes)", [bytes(16), bytes(65)], "cbc(aes-generic)", prefer
    )
    assert windows == ["cbc(aes-generic)"]
    assert isinstance(opened[0], cryptodev.Session) and opened[0].driver == "cbc(aes-generic)"
    assert isinstance(opened[1], cryptodev.CryptodevError) and "65-byte key" in str(opened[1])


def test_refusals_say_why() -> None:
    device = FakeDevice()
    with pytest.raises(cryptodev.CryptodevError, match="no id for chacha20"):
        cryptodev.open_session(device, "chacha20", bytes(32))
    with pytest.raises(cryptodev.CryptodevError, match="unkeyed hash"):
        cryptodev.open_session(device, "sha256", b"key")
    device.refuse = errno.EINVAL
    with pytest.raises(cryptodev.CryptodevError, match="key length is wrong") as error:
        cryptodev.open_session(device, "cbc(aes)", bytes(7))
    assert error.value.errno == errno.EINVAL


def test_the_pool_opens_a_drivers_keys_together_and_one_subject_at_a_time() -> None:
    calls: list[tuple[str, str | None, tuple[bytes, ...]]] = []
    device = FakeDevice()

    def by_name(name: str, key: bytes) -> cryptodev.Session:
        calls.append((name, None, (key,)))
        return cryptodev.open_session(device, name, key)

    def on_driver(
        name: str, driver: str, keys: list[bytes] | tuple[bytes, ...]
    ) -> list[cryptodev.Session | cryptodev.CryptodevError]:
        calls.append((name, driver, tuple(keys)))
        with preferring(device, driver):
            return [cryptodev.open_session(device, name, key) for key in keys]

    pool = cryptodev.SessionPool(by_name, on_driver)
    generic = cryptodev.Subject("cbc(aes)", "cbc(aes-generic)", 16)
    keys = [bytes([n]) * 16 for n in range(3)]
    first = pool.get(generic, keys[0], keys)
    assert first.driver == "cbc(aes-generic)"
    assert pool.get(generic, keys[2], keys).driver == "cbc(aes-generic)"
    assert calls == [("cbc(aes)", "cbc(aes-generic)", tuple(keys))], "one window for all keys"
    by_name_subject = cryptodev.Subject("cbc(aes)")
    assert pool.get(by_name_subject, keys[0]).driver == "cbc-aes-aesni"
    assert sorted(device.finished) == [1, 2, 3], "the previous subject's sessions were ended"
    assert generic.id == "cbc(aes)@cbc(aes-generic)" and by_name_subject.id == "cbc(aes)"


def test_the_pool_opens_at_most_max_open_sessions_at_once() -> None:
    device = FakeDevice()
    windows: list[int] = []

    def on_driver(
        name: str, driver: str, keys: list[bytes] | tuple[bytes, ...]
    ) -> list[cryptodev.Session | cryptodev.CryptodevError]:
        windows.append(len(keys))
        with preferring(device, driver):
            return [cryptodev.open_session(device, name, key) for key in keys]

    pool = cryptodev.SessionPool(lambda name, key: None, on_driver, max_open=4)  # type: ignore[arg-type, return-value]
    subject = cryptodev.Subject("cbc(aes)", "virtio_crypto_aes_cbc", 16)
    keys = [bytes([n]) * 16 for n in range(10)]
    for key in keys:
        assert pool.get(subject, key, keys).driver == "virtio_crypto_aes_cbc"
    assert windows == [4, 4, 2]
    assert len(device.finished) == 8, "each full window was ended before the next"


def test_the_reranking_lock_excludes_and_runs_unlocked_where_it_cannot_be_taken(
    tmp_path: Path,
) -> None:
    import fcntl

    from pytest_hwcrypto.kernel.rerank import LOCK_NAME, reranking_lock

    with (
        reranking_lock(tmp_path),
        open(tmp_path / LOCK_NAME) as other,
        pytest.raises(BlockingIOError),
    ):
        fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with reranking_lock(blocked / "state"):  # cannot be a directory: no lock, no error
        pass


def test_a_request_checked_against_its_own_output_names_a_driver_that_mixed_them_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Request.run(count, expected): a driver writing another request's result into this
    one's output (the third of five here) is caught at that request, naming the driver;
    the same outputs every time pass."""
    device = FakeDevice("cbc-aes-hwcrypto-test-async")
    session = cryptodev.open_session(device, "cbc(aes)", bytes(16))
    assert isinstance(session, cryptodev.CipherSession)
    calls = [0]
    wrong_at: list[int] = []

    def answer(fd: int, request: int, argument: Any) -> int:
        # the "driver": output = input xor 0x5a, or (once) another request's output
        calls[0] += 1
        data = ctypes.string_at(argument.src, argument.len)
        out = bytes(b ^ 0x5A for b in data)
        if calls[0] in wrong_at:
            out = bytes(b ^ 0x01 for b in out)
        ctypes.memmove(argument.dst, out, len(out))
        return 0

    monkeypatch.setattr(sessions.fcntl, "ioctl", answer)
    request = session.request(Op.ENCRYPT, bytes(range(64)), bytes(16))
    request.run(1)
    expected = request.output()
    assert expected == bytes(b ^ 0x5A for b in range(64))
    request.run(5, expected)  # every output its own: no error
    wrong_at.append(calls[0] + 3)
    with pytest.raises(cryptodev.CryptodevError) as error:
        request.run(5, expected)
    message = str(error.value)
    assert "cbc-aes-hwcrypto-test-async" in message
    assert "mixed up requests in flight" in message and "differs from byte 0" in message
    assert calls[0] == wrong_at[0], "it stopped at the request that was wrong"
