# SPDX-License-Identifier: MIT
"""Run a measurement plan through an engine: interleaved samples in, Measurements out.

Engine-agnostic (measure/engine.py is the seam): AF_ALG today, any other path that
implements Engine tomorrow. How a run goes (`run_plan`):

1. open every target through the engine, bound to its exact driver, as many times as the
   plan asks and the engine allows (`TargetSessions`); a target that cannot be opened is
   reported with the engine's explanation (not registered, masked from this path, failed
   self-test) and its cells are dropped;
2. rounds of samples in the plan's interleaved order (so drift and other load on a shared
   machine hit every driver alike), each round through the target's next session (so a
   session that is slow for as long as it lives moves a minority of the samples, not the
   median); before a session's first sample of a cell it warms up, which also tells a
   request-loop engine how many requests fill a sample;
3. the Pacer spreads the time left over the rounds left, so the whole run, setup
   included, stays inside the budget;
4. a cell whose driver fails mid-run (timeout, error) keeps the samples it has, and the
   error is reported with it.

Each sample is wall time, because wall time is what a user of an offload engine waits;
CPU time is recorded beside it (measure/cpu.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.measure.cpu import CpuMeter, CpuUsage, bytes_per_cpu_second, cpu_per_byte
from pytest_hwcrypto.measure.engine import (
    BoundTarget,
    Clock,
    Engine,
    EngineError,
    Evidence,
    Sample,
    Timing,
)
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.parallel import at_level
from pytest_hwcrypto.measure.plan import Cell, Pacer, Plan, round_order
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.model.results import HOST_SPEED_KEY, ROUNDS_KEY, Measurement
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.vocabulary import Source


@dataclass
class OpenFailure:
    """A target that could not be measured at all, and why (the engine's explanation)."""

    target: Target
    message: str
    masked: bool = False  # registered but hidden from AF_ALG: a finding, not a failure
    unavailable: bool = False  # no algif_<type> here: nothing to say about the driver


@dataclass
class CellRecord:
    """Everything measured for one cell, through one engine, on the driver it proved."""

    cell: Cell
    driver: str
    source: Source = Source.AFALG
    evidence: str = ""
    samples: list[float] = field(default_factory=list)  # bytes/s
    host_speeds: list[float] = field(default_factory=list)  # around each sample, if asked
    operations: int = 0
    timed_seconds: float = 0.0
    cpu: CpuUsage = field(default_factory=CpuUsage)
    sessions: int = 1
    warmed_up: set[int] = field(default_factory=set)  # indexes of the sessions warmed up
    error: str | None = None

    def add_sample(self, sample: Sample) -> None:
        self.samples.append(sample.bytes_per_second)
        self.operations += sample.operations
        self.timed_seconds += sample.seconds
        # The first sample's usage starts the sum: a figure the meter does not read (kernel
        # threads, /proc/stat) stays unknown rather than summed from a zero.
        self.cpu = sample.cpu if len(self.samples) == 1 else self.cpu + sample.cpu

    def measurement(self, load: str, rounds_id: str | None = None) -> Measurement | None:
        """The Measurement (results JSON shape), or None without samples; `rounds_id` names
        the run whose rounds the samples were taken in (ThroughputRun.rounds_id)."""
        if not self.samples:
            return None
        stats = SampleStats.from_samples(self.samples)
        target = self.cell.target
        total_bytes = float(self.operations * self.cell.block_size)
        extra: dict[str, object] = {
            "operations": self.operations,
            "seconds": round(self.timed_seconds, 6),
            "load": load,
        }
        if rounds_id is not None:
            extra[ROUNDS_KEY] = rounds_id
        if self.host_speeds and len(self.host_speeds) == len(self.samples):
            extra[HOST_SPEED_KEY] = list(self.host_speeds)
        if self.evidence:
            extra["evidence"] = self.evidence
        if self.sessions > 1:
            extra["sessions"] = self.sessions
        if self.cpu.kernel_thread_seconds is not None:
            extra["kernel_thread_cpu_seconds"] = round(self.cpu.kernel_thread_seconds, 6)
        if self.cpu.system_seconds is not None:
            extra["system_cpu_seconds"] = round(self.cpu.system_seconds, 6)
            per_system = bytes_per_cpu_second(total_bytes, self.cpu.system_seconds)
            if per_system is not None:
                extra["bytes_per_system_cpu_second"] = per_system
        if not target.registered:
            extra["instantiated"] = True  # a template instance created by this run
        if self.error:
            extra["error"] = self.error
        return Measurement(
            source=self.source,
            algorithm=target.algorithm,
            driver=self.driver,
            key_bits=target.key_bits,
            block_size=self.cell.block_size,
            op=self.cell.op,
            bytes_per_second=stats.median,
            samples=list(self.samples),
            ci_low=stats.ci_low,
            ci_high=stats.ci_high,
            cov=stats.cov,
            cpu_seconds=round(self.cpu.process_seconds, 6) if self.cpu.measured else None,
            bytes_per_cpu_second=bytes_per_cpu_second(total_bytes, self.cpu.process_seconds)
            if self.cpu.measured
            else None,
            driver_class=target.driver_class,
            extra=extra,
            concurrency=self.cell.concurrency,
            cpu_per_byte=cpu_per_byte(total_bytes, self.cpu.path_seconds)
            if self.cpu.measured
            else None,
        )


@dataclass
class ThroughputRun:
    """The outcome of a run: per-cell records, targets that failed to open, timing."""

    plan: Plan
    records: list[CellRecord]
    failures: list[OpenFailure]
    seconds: float
    rounds: int
    load: str = "none"
    # Names this run's rounds in every measurement it yields, so verdicts can pair sample i
    # of two drivers (verdict/pooling.py); unique, because files of many runs get merged.
    rounds_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])

    def measurements(self) -> list[Measurement]:
        found = (record.measurement(self.load, self.rounds_id) for record in self.records)
        return [measurement for measurement in found if measurement is not None]

    def records_of(self, algorithm: str) -> list[CellRecord]:
        return [r for r in self.records if r.cell.target.algorithm == algorithm]

    def failures_of(self, algorithm: str) -> list[OpenFailure]:
        return [f for f in self.failures if f.target.algorithm == algorithm]


