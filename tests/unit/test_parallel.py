# SPDX-License-Identifier: MIT
"""Requests in flight (measure/parallel.py), with fake lanes: no kernel, no timing asserts."""

from __future__ import annotations

import threading
import time

import pytest

from pytest_hwcrypto.measure.afalg_engine import lane_input
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.engine import EngineError, Evidence, Timing
from pytest_hwcrypto.measure.parallel import (
    MAX_CONCURRENCY,
    LanePool,
    LaneWork,
    ParallelRequests,
    at_level,
    parse_concurrency_levels,
    shares,
)
from pytest_hwcrypto.measure.plan import cells_for, make_plan
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.settings import SETTINGS, Options, SettingError, resolve
from pytest_hwcrypto.vocabulary import AlgType
from tests import factories


class InFlight:
    """Counts how many lanes are inside a request at once (the most seen)."""

    def __init__(self, hold: threading.Barrier | None = None) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.done = 0
        self.hold = hold

    def work(self, count: int, progress: list[int]) -> None:
        for index in range(count):
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            if self.hold is not None and index == 0:
                self.hold.wait(timeout=5)  # every lane inside its first request at once
            with self.lock:
                self.now -= 1
                self.done += 1
            progress[0] = index + 1


def test_levels_parse_sorted_unique_and_bounded() -> None:
    assert parse_concurrency_levels("16, 1,4,4") == (1, 4, 16)
    for bad in ("", "0", "1,x", "65"):
        with pytest.raises(ValueError):
            parse_concurrency_levels(bad)


def test_shares_are_exact_and_even() -> None:
    assert shares(10, 4) == [3, 3, 2, 2]
    assert shares(2, 4) == [1, 1, 0, 0]
    assert sum(shares(1001, 16)) == 1001


def test_every_lane_is_in_flight_at_once() -> None:
    lanes = 4
    flight = InFlight(threading.Barrier(lanes))
    pool = LanePool(lanes, timeout=5, describe="fake")
    try:
        runner = ParallelRequests(pool, lambda lane, op, block: flight.work)
        runner.run("encrypt", b"x" * 16, 40)
    finally:
        pool.close()
    assert flight.most == lanes  # the barrier would time out with fewer in flight
    assert flight.done == 40


def test_a_lane_error_reaches_the_caller_and_the_pool_stays_usable() -> None:
    pool = LanePool(2, timeout=5, describe="fake")

    def failing(count: int, progress: list[int]) -> None:
        raise OSError(5, "Input/output error")

    try:
        with pytest.raises(OSError, match="Input/output"):
            pool.run([failing, InFlight().work], [3, 3])
        flight = InFlight()
        pool.run([flight.work, flight.work], [2, 2])
        assert flight.done == 4
    finally:
        pool.close()


def test_a_request_that_never_completes_ends_in_a_named_timeout() -> None:
    release = threading.Event()

    def stuck(count: int, progress: list[int]) -> None:
        release.wait(10)

    pool = LanePool(2, timeout=0.2, describe="cbc-aes-hwcrypto-test-async (2 requests in flight)")
    try:
        began = time.monotonic()
        with pytest.raises(EngineError, match=r"cbc-aes-hwcrypto-test-async.*did not complete"):
            pool.run([stuck, InFlight().work], [1, 1])
        assert time.monotonic() - began < 5
        with pytest.raises(EngineError, match="unusable since lane 1 of 2"):
            pool.run([InFlight().work, InFlight().work], [1, 1])
    finally:
        release.set()
        pool.close()


def test_slow_progress_is_not_a_stall() -> None:
    """A lane that keeps completing requests may take longer than the timeout in all."""

    def slow(count: int, progress: list[int]) -> None:
        for index in range(count):
            time.sleep(0.05)
            progress[0] = index + 1

    pool = LanePool(1, timeout=0.15, describe="fake")
    try:
        pool.run([slow], [8])  # 0.4 s of steady progress
    finally:
        pool.close()


class OneAtATime:
    evidence = Evidence("aes-generic", "fake")

    def warm_up(self, op: str, block_size: int, seconds: float) -> None: ...

    def sample(self, op: str, block_size: int, seconds: float):  # type: ignore[no-untyped-def]
        raise AssertionError("not sampled")

    def close(self) -> None: ...


def test_a_path_without_concurrency_says_so() -> None:
    bound = OneAtATime()
    assert at_level(bound, 1) is bound
    with pytest.raises(EngineError, match=r"aes-generic: .*one request at a time.*4 in flight"):
        at_level(bound, 4)


