# SPDX-License-Identifier: MIT
"""pkey suite: public-key offload as user space reaches it, keyctl pkey_* on asymmetric keys.

AF_ALG has no akcipher type; the kernel's rsa drivers serve user space only through the keys
subsystem (kernel/keyctl.py). So:

* correctness per driver is the kernel's own self-test (/proc/crypto's selftest, the log's
  failure line): each registered rsa/ecdsa/ecdh/dh driver is a case, failed when its
  self-test did not pass (a profile's `[[waive]] check = "selftest"` skips it);
* the path users have is checked end to end: an RSA key of each size loaded as a PKCS#8
  asymmetric key, signed (PKCS#1 v1.5, SHA-256) and verified by the kernel, each checked
  against OpenSSL (pyca), encrypted and decrypted; the driver that served is named from the
  padding instance /proc/crypto gained (measure/pkey.py);
* operations per second (op/s) by key size for sign and verify, as measurements with
  `unit = "op/s"`;
* hardware against software: where a hardware rsa driver passed its self-test beside
  rsa-generic, each is made the winner in turn (crypto_user re-ranking) and measured, and
  `hw-loses-to-sw` judges them. A driver whose self-test failed (virtio-crypto-rsa on the
  QEMU board's 6.1 and 7.3) is never handed out by the kernel, re-ranked or not: that is
  said, not measured.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import keyctl
from pytest_hwcrypto.kernel.facts import KernelFacts
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Preference
from pytest_hwcrypto.measure.pkey import inner_driver, measure_operations, served_driver
from pytest_hwcrypto.model.results import Measurement, inventory_items
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.verdict import inventory_checks
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings

pytestmark = pytest.mark.hwcrypto_pkey

PUBLIC_KEY_TYPES = ("akcipher", "sig", "kpp")
KEY_SIZES = (2048, 4096)
INFO = "enc=pkcs1 hash=sha256"
ALGORITHM = "pkcs1pad(rsa,sha256)"
# Per op and key size: samples x seconds; small, since a 4096-bit signature takes ~50 ms
# under QEMU's TCG.
SAMPLES = 5
SAMPLE_SECONDS = 0.3


def public_key_entries(state: HwcryptoRun) -> list[InventoryEntry]:
    return [
        e
        for e in fixtures.inventory(state)
        if e.type in PUBLIC_KEY_TYPES and not e.alg.is_internal and state.options.chooses(e.name)
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "public_key_driver" in metafunc.fixturenames:
        entries = public_key_entries(run_of(metafunc.config))
        metafunc.parametrize(
            "public_key_driver", entries, ids=[f"{e.name}:{e.driver}" for e in entries]
        )


def test_selftest_passed(
    public_key_driver: InventoryEntry,
    hwcrypto_kernel: KernelFacts,
    hwcrypto_profile: BoardProfile | None,
) -> None:
    """The kernel's self-test is the correctness check of a public-key driver user space
    cannot choose; a failed one names the error the kernel logged."""
    verdict = inventory_checks.selftest_verdict(
        public_key_driver, hwcrypto_kernel, hwcrypto_profile
    )
    if verdict.skip:
        pytest.skip(verdict.message)
    if not verdict.passed:
        pytest.fail(verdict.message, pytrace=False)


@pytest.fixture(scope="module", params=KEY_SIZES, ids=lambda bits: f"rsa{bits}")
def rsa_key(request: pytest.FixtureRequest) -> Iterator[tuple[int, rsa.RSAPrivateKey]]:
    with ExitStack() as stack:  # a key that fails to load skips; unlinked after
        try:
            loaded = stack.enter_context(
                keyctl.loaded_rsa_key(request.param, f"hwcrypto-pkey-rsa{request.param}")
            )
        except keyctl.KeyctlError as error:
            pytest.skip(
                f"cannot load a PKCS#8 RSA key as an asymmetric key: {error} (needs "
                "CONFIG_ASYMMETRIC_KEY_TYPE and CONFIG_PKCS8_PRIVATE_KEY_PARSER, "
                "module pkcs8_key_parser)"
            )
        yield loaded


def test_sign_verify_encrypt_decrypt(
    rsa_key: tuple[int, rsa.RSAPrivateKey],
    record_property: Callable[[str, object], None],
) -> None:
    """The kernel's signature verifies with OpenSSL and OpenSSL's with the kernel; a wrong
    digest is refused; what the kernel encrypts OpenSSL decrypts and the kernel too."""
    key, private = rsa_key
    bits = private.key_size
    info = keyctl.query(key, INFO)
    assert info.key_bits == bits
    digest = hashlib.sha256(b"hwcrypto").digest()
    before = read_proc_crypto(fixtures.PROC_CRYPTO)
    signature = keyctl.sign(key, INFO, digest, bits // 8)
    driver, how = served_driver(before, read_proc_crypto(fixtures.PROC_CRYPTO))
    record_property("hwcrypto.pkey.driver", f"{driver} ({how})")
    public = private.public_key()
    public.verify(signature, b"hwcrypto", padding.PKCS1v15(), hashes.SHA256())
    theirs = private.sign(b"hwcrypto", padding.PKCS1v15(), hashes.SHA256())
    assert keyctl.verify(key, INFO, digest, theirs), f"{driver}: refused OpenSSL's signature"
    assert not keyctl.verify(key, INFO, hashlib.sha256(b"x").digest(), theirs), (
        f"{driver}: accepted a signature over another digest"
    )
    sealed = keyctl.encrypt(key, "enc=pkcs1", b"sixteen byte key", bits // 8)
    assert private.decrypt(sealed, padding.PKCS1v15()) == b"sixteen byte key"
    assert keyctl.decrypt(key, "enc=pkcs1", sealed, bits // 8) == b"sixteen byte key"


def _measure(
    key: int, bits: int, driver: str | None, how: str, hash_name: str = "sha256"
) -> list[Measurement]:
    info = f"enc=pkcs1 hash={hash_name}"
    digest = hashlib.new(hash_name, b"rate").digest()
    signature = keyctl.sign(key, info, digest, bits // 8)
    return [
        measure_operations(
            call,
            algorithm=f"pkcs1pad(rsa,{hash_name})",
            driver=driver,
            key_bits=bits,
            op=op,
            samples=SAMPLES,
            seconds=SAMPLE_SECONDS,
            evidence=how,
        )
        for op, call in (
            ("sign", lambda: keyctl.sign(key, info, digest, bits // 8)),
            ("verify", lambda: keyctl.verify(key, info, digest, signature)),
        )
    ]


def test_operations_per_second(
    rsa_key: tuple[int, rsa.RSAPrivateKey],
    hwcrypto_results: ResultsRecorder,
    record_property: Callable[[str, object], None],
) -> None:
    """Sign and verify per second through the driver the kernel hands out."""
    key, private = rsa_key
    bits = private.key_size
    before = read_proc_crypto(fixtures.PROC_CRYPTO)
    keyctl.sign(key, INFO, hashlib.sha256(b"first").digest(), bits // 8)
    driver, how = served_driver(before, read_proc_crypto(fixtures.PROC_CRYPTO))
    for measurement in _measure(key, bits, driver, how):
        hwcrypto_results.add_measurement(measurement)
        record_property(
            f"hwcrypto.pkey.rsa{bits}.{measurement.op}", f"{measurement.bytes_per_second:.1f} op/s"
        )
        assert measurement.bytes_per_second > 0


# pkcs1pad(rsa,sha256) (signatures) and pkcs1pad(rsa) (encryption: keyctl's "enc=pkcs1"
# without a hash asks the kernel for it).
PADDED = re.compile(r"^pkcs1pad\(rsa(?:,(?P<hash>\w+))?\)$")


def test_hardware_rsa_against_software(
    rsa_key: tuple[int, rsa.RSAPrivateKey],
    hwcrypto_run: HwcryptoRun,
    hwcrypto_results: ResultsRecorder,
    hwcrypto_prefer: Callable[[str], Preference],
) -> None:
    """Every padded RSA name with a hardware driver that passed its self-test: each of its
    registered drivers made the winner in turn, its output checked against OpenSSL,
    measured (sign/verify with a hash, encrypt/decrypt without), and hw-loses-to-sw where
    hardware is slower. On the QEMU board's 6.1 that is virtio-crypto's
    ``virtio-pkcs1-rsa`` (``pkcs1pad(rsa)``: PKCS#1 v1.5 encryption done by the device);
    its raw ``virtio-crypto-rsa`` failed its self-test and is never handed out."""
    key, private = rsa_key
    entries = fixtures.inventory(hwcrypto_run)
    hardware = [e for e in entries if e.is_hardware and (PADDED.match(e.name) or e.name == "rsa")]
    usable = [e for e in hardware if e.selftest in (None, "passed") and PADDED.match(e.name)]
    if not usable:
        said = "; ".join(f"{e.driver} ({e.name}): self-test {e.selftest}" for e in hardware)
        pytest.skip(
            "no hardware RSA driver that passed its self-test"
            + (
                f" ({said}: the kernel never hands out a driver whose self-test failed)"
                if said
                else ""
            )
        )
    unreached: list[str] = []
    for name in sorted({e.name for e in usable}):
        found = PADDED.match(name)
        assert found is not None
        hash_name = found["hash"]
        _call(key, private, hash_name)  # the first call makes the kernel's instance
        drivers = [
            e
            for e in classified_now(hwcrypto_run)
            if e.name == name and e.selftest in (None, "passed")
        ]
        if not any(not e.is_hardware for e in drivers):
            unreached.append(
                f"{name}: only {', '.join(e.driver for e in drivers)} is registered; the "
                "kernel builds no software instance of a name a driver already serves"
            )
        measured: list[Measurement] = []
        for entry in drivers:
            if len(drivers) > 1:
                hwcrypto_prefer(entry.driver)
            listing = read_proc_crypto(fixtures.PROC_CRYPTO)
            driver, how = served_driver(listing, listing, name)
            expected = inner_driver(entry.driver) or entry.driver
            if driver != expected:
                pytest.fail(f"made {entry.driver} the winner, but {driver} served", pytrace=False)
            _call(key, private, hash_name)  # checked against OpenSSL
            for measurement in _measure_padded(key, private, entry.driver, how, hash_name):
                measurement.driver_class = entry.driver_class
                measured.append(measurement)
                hwcrypto_results.add_measurement(measurement)
        inventory = inventory_items([e.to_json() for e in drivers])
        for finding in hw_loses_to_sw_findings(measured, inventory):
            hwcrypto_results.add_finding(finding)
    if unreached:
        pytest.skip("hardware measured, not judged: " + "; ".join(unreached))


def _call(key: int, private: rsa.RSAPrivateKey, hash_name: str | None) -> None:
    """One kernel operation under `pkcs1pad(rsa[,hash])`, its result checked by OpenSSL."""
    size = private.key_size // 8
    if hash_name is None:
        sealed = keyctl.encrypt(key, "enc=pkcs1", b"sixteen byte key", size)
        assert private.decrypt(sealed, padding.PKCS1v15()) == b"sixteen byte key"
        return
    info = f"enc=pkcs1 hash={hash_name}"
    signature = keyctl.sign(key, info, hashlib.new(hash_name, b"hwcrypto").digest(), size)
    chosen = getattr(hashes, hash_name.upper())()
    private.public_key().verify(signature, b"hwcrypto", padding.PKCS1v15(), chosen)


def _measure_padded(
    key: int, private: rsa.RSAPrivateKey, driver: str, how: str, hash_name: str | None
) -> list[Measurement]:
    size = private.key_size // 8
    if hash_name is not None:
        return _measure(key, private.key_size, driver, how, hash_name)
    sealed = keyctl.encrypt(key, "enc=pkcs1", b"sixteen byte key", size)
    return [
        measure_operations(
            call,
            algorithm="pkcs1pad(rsa)",
            driver=driver,
            key_bits=private.key_size,
            op=op,
            samples=SAMPLES,
            seconds=SAMPLE_SECONDS,
            evidence=how,
        )
        for op, call in (
            ("encrypt", lambda: keyctl.encrypt(key, "enc=pkcs1", b"sixteen byte key", size)),
            ("decrypt", lambda: keyctl.decrypt(key, "enc=pkcs1", sealed, size)),
        )
    ]


def classified_now(state: HwcryptoRun) -> list[InventoryEntry]:
    """/proc/crypto read again (the first call made the software instance), classed."""
    return fixtures.classified(state, read_proc_crypto(fixtures.PROC_CRYPTO))
