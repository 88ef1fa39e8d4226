# SPDX-License-Identifier: MIT
"""What `hwcrypto ab` prints: one row per series, then what changed between the kernels (pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pytest_hwcrypto.ab.document import Side
from pytest_hwcrypto.ab.series import KernelChanges, SeriesKey, SeriesVerdict, describe_key
from pytest_hwcrypto.verdict.paired import PairedComparison, PairedVerdict

_MIB = 1024.0 * 1024.0
_ORDER = {
    PairedVerdict.REGRESSED: 0,
    PairedVerdict.UNKNOWN: 1,
    PairedVerdict.IMPROVED: 2,
    PairedVerdict.SAME: 3,
}


def _percent(value: float) -> str:
    return "   n/a" if math.isnan(value) else f"{value * 100:+.1f}%"


def format_sides(sides: Mapping[str, Side]) -> list[str]:
    """One line per side: its kernel and what it changes (command line, knobs, modules left
    out, a driver preferred) -- the same kernel twice differs only there."""
    lines = []
    for label in sorted(sides):
        side = sides[label]
        parts = [side.kernel or "the board's default kernel"]
        if side.modules:
            parts.append(f"modules {side.modules}")
        config = side.config
        if config.get("cmdline"):
            parts.append("command line + " + " ".join(config["cmdline"]))
        for path, value in sorted(dict(config.get("set") or {}).items()):
            parts.append(f"{path}={value}")
        if config.get("blacklist"):
            parts.append("without " + ", ".join(config["blacklist"]))
        if config.get("prefer"):
            parts.append(f"{config['prefer']} preferred")
        lines.append(f"{label}: " + "; ".join(parts))
    return lines


def level_text(level: float) -> str:
    """A confidence level to two decimals, more where two would round it up to 100 %:
    99%, 99.92%, 99.998%."""
    if math.isnan(level):
        return "?"
    for digits in range(2, 6):
        shown = f"{level * 100:.{digits}f}"
        if float(shown) < 100.0:
            break
    return shown.rstrip("0").rstrip(".") + "%"


def verdict_words(comparison: PairedComparison, max_drop: float, level: float) -> str:
    """The verdict and, where it is not plain, why: a "could not tell yet" says what is
    missing, so an interval that looks inside +-max-drop is not read as "same"."""
    c = comparison
    word = c.verdict.value
    if c.verdict is PairedVerdict.REGRESSED:
        return word + f" (drop beyond {max_drop:.0%})"
    if c.verdict is PairedVerdict.SAME and c.decision_high < 0:
        return word + f" (slower, by less than {max_drop:.0%})"
    if c.verdict is not PairedVerdict.UNKNOWN or c.pairs == 0:
        return word
    if not c.reaches_level:
        return word + f" ({c.pairs} pairs cannot reach {level_text(level)}: more pairs)"
    tolerance = -math.log1p(-max_drop)
    if c.decision_high < 0.0:
        return word + f" (slower; whether by {max_drop:.0%} is not settled)"
    if c.decision_low > 0.0:
        return word + f" (faster; whether by {max_drop:.0%} is not settled)"
    past = []
    if math.log1p(c.decision_low) <= -tolerance:
        past.append(f"{-max_drop:.0%}")
    if math.log1p(c.decision_high) >= tolerance:
        past.append(f"+{math.expm1(tolerance):.1%}")
    return word + f" (interval reaches past {' and '.join(past)}: more pairs)"


def format_table(verdicts: Sequence[SeriesVerdict], max_drop: float) -> list[str]:
    """Series sorted by verdict (regressed first), then by name; the name column as wide
    as the longest name (a by-name series adds which driver served on each side).

    The interval shown is the one the verdict was taken at, at the level the family of
    questions sets (series x looks, Bonferroni), named in the header; the 95 % interval
    is in the results file (change_low, change_high)."""
    ordered = sorted(verdicts, key=lambda v: (_ORDER[v.comparison.verdict], describe_key(v.key)))
    names = [describe_key(v.key) + (f" [{v.served}]" if v.served else "") for v in ordered]
    width = max([len("series"), *(len(name) for name in names)])
    levels = sorted({level_text(v.decision_level) for v in ordered})
    column = f"{'/'.join(levels) or '?'} interval"
    header = (
        f"{'series':<{width}} {'pairs':>5} {'A MiB/s':>9} {'B MiB/s':>9} "
        f"{'change':>7}  {column:<17} verdict"
    )
    lines = [header]
    for name, verdict in zip(names, ordered):
        c = verdict.comparison
        interval = f"{_percent(c.decision_low)}..{_percent(c.decision_high)}"
        word = verdict_words(c, max_drop, verdict.decision_level)
        lines.append(
            f"{name:<{width}} {c.pairs:>5} {verdict.a_median / _MIB:>9.1f} "
            f"{verdict.b_median / _MIB:>9.1f} {_percent(c.change):>7}  {interval:<17} {word}"
        )
    if any(v.normalised for v in verdicts):
        lines.append(
            "(change and interval per unit of the host's user-space speed, timed around each "
            "sample: load that moved between A and B cancels; the (host speed) row is that "
            "yardstick itself, as measured; without --host-speed bytes/s are judged as measured)"
        )
    return lines


def format_changes(changes: KernelChanges, one_sided: dict[str, list[SeriesKey]]) -> list[str]:
    lines = []
    for side, drivers in (("A", changes.only_a), ("B", changes.only_b)):
        if drivers:
            lines.append(f"drivers only in {side}: {', '.join(drivers)}")
    for name, a, b in changes.winners:
        lines.append(f"winner of {name} changed: {a} (A) -> {b} (B)")
    for driver, a, b in changes.selftests:
        lines.append(f"self-test of {driver} changed: {a} (A) -> {b} (B)")
    for finding in changes.findings_gone:
        lines.append(f"finding gone in B: {finding}")
    for finding in changes.findings_new:
        lines.append(f"finding new in B: {finding}")
    for side, keys in one_sided.items():
        for key in keys:
            lines.append(f"measured in {side} only: {describe_key(key)}")
    return lines


def summary_line(verdicts: Sequence[SeriesVerdict], pairs: int, stopped: str) -> str:
    counts = {word: 0 for word in PairedVerdict}
    for verdict in verdicts:
        counts[verdict.comparison.verdict] += 1
    told = ", ".join(f"{counts[word]} {word.value}" for word in PairedVerdict if counts[word])
    why = {
        "decided": "every series decided",
        "pairs": "pair count reached",
        "budget": "budget spent",
    }.get(stopped, stopped)
    return f"hwcrypto ab: {pairs} pairs, {len(verdicts)} series: {told or 'nothing'} ({why})"
