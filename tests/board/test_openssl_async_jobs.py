# SPDX-License-Identifier: MIT
"""OpenSSL's `-async_jobs N` through the afalg engine: are N requests really in flight?

One `openssl speed` process runs N ASYNC jobs, each with its own cipher context and so its
own AF_ALG socket; the afalg engine submits each job's request with io_submit and pauses
the job until the kernel completes it. Whether that keeps N requests in the engine is the
kernel's business: the stable change "crypto: algif_skcipher - force synchronous
processing" (Debian 6.1.180 and later) completes every AF_ALG request inside io_submit.

So the expectation comes from the kernel itself, asked directly: one AIO read on a socket
of the asynchronous test engine (K = 4 flows, its latency slept), timing io_submit. Where
io_submit returns before the engine's latency has passed, the kernel keeps AIO requests in
flight and `-async_jobs N` must give min(N, K) x one's rate (within 15 %; past K up to the
flows' ceiling K / latency, as the requests' own overhead overlaps too); where io_submit
itself waits for the latency, every level must give one's rate (within 15 %) while `-multi
N` in the same run gives min(N, K) x -- the serialization is before the engine, not in it
-- and the openssl suite must say so once (`async-jobs-serialized`) and judge no level
above 1 of that source.

Needs the QEMU board with the test drivers:
`pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers tests/board/test_openssl_async_jobs.py -s`;
on a kernel from before the change (Debian's 6.1.176, linux-image-6.1.0-50-amd64-unsigned
and its headers unpacked: benchmarks/requests-in-flight.md) add
--hwcrypto-kernel/--hwcrypto-modules.

Seen (TCG, nice 19, 4 KiB, 2026-12-07): on 6.1.192 (6.1.0-57, load 4.3-6.1) io_submit took
the whole request; -async_jobs 1/2/4/8 gave 8.8/8.5/8.1/8.5 req/s at 100 ms (-multi 1/4
8.5/34.6) and 31.7/30.4/29.9/29.0 at 20 ms (31.0/132.0); on 6.1.176 (6.1.0-50, load 6.2-7.2)
io_submit returned in 0.3-5 ms of 200 and -async_jobs gave 8.8/16.8/35.0/35.7 and
31.6/67.7/123.3/152.5 (-multi 8.8/35.8, 33.0/125.9). The suite at budget 112: 6.1.192
-multi 4 4.31x, -async_jobs 4 0.95x, async-jobs-serialized naming the engine and
virtio_crypto_aes_cbc (445 s inside the board); 6.1.176 4.30x and 3.98x, no finding (399 s).
benchmarks/requests-in-flight.md has the rest.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import struct
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Reranker
from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME, SYS_MODULE
from pytest_hwcrypto.measure.openssl_engine import OpenSslEngine, kernel_targets, openssl_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.run import run_of
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

pytest_plugins = ["pytester"]

ENGINE = "cbc-aes-hwcrypto-test-async"
CIPHER = "aes-128-cbc"
LEVELS = (1, 2, 4, 8)
TOLERANCE = 0.15  # the bar
KIB = 1024
PARAMETERS = ("async_latency_us", "async_ns_per_kib", "async_skip_compute")

# x86-64 system call numbers of the kernel's native AIO (no libaio on the board)
_IO_SETUP, _IO_DESTROY, _IO_GETEVENTS, _IO_SUBMIT = 206, 207, 208, 209
_IOCB_CMD_PREAD = 0
_SOL_ALG, _ALG_SET_KEY, _ALG_OP_ENCRYPT = 279, 1, 1


@pytest.fixture
def engine(pytestconfig: pytest.Config) -> Iterator[Path]:
    """The asynchronous driver's parameters; put back after."""
    fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    params = SYS_MODULE / MODULE_NAME / "parameters"
    if not (params / "async_skip_compute").exists():
        pytest.skip(f"{MODULE_NAME} without the asynchronous driver's async_skip_compute")
    if os.uname().machine != "x86_64":
        pytest.skip("the AIO probe uses x86-64 system call numbers")
    saved = {name: (params / name).read_text().strip() for name in PARAMETERS}
    yield params
    for name, value in saved.items():
        (params / name).write_text(value)


def configure(params: Path, latency_us: int) -> None:
    (params / "async_latency_us").write_text(str(latency_us))
    (params / "async_ns_per_kib").write_text("0")
    (params / "async_skip_compute").write_text("Y")


