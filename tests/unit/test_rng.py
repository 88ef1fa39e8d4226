# SPDX-License-Identifier: MIT
"""The rngalg suite's pure parts: output checks, which drivers it measures, and the HW-vs-SW
verdict for a hardware PRNG beside the DRBGs (no board of ours registers one, so this is
where that logic is proven)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.plan import cells_for
from pytest_hwcrypto.measure.rng_engine import (
    DEFAULT_READ_SIZES,
    RNG_OPS,
    rng_targets,
    seed_for,
)
from pytest_hwcrypto.model.results import InventoryItem
from pytest_hwcrypto.verdict.rng_output import output_problem, streams_problem
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings, winner_not_fastest_findings
from tests.factories import sampled, spread

QEMU = Path(__file__).resolve().parents[1] / "data" / "proc_crypto" / "qemu-6.1.0-57-amd64.txt"


def random_bytes(n: int, label: bytes = b"") -> bytes:
    """Deterministic stand-in for a generator's output (SHA-256 in counter mode)."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(label + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:n])


def test_good_output_has_no_problem() -> None:
    assert output_problem(random_bytes(65536)) is None
    assert streams_problem([random_bytes(4096, b"a"), random_bytes(4096, b"b")]) is None


def test_stuck_output_is_caught() -> None:
    problem = output_problem(bytes(4096))
    assert problem is not None and "stuck" in problem and "0x00" in problem


def test_output_repeating_every_n_bytes_is_caught_with_its_period() -> None:
    for period in (3, 64, 1000):
        data = (random_bytes(period) * (65536 // period + 1))[:65536]
        problem = output_problem(data)
        assert problem is not None and f"every {period} bytes" in problem


def test_a_block_handed_out_twice_is_caught() -> None:
    data = bytearray(random_bytes(65536))
    data[40000:40016] = data[160:176]
    problem = output_problem(bytes(data))
    assert problem is not None and "offset 160" in problem and "offset 40000" in problem


def test_two_sessions_in_the_same_state_are_caught() -> None:
    same = random_bytes(4096)
    problem = streams_problem([same, random_bytes(4096, b"x"), same])
    assert problem is not None and "sessions 0 and 2" in problem


def test_too_little_output_is_not_judged() -> None:
    assert output_problem(bytes(32)) is None


def test_targets_are_the_rng_drivers_highest_priority_first() -> None:
    targets = rng_targets(build_inventory(read_proc_crypto(QEMU)))
    drivers = [t.driver for t in targets]
    assert drivers[0] == "drbg_nopr_hmac_sha512"  # priority 221, the one stdrng gives
    assert all(t.kind == "rng" and t.key_bits is None for t in targets)
    assert drivers.index("drbg_nopr_hmac_sha512") < drivers.index("drbg_pr_hmac_sha256")
    cells = cells_for(targets[:1], DEFAULT_READ_SIZES, RNG_OPS)
    assert [(c.op, c.block_size) for c in cells] == [
        ("generate", 16),
        ("generate", 128),
        ("generate", 4096),
    ]


def test_the_seed_is_seedsize_bytes_and_empty_for_self_seeding_drbgs() -> None:
    assert len(seed_for(48)) == 48
    assert seed_for(0) == seed_for(None) == b""


def rng_measurement(driver: str, mib_s: float, driver_class: str) -> object:
    return sampled(
        driver,
        spread(mib_s * 2**20, [-2, -1, 0, 1, 2] * 3),
        source="afalg",
        algorithm="stdrng",
        key_bits=None,
        block_size=4096,
        op="generate",
        driver_class=driver_class,
    )


INVENTORY = [
    InventoryItem("stdrng", "sun8i-ce-prng", "offload", 300, True),
    InventoryItem("stdrng", "drbg_nopr_hmac_sha256", "generic", 221, False),
]


def test_a_hardware_prng_slower_than_the_drbg_is_a_finding_naming_both() -> None:
    measurements = [
        rng_measurement("sun8i-ce-prng", 0.5, "offload"),
        rng_measurement("drbg_nopr_hmac_sha256", 4.0, "generic"),
    ]
    (loses,) = hw_loses_to_sw_findings(measurements, INVENTORY)  # type: ignore[arg-type]
    assert loses.kind == "hw-loses-to-sw" and loses.algorithm == "stdrng"
    assert "sun8i-ce-prng" in loses.detail and "drbg_nopr_hmac_sha256" in loses.detail
    (slow_winner,) = winner_not_fastest_findings(measurements, INVENTORY)  # type: ignore[arg-type]
    assert "sun8i-ce-prng" in slow_winner.detail


def test_a_hardware_prng_faster_than_the_drbg_is_no_finding() -> None:
    measurements = [
        rng_measurement("sun8i-ce-prng", 8.0, "offload"),
        rng_measurement("drbg_nopr_hmac_sha256", 4.0, "generic"),
    ]
    assert hw_loses_to_sw_findings(measurements, INVENTORY) == []  # type: ignore[arg-type]
    assert winner_not_fastest_findings(measurements, INVENTORY) == []  # type: ignore[arg-type]
