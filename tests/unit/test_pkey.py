# SPDX-License-Identifier: MIT
"""Public keys through keyctl: the ABI's struct sizes, which driver served, operations per
second as measurements, and the HW-vs-SW verdict over them (no board of ours has a hardware
rsa driver that passes its self-test, so this is where that verdict is proven)."""

from __future__ import annotations

import ctypes

from pytest_hwcrypto.kernel import keyctl
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.measure.pkey import inner_driver, measure_operations, served_driver
from pytest_hwcrypto.model.results import InventoryItem
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings
from tests.factories import sampled, spread


def test_the_structs_have_the_uapi_sizes() -> None:
    # include/uapi/linux/keyctl.h: keyctl_pkey_query 56 bytes, keyctl_pkey_params 40.
    assert ctypes.sizeof(keyctl._Query) == 56
    assert ctypes.sizeof(keyctl._Params) == 40


def test_the_instance_names_its_inner_driver() -> None:
    assert inner_driver("pkcs1pad(rsa-generic,sha256)") == "rsa-generic"
    assert inner_driver("pkcs1(virtio-crypto-rsa,sha256)") == "virtio-crypto-rsa"
    assert inner_driver("pkcs1pad(rsa-generic)") == "rsa-generic"
    assert inner_driver("rsa-generic") is None
    assert inner_driver("cbc(aes-generic)") is None


def alg(name: str, driver: str, priority: int, selftest: str = "passed") -> CryptoAlg:
    return CryptoAlg(name=name, driver=driver, priority=priority, selftest=selftest)


GENERIC = alg("rsa", "rsa-generic", 100)
VIRTIO = alg("rsa", "virtio-crypto-rsa", 150, selftest="unknown")


INSTANCE = alg("pkcs1pad(rsa,sha256)", "pkcs1pad(rsa-generic,sha256)", 100)
# The QEMU board's 6.1 (virtio_crypto): a driver doing PKCS#1 v1.5 with SHA-1 itself.
VIRTIO_PKCS1 = alg("pkcs1pad(rsa,sha1)", "virtio-pkcs1-rsa", 150)
SHA1_INSTANCE = alg("pkcs1pad(rsa,sha1)", "pkcs1pad(rsa-generic,sha1)", 100)


def test_the_new_instance_says_which_driver_served() -> None:
    driver, how = served_driver([GENERIC, VIRTIO], [GENERIC, VIRTIO, INSTANCE])
    assert driver == "rsa-generic" and "appeared" in how


def test_an_instance_made_at_boot_is_the_winner_of_its_name() -> None:
    # Module signature checks made pkcs1pad(rsa-generic,sha256) before the run.
    listing = [GENERIC, VIRTIO, INSTANCE, VIRTIO_PKCS1, SHA1_INSTANCE]
    driver, how = served_driver(listing, listing)
    assert driver == "rsa-generic" and "winner of pkcs1pad(rsa,sha256)" in how
    assert served_driver(listing, listing, "pkcs1pad(rsa,sha1)")[0] == "virtio-pkcs1-rsa"
    assert served_driver([VIRTIO], [VIRTIO])[0] is None


def test_operations_become_an_op_s_measurement_without_block_size() -> None:
    calls = []
    measurement = measure_operations(
        lambda: calls.append(1),
        algorithm="pkcs1pad(rsa,sha256)",
        driver="rsa-generic",
        key_bits=2048,
        op="sign",
        samples=3,
        seconds=0.001,
        evidence="test",
    )
    assert (measurement.source, measurement.unit, measurement.block_size) == (
        "keyctl",
        "op/s",
        None,
    )
    assert len(measurement.samples) == 3 and calls
    assert measurement.bytes_per_second > 0 and measurement.to_json()["unit"] == "op/s"


def signatures(driver: str, rate: float, driver_class: str) -> object:
    return sampled(
        driver,
        spread(rate, [-2, -1, 0, 1, 2] * 3),
        source="keyctl",
        algorithm="pkcs1pad(rsa,sha256)",
        key_bits=2048,
        block_size=None,
        op="sign",
        driver_class=driver_class,
        unit="op/s",
    )


def test_hardware_rsa_slower_than_rsa_generic_is_a_finding() -> None:
    inventory = [
        InventoryItem("pkcs1pad(rsa,sha256)", "virtio-crypto-rsa", "offload", 150, True),
        InventoryItem("pkcs1pad(rsa,sha256)", "rsa-generic", "generic", 100, False),
    ]
    slow = [
        signatures("virtio-crypto-rsa", 40.0, "offload"),
        signatures("rsa-generic", 400.0, "generic"),
    ]
    (finding,) = hw_loses_to_sw_findings(slow, inventory)  # type: ignore[arg-type]
    assert "virtio-crypto-rsa" in finding.detail and "rsa-generic" in finding.detail
    fast = [
        signatures("virtio-crypto-rsa", 4000.0, "offload"),
        signatures("rsa-generic", 400.0, "generic"),
    ]
    assert hw_loses_to_sw_findings(fast, inventory) == []  # type: ignore[arg-type]
