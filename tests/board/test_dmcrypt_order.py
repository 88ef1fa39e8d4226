# SPDX-License-Identifier: MIT
"""An engine that swaps the outputs of requests in flight, behind dm-crypt.

dm-crypt keeps many requests in flight at an asynchronous driver without anyone asking:
writeback and readahead hand it many bios at once, and it submits every sector's request
without waiting for the one before. So the asynchronous test engine's completion-order
faults (pytest_hwcrypto/kmod: `async_reorder_every=N` holds every Nth finished request
until the next one completes; `async_reorder_swap` then swaps the two outputs, the bug a
real engine with a broken completion ring has) reach dm-crypt with no iodepth option at
all. The question: does the dmcrypt suite's integrity check (a seeded pattern written,
caches dropped, read back through a fresh open, the raw sectors decrypted with pyca) catch
swapped outputs, and does its failure name the driver? And is completion out of order
alone (no swap) harmless, as it must be?

Needs the QEMU board with the test drivers:
`pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers tests/board/test_dmcrypt_order.py -s`.

Seen (6.1.0-57, TCG, nice 19, load 6.3-7.9, 2026-12-07 07:24-07:37; 2 ms a request, 4 MiB,
4 KiB sectors): every 2nd completion held back -- 1022 held, the integrity test passed
(172 s); held and swapped -- 1024 swapped, the integrity test failed naming the driver:
"cbc-aes-hwcrypto-test-async: read back 3494f423c5f8560f… (4194304 bytes), wrote
e1f764a4d54ea364… (4194304 bytes)" (160 s): the driver named, but only a digest over the
whole volume. Since then the check reads a wrong volume again block by block
(pattern_io.wrong_blocks) and says which blocks hold each other's data; rerun 07:38-07:47
(load 4.7-9.0): 1022 held, passed; 1536 swapped, failed with "...: 1024 4096-byte blocks
read wrong, the first at byte 0; 780 of them hold another block's data (the block at byte
8192 reads as what was written at byte 12288): the driver mixed up requests in flight"
(382 s inside the board; the re-read goes through the faulty engine too).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.block import tools
from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME, SYS_MODULE
from pytest_hwcrypto.run import run_of

pytest_plugins = ["pytester"]

ENGINE = "cbc-aes-hwcrypto-test-async"
PARAMETERS = (
    "async_latency_us",
    "async_ns_per_kib",
    "async_skip_compute",
    "async_reorder_every",
    "async_reorder_swap",
)


@pytest.fixture
def engine(pytestconfig: pytest.Config) -> Iterator[Path]:
    """The asynchronous driver with real output and a short latency; put back after."""
    fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    params = SYS_MODULE / MODULE_NAME / "parameters"
    if not (params / "async_reorder_swap").exists():
        pytest.skip(f"{MODULE_NAME} without async_reorder_every/_swap: rebuild the test drivers")
    saved = {name: (params / name).read_text().strip() for name in PARAMETERS}
    (params / "async_latency_us").write_text("2000")
    (params / "async_ns_per_kib").write_text("0")
    (params / "async_skip_compute").write_text("N")  # real output: the check compares it
    yield params
    for name, value in saved.items():
        (params / name).write_text(value)


def integrity_session(
    pytester: pytest.Pytester, params: Path, every: int, swap: bool
) -> tuple[pytest.RunResult, int]:
    """The dmcrypt suite's integrity test of the engine's volume (4 MiB) with every
    `every`th completion held back (and swapped with its releaser's, with `swap`): the
    session and how many completions were held."""
    (params / "async_reorder_every").write_text(str(every))
    (params / "async_reorder_swap").write_text("Y" if swap else "N")
    (params / "async_reordered").write_text("0")
    outcome = pytester.runpytest_subprocess(
        "--hwcrypto",
        "-p",
        "no:cacheprovider",
        "--hwcrypto-suite=dmcrypt",
        "--hwcrypto-algorithm=cbc(aes)",
        "--hwcrypto-dmcrypt-bytes=4M",
        "--hwcrypto-budget=20",
        "-k",
        f"test_integrity and {ENGINE}",
        "-rA",
    )
    held = int((params / "async_reordered").read_text())
    (params / "async_reorder_every").write_text("0")
    (params / "async_reorder_swap").write_text("N")
    return outcome, held


@pytest.mark.slow_board
def test_out_of_order_is_harmless_and_swapped_outputs_fail_the_integrity_check(
    engine: Path, pytester: pytest.Pytester
) -> None:
    calm, held = integrity_session(pytester, engine, 2, swap=False)
    print(f"\nout of order, every 2nd held back: {held} held")
    print("\n".join(line for line in calm.outlines if "test_integrity" in line))
    calm.assert_outcomes(passed=1)
    if not held:
        pytest.skip("dm-crypt never had two requests in the engine at once (starved board)")

    swapped, held = integrity_session(pytester, engine, 1, swap=True)
    print(f"\nswapped outputs: {held} held back and swapped")
    failures = [line for line in swapped.outlines if line.startswith("E ") or "FAILED" in line]
    print("\n".join(failures[:20]))
    assert held, "with swapping on, no two requests were in the engine at once"
    swapped.assert_outcomes(failed=1)
    assert any(ENGINE in line for line in failures), "the failure does not name the driver"
    # read again block by block, the blocks that hold each other's data say what happened
    assert any("mixed up requests in flight" in line for line in failures), failures