def target(driver: str) -> Target:
    return Target("cbc(aes)", driver, AlgType.SKCIPHER, 128, 0, "generic", block_multiple=16)


def test_plan_measures_every_cell_at_every_level() -> None:
    cells = cells_for([target("aes-generic")], [16, 4096], concurrency=(1, 4))
    assert [(c.block_size, c.concurrency) for c in cells] == [
        (16, 1),
        (16, 4),
        (4096, 1),
        (4096, 4),
    ]
    assert cells[0].comparison != cells[1].comparison  # N=1 and N=4 are separate series
    assert "N=4" in cells[1].describe() and "N=" not in cells[0].describe()
    plan = make_plan([target("aes-generic")], [4096], 10.0, concurrency=(1, 4, 16))
    assert sorted(cell.concurrency for cell in plan.cells) == [1, 4, 16]


def test_measurement_round_trips_concurrency_and_cpu_per_byte() -> None:
    measurement = factories.measurement("d", 1e6, concurrency=4, cpu_per_byte=2e-9)
    data = measurement.to_json()
    assert data["concurrency"] == 4 and data["cpu_per_byte"] == 2e-9
    back = Measurement.from_json(data, "f.json measurements[0]")
    assert (back.concurrency, back.cpu_per_byte, back.level) == (4, 2e-9, 4)
    old = Measurement.from_json({k: v for k, v in data.items() if k != "concurrency"}, "old")
    assert old.concurrency is None and old.level == 1
    with pytest.raises(ValueError, match="old: 'concurrency' must be 1 or more"):
        Measurement.from_json({**data, "concurrency": 0}, "old")


def test_the_setting_resolves_through_the_one_resolver() -> None:
    assert Options().concurrency == (1,)
    setting = next(s for s in SETTINGS if s.name == "concurrency")
    assert (setting.option, setting.env, setting.ini) == (
        "--hwcrypto-concurrency",
        "HWCRYPTO_CONCURRENCY",
        "hwcrypto_concurrency",
    )

    def value(cli: str | None, env: str | None, ini: str | None, profile: object) -> object:
        return resolve(
            setting,
            cli_value=cli,
            environ={} if env is None else {"HWCRYPTO_CONCURRENCY": env},
            ini_value=ini,
            profile_settings={} if profile is None else {"concurrency": profile},
        ).value

    assert value("1,4,16", "2", "8", "32") == (1, 4, 16)
    assert value(None, "4,1", "8", "32") == (1, 4)
    assert value(None, None, "8", "32") == (8,)
    assert value(None, None, None, [1, 4]) == (1, 4)
    with pytest.raises(SettingError, match="HWCRYPTO_CONCURRENCY"):
        value(None, "0", None, None)


def test_cpu_meter_reads_kernel_threads_when_asked() -> None:
    meter = CpuMeter(kernel_threads=True)
    before, after = meter.start(), meter.stop()
    assert before.kernel_threads is not None and after.kernel_threads is not None
    assert CpuMeter().start().kernel_threads is None
    assert Timing(time.perf_counter, meter).meter is meter


def test_every_afalg_lane_sends_an_input_of_its_own() -> None:
    """A request handed another lane's output is only seen if no two lanes send the same."""
    block = bytes(range(16)) * 4
    inputs = [lane_input(block, lane) for lane in range(MAX_CONCURRENCY)]
    assert len(set(inputs)) == MAX_CONCURRENCY
    assert inputs[0] == block
    assert all(len(one) == len(block) and one[1:] == block[1:] for one in inputs)
    assert lane_input(b"", 3) == b""


def test_lanes_are_built_once_before_timing_and_reused_by_every_run() -> None:
    """prepare() builds each lane's loop (AF_ALG: with a reference request) so that the
    warm-up's first timed step does not pay for it; runs of the same op and size reuse them."""
    built: list[tuple[int, str, int]] = []
    flight = InFlight()

    def make_work(lane: int, op: str, block: bytes) -> LaneWork:
        built.append((lane, op, len(block)))
        return flight.work

    pool = LanePool(3, timeout=5, describe="fake")
    try:
        runner = ParallelRequests(pool, make_work)
        runner.prepare("encrypt", b"a" * 16)
        assert built == [(0, "encrypt", 16), (1, "encrypt", 16), (2, "encrypt", 16)]
        assert flight.done == 0  # building runs no request of the loops
        runner.run("encrypt", b"b" * 16, 9)
        runner.run("decrypt", b"b" * 16, 3)
    finally:
        pool.close()
    assert len(built) == 6 and flight.done == 12
