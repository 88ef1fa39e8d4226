"""What `hwcrypto ab` prints: one row per series, then what changed between the kernels (pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pytest_hwcrypto.ab.document import Side
from pytest_hwcrypto.ab.series import KernelChanges, SeriesKey, SeriesVerdict, describe_key
from pytest_hwcrypto.verdict.paired import PairedVerdict

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


def format_table(verdicts: Sequence[SeriesVerdict], max_drop: float) -> list[str]:
    """Series sorted by verdict (regressed first), then by name; the name column as wide
    as the longest name (a by-name series adds which driver served on each side)."""
    ordered = sorted(verdicts, key=lambda v: (_ORDER[v.comparison.verdict], describe_key(v.key)))
    names = [describe_key(v.key) + (f" [{v.served}]" if v.served else "") for v in ordered]
    width = max([len("series"), *(len(name) for name in names)])
    header = (
        f"{'series':<{width}} {'pairs':>5} {'A MiB/s':>9} {'B MiB/s':>9} "
        f"{'change':>7}  {'95% interval':<17} verdict"
    )
    lines = [header]
    for name, verdict in zip(names, ordered):
        c = verdict.comparison
        interval = f"{_percent(c.change_low)}..{_percent(c.change_high)}"
        word = c.verdict.value
        if c.verdict is PairedVerdict.REGRESSED:
            word += f" (drop beyond {max_drop:.0%})"
        elif c.verdict is PairedVerdict.SAME and c.decision_high < 0:
            word += f" (slower, by less than {max_drop:.0%})"
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
