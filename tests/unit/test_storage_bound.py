# SPDX-License-Identifier: MIT
"""storage-bound: a volume not clearly slower than the bare device under it."""

from __future__ import annotations

from dataclasses import replace

from pytest_hwcrypto.measure.dmcrypt_engine import BARE, dmcrypt_targets
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.verdict.storage_bound import storage_bound_by_group, storage_bound_findings
from pytest_hwcrypto.vocabulary import MIB, FindingKind, Op, Source


def _m(driver: str, median: float, low: float, high: float, size: int = 65536) -> Measurement:
    return Measurement(
        source=Source.DMCRYPT,
        algorithm="xts(aes)" if driver != BARE else "none",
        driver=driver,
        key_bits=256,
        block_size=size,
        op=Op.DECRYPT,
        bytes_per_second=median * MIB,
        ci_low=low * MIB,
        ci_high=high * MIB,
    )


def test_a_volume_within_noise_of_the_bare_device_is_storage_bound() -> None:
    bare = [_m(BARE, 100, 95, 105)]
    volumes = [_m("xts(ecb(aes-generic))", 98, 93, 101), _m("xts(ecb(aes-fixed-time))", 50, 45, 55)]
    found = storage_bound_findings(volumes, bare)
    assert [(f.kind, f.extra["driver"]) for f in found] == [
        (FindingKind.STORAGE_BOUND, "xts(ecb(aes-generic))")
    ]
    assert "98.0 MiB/s [93.0, 101]" in found[0].detail and "bare device" in found[0].detail


def test_only_the_same_op_and_size_is_compared() -> None:
    assert storage_bound_findings([_m("d", 98, 93, 101, size=4096)], [_m(BARE, 100, 95, 105)]) == []


def test_targets_are_the_disk_ciphers_plus_the_bare_device() -> None:
    targets = dmcrypt_targets([])
    assert [t.driver for t in targets] == [BARE]
    assert targets[0].accepts(4096) and not targets[0].accepts(512)


def test_groups_are_judged_apart_each_against_its_own_bare_device() -> None:
    # depth 1: the volume is as fast as the bare device (storage-bound); depth 4: the bare
    # device is much faster, so the same volume figure is not -- never compared across
    def at(depth: int, m: Measurement) -> Measurement:
        return replace(m, extra={"iodepth": depth})

    measured = [
        at(1, _m(BARE, 100, 95, 105)),
        at(1, _m("xts(ecb(aes-generic))", 98, 93, 101)),
        at(4, _m(BARE, 300, 290, 310)),
        at(4, _m("xts(ecb(aes-generic))", 98, 93, 101)),
    ]
    grouped = storage_bound_by_group(measured, BARE, lambda m: int(m.extra["iodepth"]))
    assert [(depth, [f.extra["driver"] for f in found]) for depth, found in grouped] == [
        (1, ["xts(ecb(aes-generic))"]),
        (4, []),
    ]
