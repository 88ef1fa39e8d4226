# SPDX-License-Identifier: MIT
"""The measurement-engine seam: what every path that moves bytes through a kernel driver offers.

AF_ALG is one such path today (measure/afalg_engine.py); dm-crypt, cryptsetup benchmark,
OpenSSL's engines and /dev/crypto plug in here the same way. The run loop
(measure/runner.py), the rules and the reports see only this interface and the
Measurement records the loop builds from it, which carry the engine's `source` and the
driver the engine *proved* served the bytes (docs/architecture.md, "Engines").

An engine says which targets it can reach (`reachable`), and opens a target bound to
exactly one driver (`open`), returning a BoundTarget with the evidence of that driver.
A BoundTarget takes one timed sample at a time. Two kinds of engines fit:

* request loops (AF_ALG, /dev/crypto): the harness issues N requests and times them --
  `RequestLoop` turns their `run(op, block, count)` into warm-up and samples;
* self-timed tools (tcrypt, openssl speed, fio): the tool runs for a while and reports
  bytes and seconds itself -- such a target implements `warm_up` and `sample` directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Protocol

from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.cpu import CpuMeter, CpuUsage, usage_between
from pytest_hwcrypto.measure.plan import next_calibration_count, operations_for
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.vocabulary import Source

Clock = Callable[[], float]

# A warm-up that has not reached its target after this many times its length stops anyway
# (one request slower than the whole warm-up, a driver far slower than the others).
MAX_WARMUP_FACTOR = 4.0


class EngineError(Exception):
    """A target could not be opened or sampled; the message is one line saying why.

    `masked`: registered but hidden from this path (a finding, not a failure);
    `unavailable`: the path itself is missing here (nothing to say about the driver).
    """

    def __init__(self, message: str, *, masked: bool = False, unavailable: bool = False):
        super().__init__(message)
        self.masked = masked
        self.unavailable = unavailable


@dataclass(frozen=True)
class Evidence:
    """Which driver served, and how the engine knows (e.g. AF_ALG: refcnt rose on bind)."""

    driver: str
    how: str


@dataclass(frozen=True)
class Sample:
    """One timed run: `operations` requests of `block_size` bytes in `seconds` (wall)."""

    operations: int
    block_size: int
    seconds: float
    cpu: CpuUsage = field(default_factory=CpuUsage)

    @property
    def bytes_per_second(self) -> float:
        return self.operations * self.block_size / max(self.seconds, 1e-9)


@dataclass(frozen=True)
class Timing:
    """The clock and CPU meter samples are taken with (test seams; real ones by default)."""

    clock: Clock
    meter: CpuMeter


class BoundTarget(Protocol):
    """A target opened on one path and bound to exactly one driver."""

    evidence: Evidence

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        """Bring caches and clocks up, and learn the rate that sizes later samples."""

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        """One timed sample of about `seconds`; raises EngineError when the driver fails."""

    def close(self) -> None: ...


class Engine(Protocol):
    """One path through which bytes reach kernel drivers."""

    source: Source
    # How many sessions of one target the run loop may open and use in turn, round by
    # round (measure/runner.py): request loops, whose sessions are cheap and may each carry
    # a lasting offset, allow several; a target that is a whole volume or a tool run, one.
    max_sessions: int

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        """The targets this engine can measure on this kernel (from /proc/crypto)."""

    def open(self, target: Target, timing: Timing) -> BoundTarget:
        """Bind `target.driver` exactly; raises EngineError saying why it cannot be."""


class RequestRunner(Protocol):
    """What a request-loop engine provides: run `count` requests of `block`."""

    def run(self, op: str, block: bytes, count: int) -> None: ...


class RequestLoop:
    """Warm-up and timed samples for an engine whose unit of work is one request.

    The warm-up doubles as calibration: the request count grows until a run is long
    enough to time (plan.next_calibration_count), and the rate seen then sizes the
    samples. One request block per size is drawn once and reused.
    """

    def __init__(self, runner: RequestRunner, timing: Timing, make_block: Callable[[int], bytes]):
        self.runner = runner
        self.timing = timing
        self._make_block = make_block
        self._blocks: dict[int, bytes] = {}
        self._rates: dict[tuple[str, int], float] = {}

    def _block(self, size: int) -> bytes:
        if size not in self._blocks:
            self._blocks[size] = self._make_block(size)
        return self._blocks[size]

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        clock, block = self.timing.clock, self._block(block_size)
        count, spent = 1, 0.0
        while True:
            began = clock()
            self.runner.run(op, block, count)
            elapsed = clock() - began
            spent += elapsed
            self._rates[(op, block_size)] = count / max(elapsed, 1e-9)
            grown = next_calibration_count(count, elapsed, seconds)
            if grown is None or spent + elapsed * (grown / count) > MAX_WARMUP_FACTOR * seconds:
                return
            count = grown

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        count = operations_for(self._rates.get((op, block_size), 0.0), seconds)
        block, clock, meter = self._block(block_size), self.timing.clock, self.timing.meter
        before = meter.start()
        began = clock()
        self.runner.run(op, block, count)
        elapsed = clock() - began
        after = meter.stop()
        sample = Sample(count, block_size, max(elapsed, 1e-9), usage_between(before, after))
        # The latest rate sizes the next sample: drivers drift over a run (thermal, load).
        self._rates[(op, block_size)] = count / sample.seconds
        return sample
