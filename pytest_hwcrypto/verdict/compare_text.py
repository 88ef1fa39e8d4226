# SPDX-License-Identifier: MIT
"""The words of `hwcrypto compare` and the number formats every verdict message uses (pure).

Kept apart from verdict/compare.py so the decisions there can be read without the
wording, and so the rules (verdict/rules/wording.py), the throughput suite and the `bench`
command print MiB/s and ratios the same way the compare command does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_hwcrypto.units import format_drop, format_mib_s, format_min_ratio, format_ratio
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_DROP

if TYPE_CHECKING:  # compare.py imports storage_bound.py, which words with this module
    from pytest_hwcrypto.model.results import Results
    from pytest_hwcrypto.verdict.compare import Comparison, HwSwComparison

_SHOWN_PATHS = 4

# ---------------------------------------------------------------------------------------
# regression mode


def format_comparison_lines(
    comparisons: Iterable[Comparison], max_drop: float = DEFAULT_MAX_DROP
) -> list[str]:
    """One line per comparison; failing lines name the algorithm and say 'regress'."""
    return [_regression_line(comparison, max_drop) for comparison in comparisons]


def _regression_line(comparison: Comparison, max_drop: float) -> str:
    numbers = f"{format_regression_values(comparison)}, {comparison.change:+.1%}"
    if comparison.storage_bound is not None:
        status = f"storage-bound, not judged ({comparison.storage_bound})"
    elif comparison.failed:
        status = (
            f"regress (more than {max_drop:.0%} slower; {could_detect(comparison.detectable_drop)})"
        )
    elif comparison.change < -max_drop:
        status = f"ok (drop within noise; {could_detect(comparison.detectable_drop)})"
    else:
        status = f"ok ({could_detect(comparison.detectable_drop)})"
    return f"{describe_comparison(comparison)}: {numbers}: {status}"


def format_regression_values(comparison: Comparison) -> str:
    """'120.3 -> 98.1 MiB/s', or relative to a reference: '2.013x -> 1.702x cbc(aes-generic)'."""
    if comparison.relative_to is not None:
        return f"{comparison.baseline:.3f}x -> {comparison.current:.3f}x {comparison.relative_to}"
    return f"{format_mib_s(comparison.baseline)} -> {format_mib_s(comparison.current)} MiB/s"


def could_detect(drop: float | None) -> str:
    """'could detect drops ≥ 23 %': what a pass of the regression verdict was able to see."""
    if drop is None:
        return "could detect drops of any size"
    if drop >= 0.995:  # "≥ 100 %" would read as a number; it means no drop was visible
        return "could not detect any drop: the samples spread too widely"
    return f"could detect drops ≥ {format_drop(drop)}"


# ---------------------------------------------------------------------------------------
# software vs hardware mode


def format_hw_sw_lines(result: HwSwComparison) -> list[str]:
    """A line per matched measurement with the HW/SW ratio, then a crossover line per algorithm."""
    lines = [_hw_sw_line(comparison, result) for comparison in result.comparisons]
    for algorithm in result.storage_bound:
        lines.append(f"{algorithm}: storage-bound, no crossover (the storage set both runs' speed)")
    for algorithm, size in result.crossover.items():
        if size is None:
            lines.append(
                f"{algorithm}: no crossover "
                f"(HW < {format_min_ratio(result.min_ratio)}x SW at the largest block size)"
            )
        else:
            lines.append(
                f"{algorithm}: crossover {size} B "
                f"(HW >= {format_min_ratio(result.min_ratio)}x SW from there on)"
            )
    return lines


def _hw_sw_line(comparison: Comparison, result: HwSwComparison) -> str:
    label = describe_path(
        comparison.algorithm,
        comparison.key_bits,
        comparison.block_size,
        comparison.op,
        comparison.source,
    )
    hw = f"hw {format_mib_s(comparison.current)} MiB/s{_bracketed(comparison.driver)}"
    sw = f"sw {format_mib_s(comparison.baseline)} MiB/s{_bracketed(comparison.baseline_driver)}"
    ratio = f"{format_ratio(comparison.ratio)}x"
    if comparison.storage_bound is not None:
        status = f"storage-bound, not judged ({comparison.storage_bound})"
    elif not comparison.in_range:
        status = f"not checked (outside {result.block_sizes.spec!r})"
    elif comparison.failed:
        status = f"fail (needs >= {format_min_ratio(result.min_ratio)}x)"
    elif comparison.ratio < result.min_ratio:
        status = "ok (shortfall within noise)"
    else:
        status = "ok"
    return f"{label}: {hw} / {sw} = {ratio}: {status}"


def _bracketed(driver: str | None) -> str:
    return f" [{driver}]" if driver else ""


# ---------------------------------------------------------------------------------------
# paths and numbers


def what_each_holds(first: Results, second: Results, names: tuple[str, str]) -> str:
    """'a.json has fio crypt; b.json has fio crypt.patched': why nothing matched."""
    parts = []
    for name, results in zip(names, (first, second)):
        paths = list(dict.fromkeys(f"{m.source} {m.algorithm}" for m in results.measurements))
        shown = ", ".join(paths[:_SHOWN_PATHS]) + (", ..." if len(paths) > _SHOWN_PATHS else "")
        parts.append(f"{name} has {shown or 'no measurement'}")
    return "; ".join(parts)


def describe_comparison(comparison: Comparison) -> str:
    """'cbc(aes) 128-bit 4096 B encrypt cbc-aes-aesni (afalg)'."""
    return describe_path(
        comparison.algorithm,
        comparison.key_bits,
        comparison.block_size,
        comparison.op,
        comparison.source,
        comparison.driver,
    )


def describe_path(
    algorithm: str,
    key_bits: int | None,
    block_size: int | None,
    op: str,
    source: str,
    driver: str | None = None,
) -> str:
    """'cbc(aes) 128-bit 4096 B encrypt (afalg)', with the driver before the source if given."""
    parts = [algorithm]
    if key_bits is not None:
        parts.append(f"{key_bits}-bit")
    if block_size is not None:
        parts.append(f"{block_size} B")
    parts.append(op)
    if driver is not None:
        parts.append(driver)
    return " ".join(parts) + f" ({source})"


__all__ = [
    "could_detect",
    "describe_comparison",
    "describe_path",
    "format_comparison_lines",
    "format_hw_sw_lines",
    "what_each_holds",
]
