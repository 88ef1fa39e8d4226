"""The openssl engine's command lines and plan (pure parts; the board runs the real thing)."""

from __future__ import annotations

import time

from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.engine import Evidence, Timing
from pytest_hwcrypto.measure.openssl_engine import (
    KERNEL_NAMES,
    SOFTWARE,
    OpenSslBound,
    openssl_plan,
    software_target,
)
from pytest_hwcrypto.vocabulary import Op

TIMING = Timing(time.perf_counter, CpuMeter())


def test_every_run_is_elapsed_evp_and_machine_readable() -> None:
    target = software_target("aes-128-cbc")
    bound = OpenSslBound("openssl", target, None, Evidence(SOFTWARE, "x"), TIMING)
    argv = bound.argv(Op.ENCRYPT, 4096, 2)
    assert argv[:3] == ["openssl", "speed", "-elapsed"]
    assert "-evp" in argv and "-mr" in argv and "-engine" not in argv
    assert argv[argv.index("-bytes") + 1] == "4096" and argv[argv.index("-seconds") + 1] == "2"
    assert "-decrypt" in bound.argv(Op.DECRYPT, 16, 1)


def test_the_software_side_is_openssl_itself() -> None:
    target = software_target("aes-256-cbc")
    assert (target.driver, target.key_bits, target.algorithm) == (SOFTWARE, 256, "aes-256-cbc")
    assert set(KERNEL_NAMES.values()) == {"cbc(aes)"}


def test_plan_fits_whole_second_rounds_into_the_budget() -> None:
    targets = [software_target("aes-128-cbc")]
    plan = openssl_plan(targets, [16, 4096, 65536], budget=10.0)
    assert len(plan.cells) == 3 and plan.sample_seconds == 1.0
    assert plan.samples == 3  # 3 cells x 3 rounds x 1 s <= 10 s
    assert openssl_plan(targets, [16, 4096, 65536], budget=1.0).samples == 1
    assert openssl_plan(targets * 1, [16], budget=100.0).samples == 5
