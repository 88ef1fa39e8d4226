# SPDX-License-Identifier: MIT
"""What rule verdicts and findings say: message text, and the numbers findings carry.

The messages are the interface a lab reads in CI ("offload virtio_crypto_aes_cbc is 0.45x
generic cbc(aes-generic) at 4096 B"), and the rule and the rule-free finding about the
same thing say it in the same words, so both take them from here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pytest_hwcrypto.model.results import Finding
from pytest_hwcrypto.model.sensitivity import blind_below
from pytest_hwcrypto.units import format_drop, format_mib_s, format_min_ratio, format_ratio
from pytest_hwcrypto.verdict.compare import Comparison
from pytest_hwcrypto.verdict.compare_text import (
    could_detect,
    describe_comparison,
    format_regression_values,
)
from pytest_hwcrypto.verdict.rules.model import Candidate, GroupKey, PairPoint, Scope, Winner
from pytest_hwcrypto.verdict.rules.series import series_crossover
from pytest_hwcrypto.vocabulary import PROFILE_DRIVER_CLASSES, DriverClass, FindingKind

# ---------------------------------------------------------------------------------------
# where: algorithm, series, scope, sizes


def context(algorithm: str, group: GroupKey, qualified: bool) -> str:
    """'cbc(aes)', or 'cbc(aes) [afalg, 128-bit key, encrypt]' when series need telling apart
    ('..., encrypt, N=4]' for a series measured with 4 requests in flight)."""
    source, key_bits, op, level = group
    depth = [f"N={level}"] if level != 1 else []
    if not qualified:
        return f"{algorithm} [{depth[0]}]" if depth else algorithm
    parts = [source] + ([f"{key_bits}-bit key"] if key_bits is not None else []) + [op] + depth
    return f"{algorithm} [{', '.join(parts)}]"


def range_words(scope: Scope) -> str:
    """' from 4096 B' for a restricted range; nothing when every size counts."""
    return "" if scope.block_sizes.is_everything else f" {scope.block_sizes.describe()}"


def scope_words(scope: Scope) -> str:
    """' (source afalg, 256-bit key, op decrypt)' for what the scope restricts, else nothing."""
    parts = [f"source {scope.source}"] if scope.source else []
    parts += [f"{scope.key_bits}-bit key"] if scope.key_bits is not None else []
    parts += [f"op {scope.op}"] if scope.op else []
    parts += [f"{scope.concurrency} in flight"] if (scope.concurrency or 1) != 1 else []
    return f" ({', '.join(parts)})" if parts else ""


def size_words(size: int | None) -> str:
    return "no block size" if size is None else f"{size} B"


def sizes_list(sizes: Sequence[int | None]) -> str:
    known = [str(size) for size in sizes if size is not None]
    return ", ".join(known) + " B" if known else "no block size"


# ---------------------------------------------------------------------------------------
# who


def side(rule_side: str, candidate: Candidate) -> str:
    """'offload virtio_crypto_aes_cbc' when the rule names a class, else the driver."""
    if rule_side in PROFILE_DRIVER_CLASSES:
        return f"{rule_side} {candidate.driver}"
    return candidate.driver


def missing_side_words(rule_side: str) -> str:
    """'offload driver' for a class nobody measured, the driver's own name otherwise."""
    return f"{rule_side} driver" if rule_side in PROFILE_DRIVER_CLASSES else rule_side


def winner_words(winner: Winner) -> str:
    return (
        winner.driver
        if winner.priority is None
        else f"{winner.driver} (priority {winner.priority})"
    )


# ---------------------------------------------------------------------------------------
# what: one sentence per judgement


def hw_sw_failure(
    context_words: str,
    hw: str,
    sw: str,
    min_ratio: float,
    scope: Scope,
    failing: Sequence[PairPoint],
    crossover: str,
) -> str:
    first = failing[0]
    text = (
        f"{context_words}: {side(hw, first.first)} is {format_ratio(first.interval.ratio)}x "
        f"{side(sw, first.second)} at {size_words(first.block_size)} "
        f"(needs >= {format_min_ratio(min_ratio)}x {scope.block_sizes.describe()})"
    )
    if len(failing) > 1:
        text += "; also below at " + sizes_list([point.block_size for point in failing[1:]])
    return f"{text}; {crossover}"


def hw_sw_pass(
    context_words: str,
    hw: str,
    sw: str,
    min_ratio: float,
    scope: Scope,
    in_range: Sequence[PairPoint],
    crossover: str,
) -> str:
    lowest = min(in_range, key=lambda point: point.interval.ratio)
    return (
        f"{context_words}: {side(hw, lowest.first)} >= {format_min_ratio(min_ratio)}x "
        f"{side(sw, lowest.second)} {scope.block_sizes.describe()} "
        f"(lowest {format_ratio(lowest.interval.ratio)}x at {size_words(lowest.block_size)}); "
        f"{crossover}"
    )


