"""AF_ALG throughput: run a measurement plan against real drivers, samples in, Measurements out.

The timing loop is the AF_ALG engine's fast path (kernel/afalg.py `crypt_loop` and
`digest_loop`): per request one sendmsg carrying op and IV plus one read into a reused
buffer, on one op socket per driver -- what an efficient C user of AF_ALG does (the
harness-fidelity benchmark compares the two). Each sample times `count` requests with
`time.perf_counter`, wall time, because wall time is what a user of an offload engine
waits; CPU time is recorded beside it (measure/cpu.py).

How a run goes (`run_plan`):

1. open every target's session; binding a template instance by driver name makes the
   kernel create it, so this is also where `cbc(aes-generic)` comes to exist. A target
   that cannot be opened is reported with the engine's explanation (not registered,
   masked from AF_ALG, failed self-test) and its cells are dropped;
2. rounds of samples in the plan's interleaved order; before a cell's first sample a
   warm-up that doubles as calibration: the request count grows until a run is long enough
   to time (plan.next_calibration_count), which gives the rate that sizes later samples;
3. the Pacer spreads the time left over the rounds left, so the whole run, setup
   included, stays inside the budget;
4. a cell whose driver fails mid-run (timeout, error) keeps the samples it has, and the
   error is reported with it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Protocol

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.cpu import (
    CpuMeter,
    CpuUsage,
    bytes_per_cpu_second,
    usage_between,
)
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.plan import (
    HASH,
    SKCIPHER,
    Cell,
    Pacer,
    Plan,
    PlanError,
    Target,
    make_plan,
    next_calibration_count,
    operations_for,
    round_order,
    target_for_entry,
)
from pytest_hwcrypto.measure.stats import SampleStats
from pytest_hwcrypto.report.results import Measurement

SOURCE = "afalg"
# A warm-up that has not reached its target after this many times its length stops anyway
# (one request slower than the whole warm-up, a driver far slower than the others).
_MAX_WARMUP_FACTOR = 4.0

Clock = Callable[[], float]


class TargetSession(Protocol):
    """An open driver that can run timed request loops (a seam for tests)."""

    driver: str | None

    def run(self, op: str, block: bytes, count: int) -> None: ...

    def close(self) -> None: ...


Opener = Callable[[Target, float], TargetSession]


class AfAlgTarget:
    """A target's AF_ALG session: the key, the IV and the engine's fast path."""

    def __init__(self, target: Target, timeout: float) -> None:
        self.target = target
        self._skcipher: afalg.SkcipherSession | None = None
        self._hash: afalg.HashSession | None = None
        self._iv: bytes | None = None
        if target.kind == HASH:
            self._hash = afalg.open_hash(target.driver, timeout=timeout)
            self.driver = self._hash.driver
        else:
            key = os.urandom(target.key_bytes or 0)
            self._skcipher = afalg.open_skcipher(target.driver, key, timeout=timeout)
            self.driver = self._skcipher.driver
            self._iv = _iv_for(self._skcipher)

    def run(self, op: str, block: bytes, count: int) -> None:
        if self._hash is not None:
            self._hash.digest_loop(block, count)
        elif self._skcipher is not None:
            self._skcipher.crypt_loop(block, self._iv, op, count)

    def close(self) -> None:
        for session in (self._skcipher, self._hash):
            if session is not None:
                session.close()


def _iv_for(session: afalg.SkcipherSession) -> bytes | None:
    """A fixed IV of the driver's IV size (ecb has none); every request starts from it."""
    size = session.registration.ivsize if session.registration else 16
    return bytes(range(size)) if size else None


def open_afalg_target(target: Target, timeout: float) -> TargetSession:
    return AfAlgTarget(target, timeout)


@dataclass
class OpenFailure:
    """A target that could not be measured at all, and why (the engine's explanation)."""

    target: Target
    message: str
    masked: bool = False  # registered but hidden from AF_ALG: a finding, not a failure
    unavailable: bool = False  # no algif_<type> here: nothing to say about the driver


