# SPDX-License-Identifier: MIT
"""The counter rate tcrypt's sec=0 results are converted with, per architecture.

The ARM lines are from the qemu-arm64 board's kernel log (Debian 6.1.0-57-arm64 under TCG,
2026-12-07): with no TSC line there, the throughput suite's tcrypt test failed with
"give the CPU clock" although the kernel had printed the generic timer's rate.
"""

from __future__ import annotations

import pytest

from pytest_hwcrypto.measure import tcrypt_runner
from pytest_hwcrypto.parsers.tcrypt import TcryptParseError, parse_tcrypt

ARM64_BOOT = (
    "[    0.000000] arch_timer: cp15 timer(s) running at 62.50MHz (virt).\n"
    "[    0.000048] sched_clock: 57 bits at 63MHz, resolution 16ns, wraps every 4398046511096ns\n"
)
ARM64_TCRYPT = (
    "[  272.426605] tcrypt: \n"
    "               testing speed of async cbc(aes) (cbc-aes-ce) encryption\n"
    "[  272.426682] tcrypt: test 0 (128 bit key, 16 byte blocks): "
    "1 operation in 1210 cycles (16 bytes)\n"
    "[  272.429277] tcrypt: test 6 (128 bit key, 4096 byte blocks): "
    "1 operation in 5376 cycles (4096 bytes)\n"
)


def test_arm_generic_timer_rate_converts_cycles() -> None:
    hz = tcrypt_runner.cpu_hz_from(ARM64_TCRYPT + ARM64_BOOT)
    assert hz == pytest.approx(62.5e6)
    measurements = parse_tcrypt(ARM64_TCRYPT, "arm64", cpu_hz=hz)
    at_4k = [m for m in measurements if m.block_size == 4096]
    assert [m.driver for m in at_4k] == ["cbc-aes-ce"]
    # 4096 bytes in 5376 ticks of a 62.5 MHz counter: 47.6 MB/s
    assert at_4k[0].bytes_per_second == pytest.approx(4096 * 62.5e6 / 5376)


@pytest.mark.parametrize(
    "banner, mhz",
    [
        ("arch_timer: cp15 timer(s) running at 24.00MHz (phys).", 24.0),
        ("arch_timer: cp15 and mmio timer(s) running at 19.20MHz (virt/virt).", 19.2),
        ("arch_timer: mmio timer(s) running at 100.00MHz (virt).", 100.0),
    ],
)
def test_every_arch_timer_banner_is_read(banner: str, mhz: float) -> None:
    assert tcrypt_runner.cpu_hz_from(f"[    0.000000] {banner}\n") == pytest.approx(mhz * 1e6)


def test_tsc_wins_over_cpuinfo_and_timer_only_on_arm() -> None:
    tsc = "[1.0] tsc: Refined TSC clocksource calibration: 2500.000 MHz\n"
    assert tcrypt_runner.cpu_hz_from(tsc + ARM64_BOOT) == pytest.approx(2.5e9)
    # an x86 log has no arch_timer line: cpuinfo's clock is the fallback there
    assert tcrypt_runner.cpu_hz_from("", "cpu MHz\t\t: 1996.250\n") == pytest.approx(1.99625e9)
    assert tcrypt_runner.cpu_hz_from("sched_clock: 57 bits at 63MHz\n", "") is None


def test_without_any_rate_cycles_stay_cycles() -> None:
    with pytest.raises(TcryptParseError, match="CPU cycles"):
        parse_tcrypt(ARM64_TCRYPT, "arm64", cpu_hz=tcrypt_runner.cpu_hz_from(ARM64_TCRYPT))
