"""The measurement plan (pure): what to measure, in which order, and for how long.

Three questions, each answered here without touching a kernel so that it can be unit-tested:

* **What.** Every algorithm the kernel can serve with two or more drivers, measured on all of
  them (`discover_targets`).  Block-cipher modes (ecb, cbc, ctr, xts) are measured over
  *every* implementation of the cipher: on a kernel with `aes-generic` and `aes-fixed-time`
  the names `cbc(aes-generic)` and `cbc(aes-fixed-time)` are template instances the kernel
  creates when AF_ALG binds them by driver name, even if nothing registered them yet.
  (xts is the odd one: on 6.1 only `xts(ecb(aes-generic))` instantiates; `xts(aes-generic)`
  gives ENOENT.)  A device or CPU-instruction driver that already registers the mode itself
  (`cbc-aes-aesni`, `virtio_crypto_aes_cbc`) is measured as registered.
* **In which order.** Samples are taken in rounds: every cell (driver x op x block size)
  once per round, drivers of one comparison next to each other and rotated every round,
  comparisons shuffled every round (`round_order`), so slow drift and periodic
  disturbances on a shared machine fall on all drivers alike instead of on whichever
  happens to run last.
* **How long.** One budget covers the whole run (`make_plan`, `Pacer`): setup, a warm-up per
  cell that also calibrates how many operations make a reliable sample (grown until the run
  is long enough to time, the way cryptsetup's benchmark does), and the samples.  When the
  budget cannot give every algorithm a useful share, whole algorithms are left out, lowest
  rank first, and said so, rather than measuring everything too briefly to decide anything.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.kernel.inventory import InventoryEntry, type_family
from pytest_hwcrypto.vocabulary import AlgType, DriverClass, Op

# Ranks: lower ranks are planned first and left out last when the budget is short.
RANK_CIPHER_MODES = 0  # what dm-crypt, cryptsetup and the AF_ALG users of a board run
RANK_OTHER_SKCIPHERS = 1  # chacha20 and friends
RANK_HASHES = 2

# The modes measured over every implementation of a block cipher.
MODE_TEMPLATES = ("ecb", "cbc", "ctr", "xts")

# Hashes that need a key; the throughput suite measures plain digests only.
KEYED_HASHES = frozenset({"ghash", "poly1305", "polyval", "nhpoly1305", "michael_mic"})
KEYED_HASH_TEMPLATES = ("hmac(", "cmac(", "xcbc(", "cbcmac(", "vmac", "essiv(")

DEFAULT_OPS: Mapping[str, Sequence[str]] = {
    AlgType.SKCIPHER: (Op.ENCRYPT,),
    AlgType.HASH: (Op.DIGEST,),
}

# A sample shorter than this is dominated by timer and scheduler granularity (a 4 ms
# tick is 20 % of a 20 ms sample).
MIN_SAMPLE_SECONDS = 0.02
# Below this share of the budget per cell the medians are too noisy to decide a rule on
# (seen on the UML board: CoV of 14 % for 0.5 s samples at 4 KiB on a busy host).
MIN_CELL_SECONDS = 0.6
PREFERRED_SAMPLE_SECONDS = 0.1
MIN_SAMPLES = 5
MAX_SAMPLES = 11
# Opening a socket can instantiate a template and run its self-test.
SETUP_SECONDS_PER_TARGET = 0.05
WARMUP_SHARE = 0.1
MAX_WARMUP_SECONDS = 0.25
# Left unplanned: reading results, building verdicts, Python overhead between samples.
SAFETY_SHARE = 0.05


class PlanError(ValueError):
    """A plan cannot be made from these settings; the message says which one to change."""


@dataclass(frozen=True)
class Target:
    """One driver to bind AF_ALG to, with what the plan needs to know about it."""

    algorithm: str
    driver: str
    kind: str  # AlgType.SKCIPHER or AlgType.HASH
    key_bits: int | None
    rank: int
    driver_class: str | None = None
    registered: bool = True  # False: a template instance the kernel creates when bound
    block_multiple: int = 1  # request lengths must be multiples of this

    @property
    def key_bytes(self) -> int | None:
        return None if self.key_bits is None else self.key_bits // 8

    def accepts(self, block_size: int) -> bool:
        return block_size > 0 and block_size % max(self.block_multiple, 1) == 0


@dataclass(frozen=True)
class Cell:
    """One series of samples: a driver, an operation and a block size."""

    target: Target
    op: str
    block_size: int

    @property
    def comparison(self) -> tuple[str, int | None, str, int]:
        """Cells with the same comparison key are compared with each other."""
        return (self.target.algorithm, self.target.key_bits, self.op, self.block_size)

    def describe(self) -> str:
        return f"{self.target.algorithm} {self.target.driver} {self.op} {self.block_size} B"


@dataclass(frozen=True)
class Plan:
    """The cells to measure and how the budget is split between them."""

    cells: tuple[Cell, ...]
    samples: int
    sample_seconds: float
    warmup_seconds: float
    setup_seconds: float
    budget: float
    left_out: Mapping[str, str] = field(default_factory=dict)  # algorithm -> why

    @property
    def cell_seconds(self) -> float:
        return self.warmup_seconds + self.samples * self.sample_seconds

    @property
    def targets(self) -> tuple[Target, ...]:
        return tuple(dict.fromkeys(cell.target for cell in self.cells))


# ---------------------------------------------------------------------------------------
# what: targets from the inventory


def instance_driver_name(mode: str, cipher_driver: str) -> str:
    """The driver name that makes the kernel instantiate `mode` over exactly that cipher."""
    if mode == "xts":
        return f"xts(ecb({cipher_driver}))"
    return f"{mode}({cipher_driver})"


def discover_targets(entries: Sequence[InventoryEntry]) -> list[Target]:
    """Every driver of every algorithm with two or more drivers, in rank order."""
    usable = [entry for entry in entries if _usable(entry)]
    mode_targets = _cipher_mode_targets(usable)
    covered = {target.algorithm for target in mode_targets}
    return mode_targets + _other_skcipher_targets(usable, covered) + _hash_targets(usable)


def algorithms(targets: Iterable[Target]) -> list[str]:
    return list(dict.fromkeys(target.algorithm for target in targets))


def _usable(entry: InventoryEntry) -> bool:
    """Drivers AF_ALG hands out (not internal helpers, not failed or pending self-tests),
    other than the null algorithms, which do nothing worth timing."""
    return (
        not entry.alg.is_internal
        and entry.selftest in (None, "passed")
        and "_null" not in entry.name
    )


def _by_name(entries: Iterable[InventoryEntry], family: str) -> dict[str, list[InventoryEntry]]:
    grouped: dict[str, list[InventoryEntry]] = {}
    for entry in entries:
        if type_family(entry.type) == family:
            drivers = grouped.setdefault(entry.name, [])
            if entry.driver not in {known.driver for known in drivers}:
                drivers.append(entry)
    return grouped


def _cipher_mode_targets(usable: Sequence[InventoryEntry]) -> list[Target]:
    ciphers = _by_name(usable, "cipher")
    skciphers = _by_name(usable, AlgType.SKCIPHER)
    targets: list[Target] = []
    for cipher_name, implementations in ciphers.items():
        for mode in MODE_TEMPLATES:
            algorithm = f"{mode}({cipher_name})"
            registered = skciphers.get(algorithm, [])
            if len(implementations) < 2 and not registered:
                continue  # one cipher, nothing registered: nothing to compare
            found = _mode_drivers(algorithm, mode, implementations, registered)
            if len(found) >= 2:
                targets.extend(found)
    return targets


def _mode_drivers(
    algorithm: str,
    mode: str,
    implementations: Sequence[InventoryEntry],
    registered: Sequence[InventoryEntry],
) -> list[Target]:
    key_bits = _mode_key_bits(mode, implementations, registered)
    found = {
        entry.driver: _registered_target(entry, RANK_CIPHER_MODES, key_bits) for entry in registered
    }
    registered_classes = {entry.driver_class for entry in registered}
    for cipher in implementations:
        # Software is always measured over every implementation; an accelerated cipher
        # only when nothing of its class registers the mode itself (a template over
        # aes-aesni is not what anyone gets when cbc-aes-aesni exists).
        if cipher.driver_class != DriverClass.GENERIC and cipher.driver_class in registered_classes:
            continue
        driver = instance_driver_name(mode, cipher.driver)
        if driver in found:
            continue
        found[driver] = Target(
            algorithm=algorithm,
            driver=driver,
            kind=AlgType.SKCIPHER,
            key_bits=key_bits,
            rank=RANK_CIPHER_MODES,
            driver_class=cipher.driver_class,
            registered=False,
            block_multiple=1 if mode == "ctr" else (cipher.alg.blocksize or 1),
        )
    return list(found.values())


def _mode_key_bits(
    mode: str, implementations: Sequence[InventoryEntry], registered: Sequence[InventoryEntry]
) -> int | None:
    """One key size per algorithm, so every driver of it is measured alike.

    The smallest key a cipher takes with 16 bytes preferred (AES-128, as cryptsetup and
    openssl speed default to); xts takes two keys of that size.
    """
    key_bytes = _common_key_bytes(implementations)
    if key_bytes is not None:
        return 8 * key_bytes * (2 if mode == "xts" else 1)
    return _common_key_bits(registered)


def _common_key_bytes(entries: Sequence[InventoryEntry]) -> int | None:
    ranges = [
        (entry.alg.min_keysize, entry.alg.max_keysize)
        for entry in entries
        if entry.alg.min_keysize is not None
    ]
    if not ranges:
        return None
    low = max(minimum for minimum, _ in ranges)
    high = min(maximum if maximum is not None else minimum for minimum, maximum in ranges)
    if low <= 16 <= high:
        return 16
    return low


def _common_key_bits(entries: Sequence[InventoryEntry]) -> int | None:
    key_bytes = _common_key_bytes(entries)
    return None if key_bytes is None else 8 * key_bytes


def target_for_entry(
    entry: InventoryEntry, key_bits: int | None = None, rank: int = RANK_CIPHER_MODES
) -> Target:
    """A target for one registered driver (`hwcrypto bench`); the key size defaults to the
    one discover_targets would use (AES-128, two AES-128 keys for xts)."""
    family = type_family(entry.type)
    if family not in (AlgType.SKCIPHER, AlgType.HASH):
        raise PlanError(
            f"{entry.driver} is a {entry.type} driver: only skcipher and hash drivers "
            "can be timed through AF_ALG here"
        )
    if family == AlgType.SKCIPHER and key_bits is None:
        key_bits = _common_key_bits([entry])
        if key_bits is None:
            raise PlanError(f"{entry.driver}: /proc/crypto gives no key size; give one")
    return _registered_target(entry, rank, key_bits)


def _registered_target(entry: InventoryEntry, rank: int, key_bits: int | None) -> Target:
    kind = AlgType.HASH if type_family(entry.type) == AlgType.HASH else AlgType.SKCIPHER
    return Target(
        algorithm=entry.name,
        driver=entry.driver,
        kind=kind,
        key_bits=key_bits if kind == AlgType.SKCIPHER else None,
        rank=rank,
        driver_class=entry.driver_class,
        registered=True,
        block_multiple=(entry.alg.blocksize or 1) if kind == AlgType.SKCIPHER else 1,
    )


def _other_skcipher_targets(usable: Sequence[InventoryEntry], covered: set[str]) -> list[Target]:
    targets: list[Target] = []
    for name, entries in _by_name(usable, AlgType.SKCIPHER).items():
        if name in covered or len(entries) < 2:
            continue
        key_bits = _common_key_bits(entries)
        targets.extend(_registered_target(e, RANK_OTHER_SKCIPHERS, key_bits) for e in entries)
    return targets


def _hash_targets(usable: Sequence[InventoryEntry]) -> list[Target]:
    targets: list[Target] = []
    for name, entries in _by_name(usable, AlgType.HASH).items():
        if len(entries) < 2 or _is_keyed_hash(name):
            continue
        targets.extend(_registered_target(entry, RANK_HASHES, None) for entry in entries)
    return targets


def _is_keyed_hash(name: str) -> bool:
    return name in KEYED_HASHES or name.startswith(KEYED_HASH_TEMPLATES)


# ---------------------------------------------------------------------------------------
# how long: splitting the budget


def cells_for(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    ops: Mapping[str, Sequence[str]] = DEFAULT_OPS,
) -> list[Cell]:
    """Every driver x op x block size the driver accepts."""
    return [
        Cell(target, op, size)
        for target in targets
        for op in ops.get(target.kind, ())
        for size in block_sizes
        if target.accepts(size)
    ]


def make_plan(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    budget: float,
    *,
    ops: Mapping[str, Sequence[str]] = DEFAULT_OPS,
    min_cell_seconds: float = MIN_CELL_SECONDS,
    min_samples: int = MIN_SAMPLES,
    max_samples: int = MAX_SAMPLES,
    prefer: Collection[str] = (),
) -> Plan:
    """Split `budget` seconds over the cells; leave out whole algorithms that do not fit.

    Algorithms in `prefer` (those a board profile has rules for) come first, then the rest
    in rank order (then in the order given), while every cell keeps at least
    `min_cell_seconds`; the first algorithm always stays, so a small budget measures
    something briefly rather than nothing.
    """
    if budget <= 0:
        raise PlanError("the budget must be more than 0 seconds")
    ordered = sorted(targets, key=lambda t: (t.algorithm not in prefer, t.rank))
    chosen, left_out = _fit_algorithms(ordered, block_sizes, budget, ops, min_cell_seconds)
    cells = cells_for(chosen, block_sizes, ops)
    if not cells:
        return Plan((), 0, 0.0, 0.0, 0.0, budget, left_out)
    setup = SETUP_SECONDS_PER_TARGET * len(chosen)
    per_cell = _measuring_seconds(budget, setup) / len(cells)
    warmup = min(MAX_WARMUP_SECONDS, WARMUP_SHARE * per_cell)
    samples, sample_seconds = split_samples(per_cell - warmup, min_samples, max_samples)
    return Plan(tuple(cells), samples, sample_seconds, warmup, setup, budget, left_out)


def split_samples(
    seconds: float, min_samples: int = MIN_SAMPLES, max_samples: int = MAX_SAMPLES
) -> tuple[int, float]:
    """(samples, seconds each) for one cell: about PREFERRED_SAMPLE_SECONDS each, within
    min..max samples, never shorter than MIN_SAMPLE_SECONDS unless min_samples forces it."""
    wanted = round(seconds / PREFERRED_SAMPLE_SECONDS)
    affordable = math.floor(seconds / MIN_SAMPLE_SECONDS)
    samples = max(min_samples, min(max_samples, wanted, affordable))
    return samples, max(seconds, 0.0) / samples


def _measuring_seconds(budget: float, setup: float) -> float:
    return max(budget * (1.0 - SAFETY_SHARE) - setup, 0.0)


def _fit_algorithms(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    budget: float,
    ops: Mapping[str, Sequence[str]],
    min_cell_seconds: float,
) -> tuple[list[Target], dict[str, str]]:
    by_algorithm: dict[str, list[Target]] = {}
    for target in targets:  # already in planning order
        by_algorithm.setdefault(target.algorithm, []).append(target)
    chosen: list[Target] = []
    left_out: dict[str, str] = {}
    cell_count = 0
    for algorithm, members in by_algorithm.items():
        more = len(cells_for(members, block_sizes, ops))
        candidates = chosen + members
        setup = SETUP_SECONDS_PER_TARGET * len(candidates)
        affordable = _measuring_seconds(budget, setup) / max(cell_count + more, 1)
        if chosen and (left_out or affordable < min_cell_seconds):
            needed = (cell_count + more) * min_cell_seconds + setup
            left_out[algorithm] = _left_out_words(len(members), more, budget, needed)
            continue
        chosen.extend(members)
        cell_count += more
    return chosen, left_out


def _left_out_words(drivers: int, cells: int, budget: float, needed: float) -> str:
    return (
        f"not measured: {drivers} drivers x ops x block sizes ({cells} series) do not fit "
        f"in --hwcrypto-budget={budget:g} s after the algorithms ranked before it "
        f"(about {math.ceil(needed / (1.0 - SAFETY_SHARE))} s would measure it too)"
    )


# ---------------------------------------------------------------------------------------
# in which order


def round_order(cells: Sequence[Cell], round_index: int) -> list[Cell]:
    """The order of one round: comparisons in a shuffled order, drivers of one together.

    Drivers compared with each other are measured back to back, so they see the same
    machine, and rotate within their comparison every round so none always goes first.
    The comparisons themselves are shuffled every round (seeded with the round number, so a
    plan always runs in the same order): a disturbance that recurs with the rhythm of the
    rounds -- a periodic job on the host, a neighbour's boot -- then lands on different
    series each round instead of always on the same ones.
    """
    groups: dict[tuple[str, int | None, str, int], list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.comparison, []).append(cell)
    ordered_groups = list(groups.values())
    random.Random(round_index).shuffle(ordered_groups)
    order: list[Cell] = []
    for group in ordered_groups:
        shift = round_index % len(group)
        order.extend(group[shift:] + group[:shift])
    return order


# ---------------------------------------------------------------------------------------
# calibration and pacing


def next_calibration_count(
    count: int, elapsed: float, target_seconds: float, max_growth: float = 10.0
) -> int | None:
    """Grow a timed run until it is long enough to trust (cryptsetup's benchmark does this).

    None when `count` operations took at least `target_seconds`; otherwise a larger count,
    aimed at the target from the rate seen so far, at least doubled and at most
    `max_growth` times (a first run of one operation says little about the rate).
    """
    if elapsed >= target_seconds:
        return None
    if elapsed <= 0:
        return max(count * 2, math.ceil(count * max_growth))
    growth = min(max(1.2 * target_seconds / elapsed, 2.0), max_growth)
    return max(count + 1, math.ceil(count * growth))


def operations_for(rate_per_second: float, seconds: float) -> int:
    """How many operations fill `seconds` at `rate_per_second` (at least one)."""
    if rate_per_second <= 0 or not math.isfinite(rate_per_second):
        return 1
    return max(1, round(rate_per_second * seconds))


@dataclass
class Pacer:
    """Keeps a run inside its budget while it runs.

    Before each round it spreads the time left over the rounds left; when that would make
    samples shorter than MIN_SAMPLE_SECONDS it ends the run early, but never before
    `min_rounds` rounds (medians of fewer samples decide nothing).
    """

    started_at: float
    budget: float
    rounds: int
    cells: int
    warmup_seconds: float = 0.0
    min_rounds: int = MIN_SAMPLES
    min_sample_seconds: float = MIN_SAMPLE_SECONDS
    reserve_share: float = SAFETY_SHARE

    @classmethod
    def for_plan(cls, plan: Plan, started_at: float, cells: int | None = None) -> Pacer:
        """`cells`: how many of the plan's cells are really measured (some may not open)."""
        return cls(
            started_at=started_at,
            budget=plan.budget,
            rounds=plan.samples,
            cells=len(plan.cells) if cells is None else cells,
            warmup_seconds=plan.warmup_seconds,
            min_rounds=min(MIN_SAMPLES, plan.samples),
        )

    @property
    def deadline(self) -> float:
        return self.started_at + self.budget * (1.0 - self.reserve_share)

    def sample_seconds(self, now: float, rounds_done: int) -> float | None:
        """Seconds per sample for the next round, or None to stop measuring."""
        rounds_left = self.rounds - rounds_done
        if rounds_left <= 0 or self.cells <= 0:
            return None
        remaining = self.deadline - now
        if rounds_done == 0:
            remaining -= self.warmup_seconds * self.cells
        per_sample = remaining / (rounds_left * self.cells)
        if per_sample >= self.min_sample_seconds:
            return per_sample
        if rounds_done < self.min_rounds:
            return self.min_sample_seconds
        # Behind schedule with enough samples: one more round only if it fits as it is.
        if remaining >= self.cells * self.min_sample_seconds:
            return remaining / self.cells
        return None