def io_submit_wait(driver: str, size: int = 4 * KIB) -> tuple[float, float]:
    """One AIO read of an encryption on an AF_ALG socket of `driver`: seconds io_submit
    took, and seconds until the completion was collected."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    context = ctypes.c_ulong(0)
    if libc.syscall(_IO_SETUP, 1, ctypes.byref(context)) != 0:
        raise OSError(ctypes.get_errno(), "io_setup")
    bound = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)
    try:
        bound.bind(("skcipher", driver))
        bound.setsockopt(_SOL_ALG, _ALG_SET_KEY, bytes(16))
        request, _ = bound.accept()
        with request:
            request.sendmsg_afalg([bytes(size)], op=_ALG_OP_ENCRYPT, iv=bytes(16))
            out = ctypes.create_string_buffer(size)
            iocb = struct.pack(
                "<QIiHhIQQqQII",
                1,  # aio_data
                0,  # aio_key
                0,  # aio_rw_flags
                _IOCB_CMD_PREAD,
                0,  # aio_reqprio
                request.fileno(),
                ctypes.addressof(out),
                size,
                0,  # aio_offset
                0,
                0,  # aio_flags
                0,  # aio_resfd
            )
            block = ctypes.create_string_buffer(iocb, len(iocb))
            pointers = (ctypes.c_void_p * 1)(ctypes.addressof(block))
            began = time.perf_counter()
            if libc.syscall(_IO_SUBMIT, context, 1, pointers) != 1:
                raise OSError(ctypes.get_errno(), "io_submit")
            submitted = time.perf_counter() - began
            event = ctypes.create_string_buffer(32)
            if libc.syscall(_IO_GETEVENTS, context, 1, 1, event, None) != 1:
                raise OSError(ctypes.get_errno(), "io_getevents")
            completed = time.perf_counter() - began
            result = struct.unpack("<QQqq", event.raw)[2]
            assert result == size, f"AIO read gave {result}"
            return submitted, completed
    finally:
        bound.close()
        libc.syscall(_IO_DESTROY, context)


def aio_waits_in_submit(params: Path) -> bool:
    """True where io_submit itself waited for the engine's latency (AIO completed
    synchronously), False where it returned before: three probes at 200 ms a request (long
    beside a loaded TCG board's syscall and scheduling delays), all must agree; the
    engine's latency is put back after."""
    before = (params / "async_latency_us").read_text().strip()
    latency = 0.2
    (params / "async_latency_us").write_text(str(round(latency * 1e6)))
    try:
        probes = [io_submit_wait(ENGINE) for _ in range(3)]
    finally:
        (params / "async_latency_us").write_text(before)
    print(
        "\nAIO probe on the engine (200 ms a request): io_submit / completion "
        + ", ".join(f"{s * 1000:.1f} / {c * 1000:.1f} ms" for s, c in probes)
    )
    waited = [s >= 0.8 * latency for s, _ in probes]
    returned = [s <= 0.25 * latency and c >= 0.8 * latency for s, c in probes]
    assert all(waited) or all(returned), f"io_submit neither always waited nor returned: {probes}"
    return all(waited)


def measured(reranker: Reranker, async_jobs: bool, levels: Sequence[int]) -> dict[int, float]:
    """The engine's requests a second through openssl at each level (-async_jobs or -multi)."""
    inventory = build_inventory(read_proc_crypto(PROC_CRYPTO))
    targets = [t for t in kernel_targets(CIPHER, inventory) if t.driver == ENGINE]
    assert targets, f"{ENGINE} is not a cbc(aes) driver here"
    # 3 rounds of 3 s samples: at 100 ms a request a 1 s sample counts 9 or 10 (11 % apart)
    plan = replace(openssl_plan(targets, [4 * KIB], 3.0 * len(levels), levels), sample_seconds=3.0)
    run = run_plan(plan, OpenSslEngine(reranker, async_jobs=async_jobs))
    errors = [f"{r.cell.describe()}: {r.error}" for r in run.records if r.error]
    assert not errors and not run.failures, errors or [f.message for f in run.failures]
    rates: dict[int, float] = {}
    for m in run.measurements():
        assert m.driver == ENGINE and m.source == OpenSslEngine(None, async_jobs=async_jobs).source
        rates[m.level] = m.bytes_per_second / (4 * KIB)
    return rates


@pytest.fixture
def reranker(pytestconfig: pytest.Config) -> Reranker:
    reason = fixtures.rerank_unavailable_reason()
    if reason:
        pytest.skip(reason)
    afalg.instantiate_any("cbc(aes)")  # loads algif_skcipher and the cipher modules
    return Reranker(fixtures.run_ledger(run_of(pytestconfig)), afalg.instantiate_any)


@pytest.mark.slow_board
@pytest.mark.parametrize("latency_us", [100_000, 20_000])
def test_async_jobs_put_requests_in_flight_only_where_the_kernel_completes_aio_async(
    engine: Path, reranker: Reranker, latency_us: int
) -> None:
    """-async_jobs N gives min(N, K) x one's rate where io_submit returns before the
    engine's latency, one's rate where io_submit waits for it; -multi N gains either way."""
    configure(engine, latency_us)
    flows = int((engine / "async_flows").read_text())
    synchronous = aio_waits_in_submit(engine)
    jobs = measured(reranker, True, LEVELS)
    multi = measured(reranker, False, (1, 4))
    print(f"kernel {os.uname().release}, {latency_us} us a request, AIO synchronous: {synchronous}")
    print("  -async_jobs: " + ", ".join(f"N={n} {r:.1f}" for n, r in sorted(jobs.items())))
    print("  -multi:      " + ", ".join(f"N={n} {r:.1f}" for n, r in sorted(multi.items())))
    one = jobs[1]
    for level in LEVELS:
        predicted = one if synchronous else min(level, flows) * one
        # past K flows the requests' own overhead overlaps too: up to the flows' ceiling
        ceiling = predicted if synchronous or level <= flows else flows * 1e6 / latency_us
        low, high = predicted * (1 - TOLERANCE), ceiling * (1 + TOLERANCE)
        assert low <= jobs[level] <= high, (
            f"-async_jobs {level}: {jobs[level]:.1f} req/s, predicted {predicted:.1f}"
            + (f"-{ceiling:.1f}" if ceiling != predicted else "")
            + f" ({'one at a time' if synchronous else f'min(N, {flows}) x {one:.1f}'})"
        )
    # the control: separate processes keep requests in flight whatever the kernel's AIO does
    ratio = multi[4] / multi[1]
    assert abs(ratio / min(4, flows) - 1) <= TOLERANCE, f"-multi 4 gave {ratio:.2f}x of one"


@pytest.mark.slow_board
def test_the_openssl_suite_says_once_when_async_jobs_stay_one_at_a_time(
    engine: Path, pytester: pytest.Pytester
) -> None:
    """The openssl suite with --hwcrypto-concurrency=1,4 measures both ways; on a kernel
    whose AIO waits in io_submit it reports async-jobs-serialized once, naming the engine,
    marks the -async_jobs 4 figures and judges nothing from them; elsewhere it reports no
    such finding and -async_jobs 4 gains like -multi 4."""
    latency_us = 20_000
    configure(engine, latency_us)
    flows = int((engine / "async_flows").read_text())
    synchronous = aio_waits_in_submit(engine)
    outcome = pytester.runpytest_subprocess(
        "--hwcrypto",
        "-p",
        "no:cacheprovider",
        "--hwcrypto-suite=openssl",
        "--hwcrypto-concurrency=1,4",
        "--hwcrypto-block-sizes=4096",
        # 7 paths x 2 levels x 2 ways: 112 s gives each cell 4 rounds of 1 s (with 40, one
        # sample a cell was 16 % off its level's rate more than once)
        "--hwcrypto-budget=112",
        "--hwcrypto-json=results.json",
    )
    results = json.loads((pytester.path / "results.json").read_text())
    tail = "\n".join(outcome.outlines[-30:])
    outcome.assert_outcomes(passed=3)  # the suite's own tests, with both ways measured
    mine = [Measurement.from_json(m, "results.json") for m in results["measurements"]]
    by_way: dict[str, dict[int, float]] = {}
    for m in mine:
        if m.driver == ENGINE:
            by_way.setdefault(m.source, {})[m.level] = m.bytes_per_second / (4 * KIB)
    print(f"\nthe openssl suite, {ENGINE}, {latency_us} us a request: {by_way} req/s")
    assert set(by_way) == {"openssl", "openssl-async-jobs"}, tail
    assert all(set(levels) == {1, 4} for levels in by_way.values()), tail
    serialized = [f for f in results["findings"] if f["kind"] == "async-jobs-serialized"]
    for finding in results["findings"]:
        print(f"  {finding['kind']}: {finding['detail']}")
    multi = by_way["openssl"][4] / by_way["openssl"][1]
    jobs = by_way["openssl-async-jobs"][4] / by_way["openssl-async-jobs"][1]
    assert abs(multi / min(4, flows) - 1) <= TOLERANCE, f"-multi 4 gave {multi:.2f}x"
    from_jobs = [
        f
        for f in results["findings"]
        if "-async_jobs" in f["detail"] and f["kind"] != "async-jobs-serialized"
    ]
    if synchronous:
        assert len(serialized) == 1, [f["kind"] for f in results["findings"]]
        named = serialized[0]["drivers"]
        assert ENGINE in named and ENGINE in serialized[0]["detail"], named
        # only drivers that could keep requests in flight (virtio-crypto may be one; the
        # CPU's drivers and OpenSSL's own code, flat with jobs on every kernel, never)
        assert not set(named) & {"cbc-aes-aesni", "cbc(aes-generic)", "openssl"}, named
        assert abs(jobs - 1) <= TOLERANCE, f"-async_jobs 4 gave {jobs:.2f}x of one"
        marked = [
            m
            for m in mine
            if m.source == "openssl-async-jobs" and m.level == 4 and "in_flight" in m.extra
        ]
        assert marked and all(m.level == 4 for m in marked)
        # nothing judged at level 4 of that source (N=1 verdicts may stand)
        assert not [f for f in from_jobs if "N=4" in f["detail"]], from_jobs
        assert not [f for f in from_jobs if f["kind"] == "needs-concurrency"], from_jobs
    else:
        assert not serialized, serialized
        assert abs(jobs / min(4, flows) - 1) <= TOLERANCE, f"-async_jobs 4 gave {jobs:.2f}x"
