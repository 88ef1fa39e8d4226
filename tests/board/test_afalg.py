# SPDX-License-Identifier: MIT
"""The AF_ALG engine against a real kernel: binding, driver identity, results, errors.

Every driver registered for an AES mode is bound by its exact name and must agree with
OpenSSL (pyca ``cryptography``) and with the other drivers. Runs inside a virtual board
(``hwcrypto vm uml -- tests/board/test_afalg.py``) or on a real board; skipped where the
kernel has no AF_ALG.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.afalg.wire import recv_once
from pytest_hwcrypto.kernel.inventory import can_win, type_family
from pytest_hwcrypto.kernel.procfs import CryptoAlg, read_proc_crypto

_AVAILABLE, _WHY = afalg.afalg_available(afalg.SKCIPHER)
pytestmark = [pytest.mark.board, pytest.mark.skipif(not _AVAILABLE, reason=_WHY)]

MODES = ("ecb(aes)", "cbc(aes)", "ctr(aes)", "xts(aes)")
# Lengths that make each mode work for its living: odd tails for the stream and
# ciphertext-stealing modes, several pages for all.
LENGTHS = {"ecb(aes)": 4096, "cbc(aes)": 4096 + 16, "ctr(aes)": 4099, "xts(aes)": 4100}
# The generic C ciphers every board has (aes-fixed-time is the aes_ti module).
SOFTWARE_AES = ("aes-generic", "aes-fixed-time")


def _key_sizes(mode: str) -> tuple[int, ...]:
    return (32, 64) if mode == "xts(aes)" else (16, 32)


def _mode_object(mode: str, iv: bytes) -> modes.Mode:
    if mode == "ecb(aes)":
        return modes.ECB()
    factories: dict[str, Callable[[bytes], modes.Mode]] = {
        "cbc(aes)": modes.CBC,
        "ctr(aes)": modes.CTR,
        "xts(aes)": modes.XTS,
    }
    return factories[mode](iv)


def _reference(mode: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    cipher: Cipher[Any] = Cipher(algorithms.AES(key), _mode_object(mode, iv))
    encryptor = cipher.encryptor()
    return bytes(encryptor.update(data) + encryptor.finalize())


def _iv(mode: str) -> bytes | None:
    return None if mode == "ecb(aes)" else bytes(range(16, 32))


def _skcipher_drivers(name: str) -> list[CryptoAlg]:
    return [
        alg
        for alg in read_proc_crypto()
        if alg.name == name and type_family(alg.type) == afalg.SKCIPHER and not alg.is_internal
    ]


def _instantiate(mode: str) -> None:
    """Make the kernel build ``mode`` over every AES cipher it has, then forget the sessions.

    Template instances exist only once someone asked for them: the name alone gives the
    winner's instance; ``cbc(aes-generic)`` / ``xts(ecb(aes-generic))`` give the others.
    Names that do not round-trip raise DriverNotRegistered but still instantiate.
    """
    template = mode.split("(")[0]
    listed = [
        alg.driver for alg in read_proc_crypto() if alg.name == "aes" and alg.type == "cipher"
    ]
    ciphers = sorted(set(listed) | set(SOFTWARE_AES))
    # Only xts (like lrw) wraps an ecb skcipher; the other templates take the cipher itself.
    wrapped = [f"{template}(ecb({c}))" for c in ciphers] if template == "xts" else []
    for name in [mode] + [f"{template}({c})" for c in ciphers] + wrapped:
        with contextlib.suppress(afalg.AfAlgError):
            afalg.open_skcipher(name, bytes(_key_sizes(mode)[0])).close()


@pytest.fixture(scope="module")
def mode_drivers() -> dict[str, list[str]]:
    """Every non-internal skcipher driver of each AES mode, after instantiating them all."""
    drivers = {}
    for mode in MODES:
        _instantiate(mode)
        # dict.fromkeys: the kernel may list one driver name twice (duplicate instances).
        drivers[mode] = list(dict.fromkeys(alg.driver for alg in _skcipher_drivers(mode)))
    return drivers


def _driver_cases() -> Iterator[tuple[str, int]]:
    for mode in MODES:
        for key_size in _key_sizes(mode):
            yield mode, key_size


# --- availability ------------------------------------------------------------------------------


@pytest.mark.parametrize("alg_type", afalg.ALG_TYPES)
def test_every_afalg_type_is_available(alg_type: str) -> None:
    available, why = afalg.afalg_available(alg_type)
    assert available, why


# --- driver identity ---------------------------------------------------------------------------


def test_both_software_aes_ciphers_are_instantiated(
    mode_drivers: dict[str, list[str]], board_kind: str
) -> None:
    if board_kind != "uml":
        pytest.skip("the UML board's known driver set")
    assert {"cbc(aes-generic)", "cbc(aes-fixed-time)"} <= set(mode_drivers["cbc(aes)"])
    assert {"ecb(aes-generic)", "ecb(aes-fixed-time)"} <= set(mode_drivers["ecb(aes)"])
    assert {"ctr(aes-generic)", "ctr(aes-fixed-time)"} <= set(mode_drivers["ctr(aes)"])
    assert {"xts(ecb(aes-generic))", "xts(ecb(aes-fixed-time))"} <= set(mode_drivers["xts(aes)"])


@pytest.mark.parametrize("mode", MODES)
def test_binding_by_name_reports_the_highest_priority_driver(
    mode: str, mode_drivers: dict[str, list[str]]
) -> None:
    with afalg.open_skcipher(mode, bytes(_key_sizes(mode)[0])) as session:
        registered = [alg for alg in _skcipher_drivers(mode) if can_win(alg)]
        best = max(alg.priority or 0 for alg in registered)
        assert session.driver in {alg.driver for alg in registered if alg.priority == best}
        # The kernel took a reference on exactly one driver of that name: that is evidence.
        assert session.driver_evidence == "refcnt"


def test_qemu_aesni_wins_cbc_aes(board_kind: str) -> None:
    if board_kind != "qemu":
        pytest.skip("QEMU board (-cpu max has AES-NI)")
    with afalg.open_skcipher("cbc(aes)", bytes(16)) as session:
        assert session.driver == "cbc-aes-aesni"


@pytest.mark.parametrize("mode", MODES)
def test_binding_an_exact_driver_binds_that_driver(
    mode: str, mode_drivers: dict[str, list[str]]
) -> None:
    for driver in mode_drivers[mode]:
        with _open_or_skip_masked(driver, bytes(_key_sizes(mode)[0])) as session:
            assert session.driver == driver
            assert session.driver_evidence in ("refcnt", "exact")


def test_session_releases_the_kernel_transform_on_close() -> None:
    driver = "cbc(aes-generic)"

    def refcnt() -> int | None:
        return next(a.refcnt for a in read_proc_crypto() if a.driver == driver)

    afalg.open_skcipher(driver, bytes(16)).close()  # make sure the instance exists
    before = refcnt()
    with afalg.open_skcipher(driver, bytes(16)) as session:
        session.encrypt(bytes(16), bytes(16))
        assert refcnt() == (before or 0) + 1
    assert session.closed
    assert refcnt() == before


# --- results -----------------------------------------------------------------------------------


def _open_or_skip_masked(driver: str, key: bytes) -> afalg.SkcipherSession:
    try:
        return afalg.open_skcipher(driver, key)
    except afalg.AfAlgMasked as masked:
        pytest.skip(str(masked))


@pytest.mark.parametrize(("mode", "key_size"), list(_driver_cases()))
def test_every_driver_matches_openssl(
    mode: str, key_size: int, mode_drivers: dict[str, list[str]]
) -> None:
    key, iv = os.urandom(key_size), _iv(mode)
    data = os.urandom(LENGTHS[mode])
    expected = _reference(mode, key, iv or b"", data)
    assert len(mode_drivers[mode]) >= 1
    results = {}
    for driver in mode_drivers[mode]:
        with _open_or_skip_masked(driver, key) as session:
            results[driver] = session.encrypt(data, iv)
    wrong = [driver for driver, got in results.items() if got != expected]
    assert not wrong, f"{mode} {key_size * 8}-bit: {wrong} differ from OpenSSL"


@pytest.mark.parametrize("mode", MODES)
def test_decrypt_inverts_encrypt_on_every_driver(
    mode: str, mode_drivers: dict[str, list[str]]
) -> None:
    key, iv = os.urandom(_key_sizes(mode)[-1]), _iv(mode)
    data = os.urandom(LENGTHS[mode])
    for driver in mode_drivers[mode]:
        with _open_or_skip_masked(driver, key) as session:
            ciphertext = session.encrypt(data, iv)
            assert ciphertext != data
            assert session.decrypt(ciphertext, iv) == data, driver


@pytest.mark.parametrize("mode", MODES)
def test_chunked_submission_equals_one_shot(mode: str, mode_drivers: dict[str, list[str]]) -> None:
    key, iv = os.urandom(_key_sizes(mode)[0]), _iv(mode)
    data = os.urandom(LENGTHS[mode])
    # Odd pieces that straddle block boundaries, then the rest as the final send.
    chunks = [1, 15, 17, 1000, 2048]
    for driver in mode_drivers[mode]:
        with _open_or_skip_masked(driver, key) as session:
            one_shot = session.encrypt(data, iv)
            assert session.encrypt(data, iv, chunks=chunks) == one_shot, driver
            assert session.decrypt(one_shot, iv, chunks=chunks) == data, driver


def test_chunks_ending_with_an_empty_final_send() -> None:
    key, iv, data = os.urandom(16), bytes(16), os.urandom(64)
    with afalg.open_skcipher("cbc(aes)", key) as session:
        assert session.encrypt(data, iv, chunks=[32, 32]) == _reference("cbc(aes)", key, iv, data)


@pytest.mark.parametrize("mode", ["cbc(aes)", "xts(aes)", "ctr(aes)"])
def test_request_larger_than_the_default_socket_buffer(mode: str) -> None:
    """512 KiB is more than twice the default 208 KiB send buffer: buffers must be raised."""
    key, iv = os.urandom(_key_sizes(mode)[0]), _iv(mode) or b""
    data = os.urandom(512 * 1024)
    with afalg.open_skcipher(mode, key) as session:
        assert session.encrypt(data, iv) == _reference(mode, key, iv, data)


def test_request_beyond_what_the_socket_can_hold_fails_with_the_limit() -> None:
    """2 MiB: beyond net.core.optmem_max (ENOMEM) or beyond the buffers (EMSGSIZE)."""
    optmem = int(Path("/proc/sys/net/core/optmem_max").read_text())
    if optmem > 20480:
        pytest.skip(f"net.core.optmem_max is {optmem}: 2 MiB may fit")
    with (
        afalg.open_skcipher("xts(aes)", bytes(range(32))) as session,
        pytest.raises(
            afalg.OperationFailed, match=r"(ENOMEM|EMSGSIZE): 2097152 bytes .*optmem_max = 20480"
        ),
    ):
        session.encrypt(bytes(2 << 20), bytes(16))


def test_timing_loops_run_and_leave_the_session_usable() -> None:
    key, iv = os.urandom(16), bytes(16)
    data = os.urandom(4096)
    ciphertext = _reference("cbc(aes)", key, iv, data)
    with afalg.open_skcipher("cbc(aes)", key) as session:
        # The loop's prebuilt control messages must carry the op and IV it was given.
        assert session.crypt_loop(data, iv, afalg.ENCRYPT, 50) == ciphertext
        assert session.crypt_loop(ciphertext[:16], iv, afalg.DECRYPT, 50) == data[:16]
        session.crypt_loop(os.urandom(300_000), iv, afalg.ENCRYPT, 3)
        assert session.encrypt(data, iv) == ciphertext
    with afalg.open_skcipher("ecb(aes)", key) as session:
        assert session.crypt_loop(data, None, afalg.ENCRYPT, 10) == _reference(
            "ecb(aes)", key, b"", data
        )
    with afalg.open_hash("sha256") as digest:
        digest.digest_loop(data, 50)
        assert digest.digest(data) == hashlib.sha256(data).digest()


# --- hash, aead, rng ---------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["sha256", "sha256-generic"])
def test_sha256_matches_hashlib(alg: str) -> None:
    data = os.urandom(10_000)
    with afalg.open_hash(alg) as session:
        winner = max(
            (
                a
                for a in read_proc_crypto()
                if a.name == "sha256" and can_win(a) and type_family(a.type) == afalg.HASH
            ),
            key=lambda a: a.priority or 0,
        )
        assert session.driver == (alg if alg.endswith("-generic") else winner.driver)
        assert session.digest(data) == hashlib.sha256(data).digest()
        assert session.digest(data, chunks=[1, 63, 64, 5000]) == hashlib.sha256(data).digest()
        assert session.digest(b"") == hashlib.sha256(b"").digest()
        assert session.digest_size == 32


def test_hmac_sha256_matches_python_hmac() -> None:
    key, data = os.urandom(40), os.urandom(3000)
    expected = hmac.new(key, data, hashlib.sha256).digest()
    with afalg.open_hash("hmac(sha256)", key) as session:
        assert session.digest(data) == expected
        assert session.digest(data, chunks=[100, 100]) == expected


def test_hmac_without_a_key_says_it_needs_one() -> None:
    with (
        afalg.open_hash("hmac(sha256)") as session,
        pytest.raises(afalg.OperationFailed, match="needs a key"),
    ):
        session.digest(b"data")


@pytest.fixture
def gcm() -> Iterator[tuple[afalg.AeadSession, bytes]]:
    if not afalg.afalg_available(afalg.AEAD)[0]:
        pytest.skip(afalg.afalg_available(afalg.AEAD)[1])
    key = os.urandom(16)
    with afalg.open_aead("gcm(aes)", key, authsize=16) as session:
        yield session, key


def test_gcm_matches_openssl_and_round_trips(gcm: tuple[afalg.AeadSession, bytes]) -> None:
    session, key = gcm
    iv, aad, plaintext = os.urandom(12), os.urandom(20), os.urandom(1000)
    sealed = session.encrypt(plaintext, iv, aad)
    assert sealed == AESGCM(key).encrypt(iv, plaintext, aad)
    assert session.decrypt(sealed, iv, aad) == plaintext
    assert session.decrypt(session.encrypt(b"", iv), iv) == b""


@pytest.mark.parametrize("flip", ["tag", "ciphertext", "aad"])
def test_gcm_tampering_raises_authentication_failed(
    gcm: tuple[afalg.AeadSession, bytes], flip: str
) -> None:
    session, _ = gcm
    iv, aad = os.urandom(12), bytearray(os.urandom(20))
    sealed = bytearray(session.encrypt(os.urandom(100), iv, bytes(aad)))
    target = {"tag": (sealed, -1), "ciphertext": (sealed, 0), "aad": (aad, 3)}[flip]
    target[0][target[1]] ^= 0x01
    with pytest.raises(afalg.AuthenticationFailed, match="EBADMSG"):
        session.decrypt(bytes(sealed), iv, bytes(aad))


def test_gcm_rejects_an_impossible_tag_length() -> None:
    with pytest.raises(afalg.BadAuthSize, match="tag length 17"):
        afalg.open_aead("gcm(aes)", bytes(16), authsize=17)


def test_stdrng_gives_the_requested_bytes() -> None:
    if not afalg.afalg_available(afalg.RNG)[0]:
        pytest.skip(afalg.afalg_available(afalg.RNG)[1])
    with afalg.open_rng("stdrng") as session:
        first, second = session.generate(1000), session.generate(1000)
        assert session.driver and session.driver.startswith("drbg_")
    assert len(first) == len(second) == 1000
    assert first != second
    assert len(set(first)) > 200  # 1000 random bytes take ~630 distinct values


def test_seeded_ansi_cprng_is_deterministic() -> None:
    if not any(alg.driver == "ansi_cprng" for alg in read_proc_crypto()):
        pytest.skip("ansi_cprng is not registered")
    seed = os.urandom(48)
    with afalg.open_rng("ansi_cprng", seed) as one, afalg.open_rng("ansi_cprng", seed) as two:
        assert one.generate(300) == two.generate(300)
    with pytest.raises(afalg.BadKeyLength, match="seedsize"):
        afalg.open_rng("ansi_cprng")


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["no-such-driver", "cbc(aes-nonexistent)"])
def test_absent_driver_is_not_registered(name: str) -> None:
    with pytest.raises(
        afalg.DriverNotRegistered, match=re.escape(f"driver {name} is not registered")
    ):
        afalg.open_skcipher(name, bytes(16))


def test_bare_cipher_is_the_wrong_type() -> None:
    with pytest.raises(afalg.AlgTypeMismatch, match="cipher"):
        afalg.open_skcipher("aes", bytes(16))


@pytest.mark.parametrize(
    ("alg", "length", "message"),
    [
        ("cbc(aes)", 15, "15 bytes rejected: keysize must be 16..32 bytes"),
        ("cbc(aes-generic)", 33, "33 bytes rejected: keysize must be 16..32 bytes"),
        ("xts(aes)", 40, "40 bytes rejected although keysize is 32..64"),
    ],
)
def test_bad_key_length(alg: str, length: int, message: str) -> None:
    with pytest.raises(afalg.BadKeyLength, match=message.replace("(", r"\(")) as caught:
        afalg.open_skcipher(alg, bytes(length))
    assert caught.value.key_length == length


def test_partial_block_fails_naming_the_block_size() -> None:
    with (
        afalg.open_skcipher("cbc(aes)", bytes(16)) as session,
        pytest.raises(
            afalg.OperationFailed, match="EINVAL: 15 bytes is not a multiple of the 16-byte"
        ),
    ):
        session.encrypt(bytes(15), bytes(16))


def test_wrong_iv_length_is_named() -> None:
    with afalg.open_skcipher("cbc(aes)", bytes(16)) as session:
        with pytest.raises(afalg.OperationFailed, match="IV must be 16 bytes, got 8"):
            session.encrypt(bytes(16), bytes(8))
        # The failed request left nothing behind: the session still works.
        assert session.encrypt(bytes(16), bytes(16)) == _reference(
            "cbc(aes)", bytes(16), bytes(16), bytes(16)
        )


def test_a_result_that_never_comes_times_out_instead_of_hanging() -> None:
    """Announce more data (MSG_MORE) and wait for output the kernel cannot produce yet."""
    with afalg.open_skcipher("cbc(aes)", bytes(16), timeout=0.5) as session:

        def wait_forever(op_sock: socket.socket, deadline: float) -> int:
            op_sock.sendmsg_afalg(
                [bytes(8)], op=socket.ALG_OP_ENCRYPT, iv=bytes(16), flags=socket.MSG_MORE
            )
            return recv_once(op_sock, deadline, memoryview(bytearray(16)))

        with pytest.raises(afalg.OperationTimeout, match=r"within 0\.5 s"):
            session._run_op("encrypt", wait_forever)
        # The worker finished by itself, so the session is still usable.
        assert len(session.encrypt(bytes(16), bytes(16))) == 16


def test_forged_tag_only_message_is_rejected() -> None:
    """No AAD and no ciphertext: the request must still run and the tag be checked."""
    key, iv = bytes(16), bytes(12)
    with afalg.open_aead("gcm(aes)", key, authsize=16) as session:
        sealed = session.encrypt(b"", iv)
        assert len(sealed) == 16
        assert session.decrypt(sealed, iv) == b""
        forged = bytes([sealed[0] ^ 1]) + sealed[1:]
        with pytest.raises(afalg.AuthenticationFailed):
            session.decrypt(forged, iv)
