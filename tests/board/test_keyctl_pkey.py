# SPDX-License-Identifier: MIT
"""Public-key operations through keyctl pkey_* against a real kernel: an RSA key loaded as
an asymmetric key (PKCS#8 private key), signed and verified by the kernel and checked with
OpenSSL (pyca), encrypted and decrypted; which driver served, from the template instance
the operation left in /proc/crypto; operations per second.

Needs a kernel with CONFIG_ASYMMETRIC_KEY_TYPE and pkcs8_key_parser: the QEMU board
(`pytest --hwcrypto-vm=qemu tests/board/test_keyctl_pkey.py -s`); UML's Debian kernel has
no asymmetric keys and skips. On the QEMU board (Debian 6.1.0-57-amd64, TCG) this file with
tests/board/test_rng_engine.py: 11 passed, 1 skipped in 331 s inside the board, 704 s with a
144 s boot, the host at load 19-21 with four other boards running (2026-12-07); RSA 2048
sign 6.5 op/s, verify 203 op/s; RSA 4096 sign 1.2 op/s, verify 85 op/s (rsa-generic).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pytest_hwcrypto.kernel import keyctl
from pytest_hwcrypto.kernel.procfs import read_proc_crypto

INFO = "enc=pkcs1 hash=sha256"


@pytest.fixture(scope="module", params=[2048, 4096], ids=lambda bits: f"rsa{bits}")
def rsa_key(request: pytest.FixtureRequest) -> Iterator[tuple[int, rsa.RSAPrivateKey]]:
    with ExitStack() as stack:  # a key that fails to load skips; unlinked after
        try:
            loaded = stack.enter_context(
                keyctl.loaded_rsa_key(request.param, f"hwcrypto-test-rsa{request.param}")
            )
        except keyctl.KeyctlError as error:
            pytest.skip(f"no asymmetric PKCS#8 keys here: {error}")
        yield loaded


def test_query_says_what_the_key_does(rsa_key: tuple[int, rsa.RSAPrivateKey]) -> None:
    key, private = rsa_key
    info = keyctl.query(key, INFO)
    assert info.key_bits == private.key_size
    for op in (keyctl.SUPPORTS_SIGN, keyctl.SUPPORTS_VERIFY):
        assert info.supports(op)


def test_kernel_signature_verifies_with_openssl_and_back(
    rsa_key: tuple[int, rsa.RSAPrivateKey],
) -> None:
    key, private = rsa_key
    digest = hashlib.sha256(b"hwcrypto").digest()
    before = {a.driver for a in read_proc_crypto()}
    signature = keyctl.sign(key, INFO, digest, private.key_size // 8)
    private.public_key().verify(
        signature, b"hwcrypto", padding.PKCS1v15(), hashes.SHA256()
    )  # raises on a wrong signature
    theirs = private.sign(b"hwcrypto", padding.PKCS1v15(), hashes.SHA256())
    assert keyctl.verify(key, INFO, digest, theirs)
    assert not keyctl.verify(key, INFO, hashlib.sha256(b"other").digest(), theirs)
    rsa_drivers = [a for a in read_proc_crypto() if "rsa" in a.driver]
    served = sorted({a.driver for a in rsa_drivers} - before) or sorted(
        a.driver for a in rsa_drivers if a.name.startswith("pkcs1")
    )
    print(f"\nrsa{private.key_size}: instances after the first signature: {served}")
    print("rsa drivers: " + ", ".join(f"{a.driver} ({a.selftest})" for a in rsa_drivers))


def test_encrypt_then_decrypt(rsa_key: tuple[int, rsa.RSAPrivateKey]) -> None:
    key, private = rsa_key
    size = private.key_size // 8
    secret = b"sixteen byte key"
    sealed = keyctl.encrypt(key, "enc=pkcs1", secret, size)
    assert private.decrypt(sealed, padding.PKCS1v15()) == secret
    assert keyctl.decrypt(key, "enc=pkcs1", sealed, size) == secret


def test_operations_per_second(rsa_key: tuple[int, rsa.RSAPrivateKey]) -> None:
    key, private = rsa_key
    digest = hashlib.sha256(b"rate").digest()
    size = private.key_size // 8
    signature = keyctl.sign(key, INFO, digest, size)
    for name, call in (
        ("sign", lambda: keyctl.sign(key, INFO, digest, size)),
        ("verify", lambda: keyctl.verify(key, INFO, digest, signature)),
    ):
        count, began = 0, time.perf_counter()
        while time.perf_counter() - began < 1.0:
            call()
            count += 1
        rate = count / (time.perf_counter() - began)
        print(f"\nrsa{private.key_size} {name}: {rate:.1f} ops/s ({count} in ~1 s)")
        assert rate > 0