@dataclass
class CellRecord:
    """Everything measured for one cell."""

    cell: Cell
    driver: str
    samples: list[float] = field(default_factory=list)  # bytes/s
    operations: int = 0
    timed_seconds: float = 0.0
    cpu: CpuUsage = field(default_factory=CpuUsage)
    rate: float = 0.0  # requests per second, the latest estimate
    warmed_up: bool = False
    error: str | None = None

    def add_sample(self, count: int, seconds: float, cpu: CpuUsage) -> None:
        seconds = max(seconds, 1e-9)
        self.samples.append(count * self.cell.block_size / seconds)
        self.operations += count
        self.timed_seconds += seconds
        self.cpu = self.cpu + cpu
        self.rate = count / seconds

    def measurement(self, load: str) -> Measurement | None:
        """The Measurement (DESIGN.md section 3 shape), or None without samples."""
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
            source=SOURCE,
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
            cpu_seconds=round(self.cpu.process_seconds, 6),
            bytes_per_cpu_second=bytes_per_cpu_second(total_bytes, self.cpu.process_seconds),
            driver_class=target.driver_class,
            extra=extra,
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

    def measurements(self) -> list[Measurement]:
        found = (record.measurement(self.load) for record in self.records)
        return [measurement for measurement in found if measurement is not None]

    def records_of(self, algorithm: str) -> list[CellRecord]:
        return [r for r in self.records if r.cell.target.algorithm == algorithm]

    def failures_of(self, algorithm: str) -> list[OpenFailure]:
        return [f for f in self.failures if f.target.algorithm == algorithm]


def run_plan(
    plan: Plan,
    *,
    timeout: float = afalg.DEFAULT_TIMEOUT,
    load: BackgroundLoad | None = None,
    opener: Opener = open_afalg_target,
    clock: Clock = time.perf_counter,
    meter: CpuMeter | None = None,
) -> ThroughputRun:
    """Measure every cell of `plan` within its budget (see the module docstring)."""
    started = clock()
    meter = meter or CpuMeter(excluded_pids=(lambda: load.pids) if load else tuple)
    sessions, failures = _open_sessions(plan.targets, opener, timeout)
    try:
        records = [
            CellRecord(cell, sessions[cell.target].driver or cell.target.driver)
            for cell in plan.cells
            if cell.target in sessions
        ]
        rounds = _run_rounds(plan, records, sessions, meter, clock, started)
    finally:
        for session in sessions.values():
            session.close()
    return ThroughputRun(
        plan=plan,
        records=records,
        failures=failures,
        seconds=clock() - started,
        rounds=rounds,
        load=load.describe() if load else "none",
    )


def _open_sessions(
    targets: Sequence[Target], opener: Opener, timeout: float
) -> tuple[dict[Target, TargetSession], list[OpenFailure]]:
    sessions: dict[Target, TargetSession] = {}
    failures: list[OpenFailure] = []
    for target in targets:
        try:
            sessions[target] = opener(target, timeout)
        except afalg.AfAlgError as error:
            failures.append(
                OpenFailure(
                    target,
                    str(error),
                    masked=isinstance(error, afalg.AfAlgMasked),
                    unavailable=isinstance(error, afalg.AfAlgUnavailable),
                )
            )
        except OSError as error:
            failures.append(OpenFailure(target, f"{target.driver}: {error}"))
    return sessions, failures


def _run_rounds(
    plan: Plan,
    records: list[CellRecord],
    sessions: dict[Target, TargetSession],
    meter: CpuMeter,
    clock: Clock,
    started: float,
) -> int:
    by_cell = {record.cell: record for record in records}
    blocks: dict[int, bytes] = {}
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
            block = blocks.setdefault(cell.block_size, os.urandom(cell.block_size))
            session = sessions[cell.target]
            try:
                if not record.warmed_up:
                    _warm_up(record, session, block, plan.warmup_seconds, clock)
                _sample(record, session, block, sample_seconds, meter, clock)
            except (afalg.AfAlgError, OSError) as error:
                record.error = str(error)
        rounds += 1


