# SPDX-License-Identifier: MIT
"""The rng engine against a real kernel: every rng driver bound by its own name, seeded as
/proc/crypto's seedsize says, its output sound, and timed through the run loop.

Runs inside a board (`pytest --hwcrypto-vm=uml tests/board/test_rng_engine.py`); skips
where the kernel has no AF_ALG rng. On UML 6.1.176 (9 drivers: the DRBGs and ansi_cprng)
the four tests took 10-12 s inside the board, 26-31 s with the boot, host load 16-18
(2026-12-07).
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.engine import EngineError, Timing
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.rng_engine import RNG_OPS, RngEngine, open_rng_session
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.verdict.rng_output import output_problem


@pytest.fixture(scope="module")
def engine_and_targets() -> tuple[RngEngine, list[Target]]:
    available, why = afalg.afalg_available(afalg.RNG)
    if not available:
        pytest.skip(why)
    engine = RngEngine()
    targets = engine.reachable(build_inventory(read_proc_crypto()))
    if not targets:
        pytest.skip("no rng driver registered (modprobe drbg)")
    return engine, list(targets)


@pytest.mark.usefixtures("engine_and_targets")
def test_every_rng_driver_binds_by_its_own_name_and_gives_sound_output() -> None:
    for entry in build_inventory(read_proc_crypto()):
        if entry.type != "rng" or entry.alg.is_internal:
            continue
        session, how = open_rng_session(entry.driver, entry.name, entry.alg.seedsize, 10.0)
        with session:
            assert (session.driver, how) == (entry.driver, "by driver name")
            assert output_problem(session.generate(4096)) is None


def test_ansi_cprng_refuses_a_seed_shorter_than_its_seedsize() -> None:
    entry = next((a for a in read_proc_crypto() if a.driver == "ansi_cprng"), None)
    if entry is None:
        pytest.skip("ansi_cprng is not registered")
    assert entry.seedsize == 48
    with pytest.raises(afalg.AfAlgError):
        afalg.open_rng("ansi_cprng", bytes(16))


def test_the_run_loop_measures_each_driver_it_was_given(
    engine_and_targets: tuple[RngEngine, list[Target]],
) -> None:
    engine, targets = engine_and_targets
    chosen = targets[:2]
    plan = make_plan(chosen, (128,), 2.0, ops=RNG_OPS, sessions=1)
    run = run_plan(plan, engine)
    assert not run.failures, [f.message for f in run.failures]
    measured = {m.driver: m for m in run.measurements()}
    assert set(measured) == {t.driver for t in chosen}
    for measurement in measured.values():
        assert measurement.op == "generate" and measurement.bytes_per_second > 0
        assert "by driver name" in measurement.extra["evidence"]


def test_a_driver_name_the_kernel_does_not_know_is_an_engine_error(
    engine_and_targets: tuple[RngEngine, list[Target]],
) -> None:
    engine, targets = engine_and_targets
    ghost = replace(targets[0], driver="drbg_no_such_driver")
    with pytest.raises(
        EngineError, match=r"drbg_no_such_driver: AF_ALG binds it only by algorithm name stdrng"
    ):
        engine.open(ghost, Timing(time.perf_counter, CpuMeter()))
