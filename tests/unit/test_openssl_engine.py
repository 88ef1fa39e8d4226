# SPDX-License-Identifier: MIT
"""The openssl engine's command lines and plan (pure parts; the board runs the real thing)."""

from __future__ import annotations

import subprocess
import time

import pytest

from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.engine import Evidence, Timing
from pytest_hwcrypto.measure.openssl_engine import (
    KERNEL_NAMES,
    SOFTWARE,
    OpenSslBound,
    OpenSslEngine,
    openssl_plan,
    software_target,
)
from pytest_hwcrypto.measure.parallel import Concurrent
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


# `openssl speed -elapsed -evp aes-128-cbc -mr -bytes 4096 -seconds 1 -multi 2`, OpenSSL
# 3.0 on this project's CI host (2026-12-07): two children's +F lines, then their sum.
MULTI_OUTPUT = """\
Forked child 0
+DT:AES-128-CBC:1:4096
+DT:AES-128-CBC:1:4096
+R:93452:AES-128-CBC:0.990000
+R:95510:AES-128-CBC:1.000000
Forked child 1
Got: +H:4096 from 0
Got: +F:25:AES-128-CBC:386645850.51 from 0
Got: +H:4096 from 1
Got: +F:25:AES-128-CBC:391208960.00 from 1
+F:25:AES-128-CBC:777854810.51
"""


def test_requests_in_flight_are_openssl_processes_and_their_sum_is_the_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[list[str]] = []

    def fake_run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, MULTI_OUTPUT, "")

    monkeypatch.setattr(subprocess, "run", fake_run)  # what openssl_engine calls
    target = software_target("aes-128-cbc")
    bound = OpenSslBound("openssl", target, None, Evidence(SOFTWARE, "x"), TIMING)
    assert "-multi" not in bound.argv(Op.ENCRYPT, 4096, 1)
    two = bound.at_concurrency(2)
    assert isinstance(bound, Concurrent) and two.evidence == bound.evidence
    sample = two.sample(Op.ENCRYPT, 4096, 1.0)
    assert ran[0][ran[0].index("-multi") + 1] == "2"
    assert sample.bytes_per_second == pytest.approx(777854810.51, rel=1e-3)


def test_the_plan_has_a_cell_per_level() -> None:
    targets = [software_target("aes-128-cbc")]
    plan = openssl_plan(targets, [4096], budget=10.0, concurrency=(1, 4))
    assert sorted(cell.concurrency for cell in plan.cells) == [1, 4]


# `openssl speed -elapsed -evp aes-128-cbc -mr -engine afalg -bytes 4096 -seconds 3
# -async_jobs 4`, its standard output, on the QEMU board with Debian's 6.1.176 kernel and
# the asynchronous test engine made the cbc(aes) winner (100 ms a request), 2026-12-07.
ASYNC_JOBS_OUTPUT = """\
+H:4096
+F:25:AES-128-CBC:147984.52
"""


def test_async_jobs_are_one_process_with_n_jobs_and_their_own_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[list[str]] = []

    def fake_run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, ASYNC_JOBS_OUTPUT, "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    engine = OpenSslEngine(None, "openssl", async_jobs=True)
    assert engine.source == "openssl-async-jobs"
    assert OpenSslEngine(None, "openssl").source == "openssl"
    bound = engine.open(software_target("aes-128-cbc"), TIMING)
    one = bound.argv(Op.ENCRYPT, 4096, 3)
    # level 1 goes the same way as the others: through one ASYNC job
    assert one[one.index("-async_jobs") + 1] == "1" and "-multi" not in one
    four = bound.at_concurrency(4)
    sample = four.sample(Op.ENCRYPT, 4096, 3.0)
    assert ran[0][ran[0].index("-async_jobs") + 1] == "4" and "-multi" not in ran[0]
    assert sample.bytes_per_second == pytest.approx(147984.52, rel=1e-3)  # -mr: bytes/s
    # the -multi engine's levels stay processes
    multi = OpenSslEngine(None, "openssl").open(software_target("aes-128-cbc"), TIMING)
    argv = multi.at_concurrency(4).argv(Op.ENCRYPT, 4096, 3)
    assert "-async_jobs" not in argv and argv[argv.index("-multi") + 1] == "4"