def cpu_failure(
    context_words: str,
    hw: str,
    sw: str,
    limit: float | None,
    failing: Sequence[tuple[PairPoint, float | None]],
) -> str:
    """'cbc(aes) [N=8]: offload X uses 0.9x the CPU per byte of cpu-accel Y at 4096 B
    (may use at most 0.2x)'."""
    point, share = failing[0]
    if share is None:
        used = "has no CPU per byte measured on both sides"
    else:
        used = f"uses {format_ratio(share)}x the CPU per byte of {side(sw, point.second)}"
    text = (
        f"{context_words}: {side(hw, point.first)} {used} at {size_words(point.block_size)} "
        f"(may use at most {limit:g}x)"
    )
    if len(failing) > 1:
        text += "; also at " + sizes_list([p.block_size for p, _ in failing[1:]])
    return text


def cpu_pass(limit: float | None, in_range: Sequence[PairPoint]) -> str:
    """'; using at most 0.21x its CPU per byte (limit 0.2x)' when the rule asks for it."""
    if limit is None:
        return ""
    shares = [share for share in (cpu_share_of(point) for point in in_range) if share is not None]
    if not shares:
        return ""
    return f", using at most {format_ratio(max(shares))}x its CPU per byte (limit {limit:g}x)"


def cpu_share_of(point: PairPoint) -> float | None:
    """hw's CPU per byte over sw's at a point (the judge's figure; None when unknown)."""
    hw = [m.cpu_per_byte for m in point.first.members if m.cpu_per_byte is not None]
    sw = [m.cpu_per_byte for m in point.second.members if m.cpu_per_byte is not None]
    if not hw or not sw or sum(sw) <= 0:
        return None
    return (sum(hw) / len(hw)) / (sum(sw) / len(sw))


def crossover_words(points: Sequence[PairPoint], min_ratio: float) -> str:
    size = series_crossover(points, min_ratio)
    return "no crossover" if size is None else f"crossover {size} B"


def hw_loses_words(context_words: str, hw: str, sw: str, losing: Sequence[PairPoint]) -> str:
    worst = min(losing, key=lambda point: point.interval.ratio)
    return (
        f"{context_words}: {hw} is slower than {sw} at "
        f"{sizes_list([point.block_size for point in losing])} "
        f"({format_ratio(worst.interval.ratio)}x at {size_words(worst.block_size)})"
    )


def crossover_finding_words(
    sized: Sequence[PairPoint], size: int | None, min_ratio: float, sw: str
) -> str:
    """What follows the hardware driver's name: where over `sized` (crossover `size`) it
    reaches min_ratio x `sw`, if ever."""
    needs = f"{format_min_ratio(min_ratio)}x"
    if size is None:
        largest = sized[-1]
        return (
            f"never reaches {needs} {sw} (largest size {size_words(largest.block_size)}: "
            f"{format_ratio(largest.interval.ratio)}x)"
        )
    if size == sized[0].block_size:
        return f"is >= {needs} {sw} at every measured size (from {size} B)"
    return f"reaches {needs} {sw} from {size} B on"


def floor_below(
    context_words: str,
    target: str,
    candidate: Candidate,
    size: int | None,
    floor: float,
    scope: Scope,
) -> str:
    return (
        f"{context_words}: {side(target, candidate)} gives "
        f"{format_mib_s(candidate.stats.median)} MiB/s at {size_words(size)} "
        f"(floor {floor:g} MiB/s {scope.block_sizes.describe()})"
    )


def floor_pass(
    context_words: str, target: str, lowest: Candidate, size: int | None, floor: float, scope: Scope
) -> str:
    return (
        f"{context_words}: {side(target, lowest)} "
        f">= {floor:g} MiB/s {scope.block_sizes.describe()} "
        f"(lowest {format_mib_s(lowest.stats.median)} MiB/s at {size_words(size)})"
    )


def winner_slower_words(winner: Winner, slower: Sequence[PairPoint]) -> str:
    parts = [
        f"{format_ratio(point.interval.ratio)}x {point.second.driver} "
        f"at {size_words(point.block_size)}"
        for point in slower
    ]
    return f"winner {winner_words(winner)} is slower than another driver: " + ", ".join(parts)


def could_detect_words(comparisons: Sequence[Comparison]) -> str:
    """'could detect drops ≥ 31 %' for one series; for several, the worst and the median,
    because the verdict speaks for every series it covers."""
    drops = [c.detectable_drop for c in comparisons if c.detectable_drop is not None]
    if not drops:
        return could_detect(None)
    worst = max(comparisons, key=lambda c: c.detectable_drop or 0.0)
    words = could_detect(worst.detectable_drop)
    if len(drops) > 1:
        words += (
            f" in every series; the least sensitive is {describe_comparison(worst)}, "
            f"the median series could detect ≥ {format_drop(statistics.median(drops))}"
        )
    return words


