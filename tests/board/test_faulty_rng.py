# SPDX-License-Identifier: MIT
"""The rng suite against the test-only hw_random source of pytest_hwcrypto/kmod.

hwcrypto_test's `hwcrypto_test_rng` gives the kernel's random bytes unless a fault is
switched on through /sys/module/hwcrypto_test/parameters/rng_*: stuck bits, output that
repeats every N bytes, a slow source, short reads. Each test turns one mode on, runs the
rng suite on that source alone in a pytester session and checks the failure names the
source and the check (or, for the slow and short modes, that the throughput recorded for
it fell while the health checks still pass).

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


def median_4k(results: dict[str, object]) -> float:
    return next(
        m["bytes_per_second"]
        for m in results["measurements"]  # type: ignore[attr-defined]
        if m["driver"] == RNG_SOURCE and m["block_size"] == 4096
    )


@pytest.mark.parametrize(
    ("parameter", "value"), [("rng_delay_us", "2000"), ("rng_short_read", "4")]
)
def test_slow_and_short_sources_are_measured_slower(
    test_rng: Path, pytester: pytest.Pytester, parameter: str, value: str
) -> None:
    code, before = run_suite(pytester)
    assert code == 0
    (test_rng / parameter).write_text(value)
    code, after = run_suite(pytester)
    assert code == 0  # slow is not unhealthy: a profile floor decides
    assert median_4k(after) < median_4k(before) / 2