def _warm_up(
    record: CellRecord, session: TargetSession, block: bytes, seconds: float, clock: Clock
) -> None:
    """Grow the request count until one run is long enough to time; keep its rate."""
    count = 1
    spent = 0.0
    while True:
        began = clock()
        session.run(record.cell.op, block, count)
        elapsed = clock() - began
        spent += elapsed
        record.rate = count / max(elapsed, 1e-9)
        grown = next_calibration_count(count, elapsed, seconds)
        if grown is None or spent + elapsed * (grown / count) > _MAX_WARMUP_FACTOR * seconds:
            break
        count = grown
    record.warmed_up = True


def _sample(
    record: CellRecord,
    session: TargetSession,
    block: bytes,
    seconds: float,
    meter: CpuMeter,
    clock: Clock,
) -> None:
    count = operations_for(record.rate, seconds)
    before = meter.snapshot()
    began = clock()
    session.run(record.cell.op, block, count)
    elapsed = clock() - began
    after = meter.snapshot()
    record.add_sample(count, elapsed, usage_between(before, after))


# ---------------------------------------------------------------------------------------
# one measurement: `hwcrypto bench afalg`


class BenchError(RuntimeError):
    """One measurement could not be made; the message says why (one line)."""


def bench(
    driver: str,
    *,
    block_size: int,
    seconds: float,
    key_bits: int | None = None,
    op: str | None = None,
    timeout: float = afalg.DEFAULT_TIMEOUT,
    load: BackgroundLoad | None = None,
) -> Measurement:
    """Measure one driver at one block size for `seconds`, as the throughput suite does."""
    target = bench_target(driver, key_bits)
    op = op or ("digest" if target.kind == HASH else afalg.ENCRYPT)
    if not target.accepts(block_size):
        raise BenchError(
            f"{driver}: {block_size} B is not a multiple of its {target.block_multiple}-byte "
            "block size"
        )
    try:
        plan = make_plan([target], [block_size], seconds, ops={target.kind: (op,)})
    except PlanError as error:
        raise BenchError(str(error)) from None
    run = run_plan(plan, timeout=timeout, load=load)
    if run.failures:
        raise BenchError(run.failures[0].message)
    measurement = run.records[0].measurement(run.load) if run.records else None
    if run.records and run.records[0].error:
        raise BenchError(run.records[0].error or "")
    if measurement is None:
        raise BenchError(f"{driver}: no sample could be taken in {seconds:g} s")
    return measurement


def bench_target(driver: str, key_bits: int | None) -> Target:
    """The driver as /proc/crypto lists it; a template instance is created first."""
    entry = _find_driver(driver)
    if entry is None:
        _instantiate(driver, key_bits)
        entry = _find_driver(driver)
    if entry is None:
        raise BenchError(
            f"driver {driver} is not registered and binding it created nothing: use a driver "
            "name /proc/crypto lists, or a template over one, e.g. cbc(aes-generic)"
        )
    try:
        return target_for_entry(entry, key_bits)
    except PlanError as error:
        raise BenchError(str(error)) from None


def _find_driver(driver: str) -> InventoryEntry | None:
    try:
        entries = build_inventory(read_proc_crypto())
    except (OSError, ValueError) as error:
        raise BenchError(f"cannot read /proc/crypto: {error}") from None
    return next((e for e in entries if e.driver == driver and not e.alg.is_internal), None)


def _instantiate(driver: str, key_bits: int | None) -> None:
    """Bind the name once so the kernel builds the template instance; errors tell why."""
    last: afalg.AfAlgError | None = None
    for kind in (SKCIPHER, HASH):
        try:
            if kind == SKCIPHER:
                key = os.urandom((key_bits or 128) // 8)
                afalg.open_skcipher(driver, key).close()
            else:
                afalg.open_hash(driver).close()
            return
        except afalg.BadKeyLength:
            return  # bound, so instantiated; the key size is checked when measuring
        except afalg.AfAlgUnavailable as error:
            raise BenchError(str(error)) from None
        except afalg.AfAlgError as error:
            last = error
    if last is not None and not isinstance(last, afalg.DriverNotRegistered):
        raise BenchError(str(last))
