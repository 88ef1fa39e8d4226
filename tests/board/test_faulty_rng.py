# SPDX-License-Identifier: MIT
"""The rng suite against the test-only hw_random source of pytest_hwcrypto/kmod.

hwcrypto_test's `hwcrypto_test_rng` gives the kernel's random bytes unless a fault is
switched on through /sys/module/hwcrypto_test/parameters/rng_*: stuck bits, output that
repeats every N bytes, a slow source, short reads. Each test turns one mode on, runs the
rng suite on that source alone in a pytester session and checks the failure names the
source and the check (or, for the slow and short modes, that the throughput recorded for
it fell while the health checks still pass, and that a reader never sees the short reads).

Needs the QEMU board with the module loaded:
`pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers tests/board/test_faulty_rng.py`;
elsewhere the tests skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME, RNG_DEFAULTS, RNG_SOURCE, SYS_MODULE

pytest_plugins = ["pytester"]

PARAMETERS = SYS_MODULE / MODULE_NAME / "parameters"
SESSION = (
    "--hwcrypto",
    "-p",
    "no:cacheprovider",
    "--hwcrypto-suite=rng",
    "--hwcrypto-budget=4",
    "-k",
    RNG_SOURCE,
)


@pytest.fixture
def test_rng() -> Iterator[Path]:
    if not (PARAMETERS / "rng_repeat_every").exists():
        pytest.skip(f"{MODULE_NAME} with {RNG_SOURCE} is not loaded (--hwcrypto-test-drivers)")
    yield PARAMETERS
    for name, value in RNG_DEFAULTS.items():
        (PARAMETERS / name).write_text(value)


def run_suite(pytester: pytest.Pytester) -> tuple[int, dict[str, object]]:
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(*SESSION, f"--hwcrypto-json={out}")
    return int(result.ret), json.loads(out.read_text())


@pytest.mark.parametrize(
    ("parameter", "value", "words"),
    [
        ("rng_stuck_ones", "0x80000001", "stuck bits in every 32-bit word: bit 0=1, bit 31=1"),
        ("rng_repeat_every", "4096", "4096 bytes later"),
    ],
)
def test_fault_is_caught_naming_the_source(
    test_rng: Path, pytester: pytest.Pytester, parameter: str, value: str, words: str
) -> None:
    (test_rng / parameter).write_text(str(int(value, 0)))
    code, results = run_suite(pytester)
    assert code == 1
    findings = [f for f in results["findings"] if f.get("source") == RNG_SOURCE]  # type: ignore[attr-defined]
    assert any(words in f["detail"] for f in findings), findings
    assert all(f["detail"].startswith(f"{RNG_SOURCE}: ") for f in findings)


def measured_4k(results: dict[str, object]) -> dict[str, object]:
    return next(
        m
        for m in results["measurements"]  # type: ignore[attr-defined]
        if m["driver"] == RNG_SOURCE and m["block_size"] == 4096
    )


def test_a_slow_source_is_measured_slower(test_rng: Path, pytester: pytest.Pytester) -> None:
    code, before = run_suite(pytester)
    assert code == 0
    (test_rng / "rng_delay_us").write_text("2000")
    code, after = run_suite(pytester)
    assert code == 0  # slow is not unhealthy: a profile floor decides
    fast, slow = measured_4k(before), measured_4k(after)
    # 4096 bytes take 64 read calls of the core's 64-byte buffer: at least 128 ms slept
    assert slow["bytes_per_second"] < fast["bytes_per_second"] / 2  # type: ignore[operator]


def test_short_reads_are_filled_by_the_core_at_a_cost_in_time(
    test_rng: Path, pytester: pytest.Pytester
) -> None:
    """A driver answering 4 bytes a call: 6.1's rng_dev_read calls it again until the
    reader's request is filled, so user space never sees a short read (blocking or not;
    the test source ignores `wait`), only 16 driver calls where one did."""
    code, before = run_suite(pytester)
    assert code == 0
    (test_rng / "rng_short_read").write_text("4")
    code, after = run_suite(pytester)
    assert code == 0
    full, short = measured_4k(before), measured_4k(after)
    assert short["reads"] and short["short_reads"] == 0, short
    assert short["bytes_per_second"] < full["bytes_per_second"] / 2  # type: ignore[operator]