def insensitive_words(comparisons: Sequence[Comparison], max_drop: float) -> str:
    """'; max_drop 10% is below what this run could detect in 48 of 56 series' or ''."""
    blind = [c for c in comparisons if blind_below(c.detectable_drop, max_drop)]
    if not blind:
        return ""
    return (
        f"; max_drop {max_drop:.0%} is below what this run could detect in "
        f"{len(blind)} of {len(comparisons)} series"
    )


def sensitivity_extra(comparisons: Sequence[Comparison], max_drop: float) -> dict[str, Any]:
    """The verdict's JSON: `detectable_drop` (the least sensitive series) and `max_drop`."""
    drops = [c.detectable_drop for c in comparisons if c.detectable_drop is not None]
    if not drops:
        return {}
    return {"detectable_drop": max(drops), "max_drop": max_drop}


def regression_words(comparison: Comparison) -> str:
    return (
        f"{describe_comparison(comparison)} {format_regression_values(comparison)} "
        f"({comparison.change:+.1%})"
    )


# ---------------------------------------------------------------------------------------
# findings: the detail, and the numbers behind it for the results JSON


def group_extra(group: GroupKey) -> dict[str, Any]:
    source, key_bits, op, level = group
    extra: dict[str, Any] = {"source": source, "key_bits": key_bits, "op": op}
    if level != 1:
        extra["concurrency"] = level
    return extra


def point_extra(point: PairPoint) -> dict[str, Any]:
    return {
        "block_size": point.block_size,
        "driver": point.first.driver,
        "bytes_per_second": point.first.stats.median,
        "other_driver": point.second.driver,
        "other_bytes_per_second": point.second.stats.median,
        "ratio": point.interval.ratio,
        "ratio_low": point.interval.low,
        "ratio_high": point.interval.high,
    }


def hw_loses_finding(
    algorithm: str, group: GroupKey, min_ratio: float, losing: Sequence[PairPoint], detail: str
) -> Finding:
    """hw-loses-to-sw, from a rule or without one: the same payload either way."""
    extra = {
        **group_extra(group),
        "min_ratio": min_ratio,
        "points": [point_extra(point) for point in losing],
    }
    return Finding(FindingKind.HW_LOSES_TO_SW, algorithm, detail, extra)


def winner_finding(
    algorithm: str, winner: Winner, group: GroupKey, slower: Sequence[PairPoint], detail: str
) -> Finding:
    extra = {
        **group_extra(group),
        "winner": winner.driver,
        "priority": winner.priority,
        "points": [point_extra(point) for point in slower],
    }
    return Finding(FindingKind.WINNER_NOT_FASTEST, algorithm, detail, extra)


# ---------------------------------------------------------------------------------------
# who, by what kind of code it is: the words a reader gets for a driver class

# What each class of driver is, for a reader: "offload" and "cpu-accel" are our names.
CLASS_WORDS: dict[str, str] = {
    DriverClass.OFFLOAD: "hardware",
    DriverClass.CPU_ACCEL: "CPU-accelerated",
    DriverClass.GENERIC: "generic C",
}
# The software side of the openssl suite's comparisons: OpenSSL's code in user space.
OPENSSL_OWN_CODE = "OpenSSL's own code"

# Why the kernel hands out a driver that measures slower, where that is on purpose: the
# winner-not-fastest finding is then expected, and the reader should know why. Keyed by
# the driver under any templates (cbc(aes-fixed-time) -> aes-fixed-time).
PREFERRED_ON_PURPOSE: dict[str, str] = {
    # crypto/aes_ti.c registers at priority 100 + 1, over aes-generic's 100; its Kconfig
    # help: two 256-byte S-boxes prefetched whole each block instead of 16 KiB of tables,
    # to remove data-dependent latencies (cache timing), slower as a result.
    "aes-fixed-time": "it is built to run in constant time (no data-dependent latencies)",
}


def class_words(driver_class: str | None) -> str:
    """'hardware', 'CPU-accelerated', 'generic C', or the class as it is."""
    if not driver_class:
        return "unknown class"
    return CLASS_WORDS.get(driver_class, f"{driver_class} class")


def kernel_path_words(driver_class: str | None) -> str:
    """The kernel side of an OpenSSL-against-kernel comparison: 'the kernel path (generic C)'."""
    return f"the kernel path ({class_words(driver_class)})"


def openssl_loses_words(
    where: str,
    driver_class: str | None,
    losing: int,
    compared: int,
    worst_ratio: float,
    worst_size: int | None,
    kernel_mib_s: str,
    openssl_mib_s: str,
) -> str:
    """'aes-128-cbc [openssl -engine afalg -> cbc(aes-generic)]: the kernel path (generic C)
    loses to OpenSSL's own code at 3 of 5 block sizes, down to 0.41x at 16 B (20 vs 49 MiB/s)'."""
    return (
        f"{where}: {kernel_path_words(driver_class)} loses to {OPENSSL_OWN_CODE} at {losing} "
        f"of {compared} block sizes, down to {worst_ratio:.2g}x at {size_words(worst_size)} "
        f"({kernel_mib_s} vs {openssl_mib_s} MiB/s)"
    )