def run_plan(
    plan: Plan,
    engine: Engine,
    *,
    load: BackgroundLoad | None = None,
    clock: Clock = time.perf_counter,
    meter: CpuMeter | None = None,
    host_speed: Callable[[], float] | None = None,
) -> ThroughputRun:
    """Measure every cell of `plan` through `engine` within the budget (module docstring).

    `host_speed` (measure/host_speed.py), when given, is read right before and right after
    every sample, and their mean recorded beside it (`extra[HOST_SPEED_KEY]`)."""
    started = clock()
    # Kernel threads are read only when requests in flight are a measured dimension: the
    # CPU an asynchronous driver costs is spent there, and reading them costs time.
    meter = meter or CpuMeter(
        excluded_pids=(lambda: load.pids) if load else tuple,
        kernel_threads=any(cell.concurrency > 1 for cell in plan.cells),
    )
    count = max(1, min(plan.sessions, engine.max_sessions))
    sessions, failures = _open_targets(plan.targets, engine, Timing(clock, meter), count)
    try:
        records = [
            CellRecord(
                cell,
                sessions[cell.target].evidence.driver,
                source=engine.source,
                evidence=sessions[cell.target].evidence.how,
                sessions=len(sessions[cell.target].bound),
            )
            for cell in plan.cells
            if cell.target in sessions
        ]
        rounds = _run_rounds(plan, records, sessions, clock, started, host_speed)
    finally:
        for opened in sessions.values():
            opened.close()
    return ThroughputRun(
        plan=plan,
        records=records,
        failures=failures,
        seconds=clock() - started,
        rounds=rounds,
        load=load.describe() if load else "none",
    )


@dataclass
class TargetSessions:
    """The sessions one target is measured through, used in turn: round r uses r mod n.

    Every session is bound to the same driver (checked on opening), so the samples of a
    cell are one series; spreading them over sessions keeps a session that carries a
    lasting offset -- seen under QEMU/TCG, cause unknown -- from moving the whole series.
    """

    bound: list[BoundTarget]

    @property
    def evidence(self) -> Evidence:
        return self.bound[0].evidence

    def index_for(self, round_index: int) -> int:
        return round_index % len(self.bound)

    def close(self) -> None:
        for session in self.bound:
            session.close()


def open_sessions(target: Target, engine: Engine, timing: Timing, count: int) -> TargetSessions:
    """`count` sessions of `target`, all proven to be served by the same driver.

    Raises EngineError (after closing what it opened) when one cannot be opened, or when
    two were served by different drivers -- the series would mix two drivers.
    """
    opened: list[BoundTarget] = []
    try:
        for _ in range(count):
            opened.append(engine.open(target, timing))
            first, latest = opened[0].evidence.driver, opened[-1].evidence.driver
            if latest != first:
                raise EngineError(
                    f"{target.driver}: two sessions opened for one series were served by "
                    f"different drivers ({first}, then {latest})"
                )
    except BaseException:
        for session in opened:
            session.close()
        raise
    return TargetSessions(opened)


def _open_targets(
    targets: Sequence[Target], engine: Engine, timing: Timing, count: int
) -> tuple[dict[Target, TargetSessions], list[OpenFailure]]:
    sessions: dict[Target, TargetSessions] = {}
    failures: list[OpenFailure] = []
    for target in targets:
        try:
            sessions[target] = open_sessions(target, engine, timing, count)
        except EngineError as error:
            failures.append(
                OpenFailure(target, str(error), masked=error.masked, unavailable=error.unavailable)
            )
    return sessions, failures


def _run_rounds(
    plan: Plan,
    records: list[CellRecord],
    sessions: dict[Target, TargetSessions],
    clock: Clock,
    started: float,
    host_speed: Callable[[], float] | None = None,
) -> int:
    by_cell = {record.cell: record for record in records}
    pacer = Pacer.for_plan(plan, started, cells=len(records))
    rounds = 0
    while True:
        sample_seconds = pacer.sample_seconds(clock(), rounds)
        if sample_seconds is None:
            return rounds
        for cell in round_order([record.cell for record in records], rounds):
            record = by_cell[cell]
            if record.error:
                continue
            opened = sessions[cell.target]
            index = opened.index_for(rounds)
            try:
                bound = at_level(opened.bound[index], cell.concurrency)
                if index not in record.warmed_up:
                    # The plan's warm-up per cell, shared by the cell's sessions.
                    warmup = plan.warmup_seconds / len(opened.bound)
                    bound.warm_up(cell.op, cell.block_size, warmup)
                    record.warmed_up.add(index)
                before = host_speed() if host_speed else 0.0
                record.add_sample(bound.sample(cell.op, cell.block_size, sample_seconds))
                if host_speed:
                    record.host_speeds.append((before + host_speed()) / 2)
            except EngineError as error:
                record.error = str(error)
        rounds += 1
