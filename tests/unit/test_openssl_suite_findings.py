# SPDX-License-Identifier: MIT
"""The openssl suite's own findings per level of requests in flight (small fakes): a
kernel driver is compared with OpenSSL's software at the same level, never two pooled."""

from __future__ import annotations

from pytest_hwcrypto.model.results import Measurement, inventory_items
from suites.test_openssl import engine_findings
from tests.factories import measurement, spread

KIB = 1024
INVENTORY = inventory_items(
    [{"name": "cbc(aes)", "driver": "engine", "priority": 300, "class": "offload"}]
)


def at(source: str, driver: str, level: int, mib_s: float) -> Measurement:
    rate = mib_s * KIB * KIB
    samples = spread(rate, (-1.0, -0.5, 0.0, 0.5, 1.0))
    return measurement(
        driver, rate, source=source, algorithm="aes-128-cbc", samples=samples, concurrency=level
    )


def test_a_driver_slower_alone_and_faster_in_flight_loses_only_at_level_one() -> None:
    measured = [
        at("openssl", "openssl", 1, 100.0),
        at("openssl", "openssl", 4, 180.0),
        at("openssl", "engine", 1, 50.0),
        at("openssl", "engine", 4, 400.0),
    ]
    losing = [f for f in engine_findings(measured, INVENTORY) if f.kind == "hw-loses-to-sw"]
    assert len(losing) == 1, [f.detail for f in losing]
    assert "N=" not in losing[0].detail and "at 1 of 1 block sizes" in losing[0].detail
    assert "concurrency" not in losing[0].extra


def test_a_loss_in_flight_names_its_level_and_its_way() -> None:
    measured = [
        at("openssl-async-jobs", "openssl", 1, 100.0),
        at("openssl-async-jobs", "openssl", 4, 100.0),
        at("openssl-async-jobs", "engine", 1, 150.0),
        at("openssl-async-jobs", "engine", 4, 50.0),
    ]
    found = engine_findings(measured, INVENTORY, "openssl-async-jobs")
    losing = [f for f in found if f.kind == "hw-loses-to-sw" and "OpenSSL's own" in f.detail]
    assert len(losing) == 1
    assert "[openssl -engine afalg -async_jobs N=4 -> engine]" in losing[0].detail
    assert losing[0].extra["concurrency"] == 4
    assert losing[0].extra["source"] == "openssl-async-jobs"


def test_a_generic_driver_losing_to_openssl_is_called_generic_c_never_hardware() -> None:
    """cbc(aes-generic) through the afalg engine against OpenSSL's software: the kernel
    path is generic C code, and the finding says what lost to what."""
    inventory = inventory_items(
        [{"name": "cbc(aes)", "driver": "cbc(aes-generic)", "priority": 100, "class": "generic"}]
    )
    measured = [at("openssl", "openssl", 1, 400.0), at("openssl", "cbc(aes-generic)", 1, 100.0)]
    (losing,) = [f for f in engine_findings(measured, inventory) if f.kind == "hw-loses-to-sw"]
    assert losing.detail.startswith(
        "aes-128-cbc [openssl -engine afalg -> cbc(aes-generic)]: the kernel path (generic C) "
        "loses to OpenSSL's own code at 1 of 1 block sizes, down to 0.25x at 4096 B "
        "(100 vs 400 MiB/s)"
    )
    assert "hardware" not in losing.detail
    assert losing.extra["driver_class"] == "generic"


def test_an_offload_driver_losing_to_openssl_is_called_hardware() -> None:
    measured = [at("openssl", "openssl", 1, 100.0), at("openssl", "engine", 1, 50.0)]
    (losing,) = [f for f in engine_findings(measured, INVENTORY) if f.kind == "hw-loses-to-sw"]
    assert "the kernel path (hardware) loses to OpenSSL's own code" in losing.detail
