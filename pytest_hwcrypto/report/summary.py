# SPDX-License-Identifier: MIT
"""The end-of-run summary of `pytest --hwcrypto` (pure: Results in, lines out).

What a kernel-CI engineer reads first: per algorithm path, one row per driver with its
class, MiB/s per block size, the HW/SW ratio and crossover, and a verdict in words; then
the findings, one line each under a line that says what that kind of finding means; the
rules that failed; the kernel, the board and where the results file went.

Verbosity follows pytest's: `-qq` one line; `-q` tables and findings; default adds the
environment and what each kind of finding means; `-v` every block size, findings in full,
single-driver series and passed rules too. Tables are fitted to `width` by leaving out
block-size columns from the middle; findings and rules are never cut: they wrap at the
width, continuation lines indented. Without a width (the output is not a terminal: a CI
log) nothing is left out and nothing wraps.

Findings are worded by what the drivers are (hardware, CPU-accelerated, generic C,
OpenSSL's own code), and winner-not-fastest findings that say one fact on many paths (one
driver handed out over a faster one) are one line per pair of drivers, with every path's
figures and, where known, why the kernel prefers it. The results JSON keeps every
finding as it was recorded; the grouping is only how the summary reads.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.model.results import Finding, Results
from pytest_hwcrypto.report.scaling import ScalingTable, scaling_tables
from pytest_hwcrypto.report.throughput_table import Row, Table, throughput_tables
from pytest_hwcrypto.units import format_mib_s, format_operations, format_ratio, size_label
from pytest_hwcrypto.verdict.rules.wording import (
    OPENSSL_OWN_CODE,
    PREFERRED_ON_PURPOSE,
    class_words,
    kernel_path_words,
)
from pytest_hwcrypto.vocabulary import MIB, FindingKind, Source

TITLE = "hwcrypto summary"

# What each kind of finding means, in one line (the finding's own detail has the numbers).
MEANING: dict[str, str] = {
    # worded by the classes involved: see _loses_meaning
    FindingKind.HW_LOSES_TO_SW: "a driver is slower than a path it should beat at some sizes",
    FindingKind.WINNER_NOT_FASTEST: "the driver the kernel hands out is not the fastest one",
    # worded by the classes involved where known: see _crossover_meaning
    FindingKind.CROSSOVER: "the block size from which a driver keeps up with the one it is "
    "compared with",
    FindingKind.REGRESSION: "slower than the baseline run beyond the allowed drop",
    FindingKind.BELOW_FLOOR: "slower than the floor the board profile sets",
    FindingKind.DRIVER_MISSING: "a driver the board profile expects is not registered",
    FindingKind.MODULE_BLACKLISTED: "a crypto module is kept from loading by modprobe config",
    FindingKind.AFALG_MASKED: "the kernel hides this driver from AF_ALG (off-CPU drivers)",
    FindingKind.SELFTEST_FAILED: "the driver failed its self-test: /proc/crypto says so",
    FindingKind.KERNEL_SELFTEST_FAILED: "the kernel log reports a failed crypto self-test",
    FindingKind.KERNEL_OOPS: "the kernel oopsed during the run: every number after is suspect",
    FindingKind.KERNEL_WARNING: "the kernel logged a WARNING during the run",
    FindingKind.LEGACY_BYPASSES_ENGINE: "openssl's legacy path skips the engine (use -evp)",
    FindingKind.CPU_TIME_NOT_ELAPSED: "openssl divided by CPU time (no -elapsed): misleading",
    FindingKind.STORAGE_BOUND: "the disk, not the cipher, set the speed",
    FindingKind.DMCRYPT_REFUSES_DRIVER: "dm-crypt will not allocate this driver",
    FindingKind.DMCRYPT_SHORTENED: "the dm-crypt check covered less to fit the budget",
    FindingKind.NEEDS_CONCURRENCY: "hardware loses one request at a time, wins with N in flight",
    FindingKind.ASYNC_JOBS_SERIALIZED: "the kernel completed OpenSSL's async jobs one at a time",
    FindingKind.CONTAINER_DEVICES_UNRESTRICTED: "a container may use every host device",
    FindingKind.CONTAINER_OVERHEAD: "the same driver is slower inside a container than on the host",
    FindingKind.RNG_OUTPUT_REPEATS: "a random generator's output is stuck or repeats",
}
# Kinds that ask for attention (yellow); the rest are information.
_ATTENTION = {
    FindingKind.HW_LOSES_TO_SW,
    FindingKind.WINNER_NOT_FASTEST,
    FindingKind.REGRESSION,
    FindingKind.BELOW_FLOOR,
    FindingKind.DRIVER_MISSING,
    FindingKind.SELFTEST_FAILED,
    FindingKind.KERNEL_SELFTEST_FAILED,
    FindingKind.KERNEL_WARNING,
    FindingKind.DMCRYPT_REFUSES_DRIVER,
}
_GAP = "  "
# Continuation lines of a wrapped finding or rule, under the first line's text.
_CONTINUED = "    "
# The openssl suite's software side (suites/test_openssl.py): OpenSSL without an engine.
_OPENSSL_SOURCES = {str(Source.OPENSSL), str(Source.OPENSSL_ASYNC_JOBS)}


@dataclass(frozen=True)
class Line:
    """One line of the summary and how to mark it up (pytest's markup names: red, bold...)."""

    text: str
    markup: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What the summary says beside the results."""

    verbosity: int = 0
    width: int | None = 80  # None: not a terminal (a CI log); nothing wraps or is left out
    json_path: str | None = None
    board: str | None = None  # "uml", "qemu", "host"
    profile: str | None = None  # the board profile's path


def summary_lines(results: Results, context: Context) -> list[Line]:
    if context.verbosity <= -2:
        return [Line(one_line(results, context))]
    lines: list[Line] = []
    if context.verbosity >= 0:
        lines += _wrapped(environment_line(results, context), context)
    for table in throughput_tables(results):
        if len(table.rows) >= 2 or context.verbosity >= 1:
            lines += table_lines(table, context)
    single = [table for table in throughput_tables(results) if len(table.rows) < 2]
    if single and context.verbosity == 0:
        lines.append(Line(f"{len(single)} series measured on one driver only (-v lists them)"))
    for scaling in scaling_tables(results):
        lines += scaling_lines(scaling)
    lines += finding_lines(results, context)
    lines += verdict_lines(results, context)
    lines.append(Line(json_line(context)))
    return lines


def one_line(results: Results, context: Context) -> str:
    kinds = Counter(finding.kind for finding in results.findings)
    found = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    failed = sum(not verdict.passed for verdict in results.verdicts)
    return (
        f"hwcrypto: {len(results.measurements)} measurements, "
        f"{len(results.findings)} findings{f' ({found})' if found else ''}, "
        f"{failed} of {len(results.verdicts)} verdicts failed; {json_line(context)}"
    )


def environment_line(results: Results, context: Context) -> str:
    kernel = results.kernel
    release = kernel.get("release", "unknown")
    machine = f" ({kernel['machine']})" if kernel.get("machine") else ""
    return (
        f"kernel {release}{machine}, board {context.board or 'host'}, "
        f"profile {context.profile or 'none'}; {len(results.measurements)} measurements, "
        f"{len(results.findings)} findings, {len(results.verdicts)} verdicts"
    )


def json_line(context: Context) -> str:
    if context.json_path:
        return f"results JSON: {context.json_path}"
    return "results JSON: not written (--hwcrypto-json=PATH keeps every number)"


# ---------------------------------------------------------------------------------------
# tables


def scaling_lines(table: ScalingTable) -> list[Line]:
    """A driver per row, MiB/s at each level of requests in flight, the gain, the CPU."""
    header = table.header()
    rows = [table.cells(row) for row in table.rows]
    widths = [max(len(cells[i]) for cells in [header, *rows]) for i in range(len(header))]
    numeric = range(1, len(header))
    lines = [Line(table.title(), {"bold": True}), Line(_join(header, widths, numeric))]
    lines += [Line(_join(cells, widths, numeric)) for cells in rows]
    return lines


def table_lines(table: Table, context: Context) -> list[Line]:
    sizes, hidden = _fitting_sizes(table, context)
    heads = ["driver", "class", *(size_label(size) for size in sizes), "HW/SW", "cross", "verdict"]
    cells = [_row_cells(row, sizes, table.shown_unit) for row in table.rows]
    widths = [max(len(head), *(len(row[i]) for row in cells)) for i, head in enumerate(heads)]
    numeric = range(2, len(heads) - 1)
    title = f"{table.title()}: {table.shown_unit} by block size (B)"
    if hidden:
        title += f"; {hidden} of {len(table.block_sizes)} sizes left out to fit (-v shows all)"
    lines = _wrapped(title, context, {"bold": True})
    lines.append(Line(_join(heads, widths, numeric)))
    for row, row_cells in zip(table.rows, cells):
        markup = {"yellow": True} if row.slower_winner or _loses(row) else {}
        lines.append(Line(_join(row_cells, widths, numeric), markup))
    return lines


def _row_cells(row: Row, sizes: Sequence[int | None], unit: str = "MiB/s") -> list[str]:
    shown = format_mib_s if unit == "MiB/s" else format_operations
    scale = MIB if unit == "MiB/s" else 1.0
    speeds = [shown(row.mib_s[size] * scale) if size in row.mib_s else "-" for size in sizes]
    largest = max(row.ratios) if row.ratios else None
    ratio = f"{row.ratios[largest]:.2f}x" if largest is not None else ""
    cross = (
        size_label(row.crossover) if row.crossover is not None else ("none" if row.ratios else "")
    )
    winner = "*" if row.winner else " "
    return [
        f"{winner}{row.driver}",
        row.driver_class or "?",
        *speeds,
        ratio,
        cross,
        row.verdict(),
    ]


def _loses(row: Row) -> bool:
    return bool(row.ratios) and row.crossover is None


def _join(cells: Sequence[str], widths: Sequence[int], numeric: range) -> str:
    parts = [
        cell.rjust(width) if index in numeric else cell.ljust(width)
        for index, (cell, width) in enumerate(zip(cells, widths))
    ]
    return _GAP.join(parts).rstrip()


def _fitting_sizes(table: Table, context: Context) -> tuple[list[int | None], int]:
    """The block sizes shown: all with -v, else as many as fit, the middle ones left out."""
    sizes = list(table.block_sizes)
    if context.verbosity >= 1 or context.width is None:
        return sizes, 0
    hidden = 0
    while len(sizes) > 2 and _table_width(table, sizes) > context.width:
        del sizes[len(sizes) // 2]
        hidden += 1
    return sizes, hidden


def _table_width(table: Table, sizes: Sequence[int | None]) -> int:
    heads = ["driver", "class", *(size_label(size) for size in sizes), "HW/SW", "cross", "verdict"]
    cells = [_row_cells(row, sizes) for row in table.rows]
    widths = [max(len(head), *(len(row[i]) for row in cells)) for i, head in enumerate(heads)]
    # The verdict column may run over: it is last, and words wrap better than numbers.
    return sum(widths[:-1]) + len(_GAP) * (len(widths) - 1) + min(widths[-1], 12)


# ---------------------------------------------------------------------------------------
# findings and verdicts


def finding_lines(results: Results, context: Context) -> list[Line]:
    findings = results.findings
    if not findings:
        return [Line("findings: none")] if context.verbosity >= 0 else []
    lines = [Line(f"findings ({len(findings)}):", {"bold": True})]
    classes = _driver_classes(results)
    by_kind: dict[str, list[Finding]] = {}
    # sorted: the same findings merged from xdist workers in another order read the same
    for finding in sorted(findings, key=lambda f: (f.kind, f.algorithm, f.detail)):
        by_kind.setdefault(finding.kind, []).append(finding)
    for kind, members in by_kind.items():
        markup = {"yellow": True} if kind in _ATTENTION else {}
        texts = _finding_texts(kind, members, results, context)
        if context.verbosity >= 0:
            meaning = _meaning(kind, members, classes)
            lines += _wrapped(f"{kind} ({len(members)}): {meaning}", context, markup)
            for text in texts:
                lines += _wrapped(text, context, indent="  ")
        else:
            for text in texts:
                lines += _wrapped(f"{kind}: {text}", context, markup)
    return lines


def verdict_lines(results: Results, context: Context) -> list[Line]:
    if not results.verdicts:
        return []
    failed = [verdict for verdict in results.verdicts if not verdict.passed]
    passed = len(results.verdicts) - len(failed)
    markup = {"red": True} if failed else {"green": True}
    lines = [Line(f"rules: {passed} passed, {len(failed)} failed", markup)]
    shown = results.verdicts if context.verbosity >= 1 else failed
    for verdict in shown:
        state = "pass" if verdict.passed else "FAIL"
        line_markup = {} if verdict.passed else {"red": True}
        lines += _wrapped(f"{state} {verdict.rule}: {verdict.message}", context, line_markup, "  ")
    return lines


def _detail(finding: Finding, context: Context) -> str:
    """The finding's detail; to fit the width, its "[afalg, 128-bit key, encrypt]" is
    written "[afalg 128 encrypt]" (still telling apart findings of the same algorithm on
    other paths), and `-v` keeps it whole."""
    if context.verbosity >= 1:
        return finding.detail
    return _CONTEXT_WORDS.sub(_compact_context, finding.detail, count=1)


_CONTEXT_WORDS = re.compile(r"\[([^\],]+), (\d+)-bit key, ([^\]]+)\]")


def _compact_context(match: re.Match[str]) -> str:
    return f"[{match.group(1)} {match.group(2)} {match.group(3)}]"


def _wrapped(
    text: str, context: Context, markup: dict[str, bool] | None = None, indent: str = ""
) -> list[Line]:
    """`text` whole: one line, or wrapped at the width with continuation lines indented
    under it. Words are never broken (a driver name longer than the width runs over)."""
    whole = indent + text
    if context.width is None or len(whole) <= context.width:
        return [Line(whole, dict(markup or {}))]
    pieces = textwrap.wrap(
        _FIGURE_AND_UNIT.sub(lambda match: match.group(0).replace(" ", _NO_BREAK), text),
        width=context.width,
        initial_indent=indent,
        subsequent_indent=indent + _CONTINUED,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [Line(piece.replace(_NO_BREAK, " "), dict(markup or {})) for piece in pieces]


# A figure stays on the line of its unit ("65536 B", "4.2 MiB/s"): textwrap splits only at
# ASCII whitespace, so the space between them is held by a no-break space while wrapping.
_FIGURE_AND_UNIT = re.compile(r"\d (?:B|KiB|MiB|MiB/s|s|%)(?![\w/])")
_NO_BREAK = "\u00a0"


# ---------------------------------------------------------------------------------------
# findings worded by what the drivers are, and one fact on many paths said once


def _finding_texts(
    kind: str, members: Sequence[Finding], results: Results, context: Context
) -> list[str]:
    if kind == FindingKind.WINNER_NOT_FASTEST and context.verbosity < 1:
        return _winner_pairs(members, results, context)
    return [_detail(finding, context) for finding in members]


def _meaning(kind: str, members: Sequence[Finding], classes: Mapping[str, str]) -> str:
    if kind == FindingKind.HW_LOSES_TO_SW:
        return _loses_meaning(members, classes)
    if kind == FindingKind.CROSSOVER:
        return _crossover_meaning(members, classes)
    return MEANING.get(kind, "")


def _crossover_meaning(members: Sequence[Finding], classes: Mapping[str, str]) -> str:
    """The openssl suite's crossovers are a kernel path against OpenSSL's own code; the
    others name their drivers' classes in their own lines."""
    phrases: dict[str, None] = {}
    for finding in members:
        driver = finding.extra.get("driver")
        if finding.extra.get("source") in _OPENSSL_SOURCES and isinstance(driver, str):
            path = kernel_path_words(_text_or_none(classes.get(driver)))
            phrases[f"the block size from which {path} keeps up with {OPENSSL_OWN_CODE}"] = None
        else:
            phrases[MEANING[FindingKind.CROSSOVER]] = None
    return "; ".join(phrases)


def _loses_meaning(members: Sequence[Finding], classes: Mapping[str, str]) -> str:
    """hw-loses-to-sw says who lost to whom by class: "a hardware driver is slower than a
    generic C one", "the kernel path (generic C) loses to OpenSSL's own code"."""
    phrases: dict[str, None] = {}
    for finding in members:
        phrases[_loses_phrase(finding, classes)] = None
    return "; ".join(phrases) + " (at some sizes)"


def _loses_phrase(finding: Finding, classes: Mapping[str, str]) -> str:
    extra = finding.extra
    driver = extra.get("driver")
    if extra.get("source") in _OPENSSL_SOURCES and isinstance(driver, str):
        driver_class = extra.get("driver_class") or classes.get(driver)
        return f"{kernel_path_words(_text_or_none(driver_class))} loses to {OPENSSL_OWN_CODE}"
    point = _first_point(extra)
    if point is None:
        return MEANING[FindingKind.HW_LOSES_TO_SW].removesuffix(" at some sizes")
    faster = classes.get(str(point.get("driver")))
    slower = classes.get(str(point.get("other_driver")))
    return f"a {class_words(faster)} driver is slower than a {class_words(slower)} one"


def _winner_pairs(members: Sequence[Finding], results: Results, context: Context) -> list[str]:
    """One line per pair of drivers for winner-not-fastest findings: the driver handed out,
    the faster one, every path with its figures, and why the kernel prefers it when known.
    Findings without their numbers (older files) stay as they were written."""
    pairs: dict[tuple[str, str], list[tuple[str, list[dict[str, Any]]]]] = {}
    priorities: dict[str, Any] = {}
    as_written: list[str] = []
    for finding in members:
        winner = finding.extra.get("winner")
        points = [p for p in finding.extra.get("points") or [] if isinstance(p, dict)]
        if not isinstance(winner, str) or not points:
            as_written.append(_detail(finding, context))
            continue
        path = _path_words(finding, context)
        by_rival: dict[str, list[dict[str, Any]]] = {}
        for point in points:
            by_rival.setdefault(str(point.get("other_driver")), []).append(point)
        for rival, rival_points in by_rival.items():
            pair = differing_drivers(winner, rival)
            pairs.setdefault(pair, []).append((path, rival_points))
            priorities.setdefault(pair[0], finding.extra.get("priority"))
    inventory = _inventory_priorities(results)
    lines = []
    for (winner, rival), paths in pairs.items():
        winner_priority = inventory.get(winner, priorities.get(winner))
        count = f"{len(paths)} path{'s' if len(paths) > 1 else ''}"
        text = (
            f"{_with_priority(winner, winner_priority)} is handed out over "
            f"{_with_priority(rival, inventory.get(rival))}, which is faster on {count}"
        )
        reason = PREFERRED_ON_PURPOSE.get(winner)
        if reason:
            text += f"; the kernel prefers {winner} on purpose: {reason}"
        figures = "; ".join(f"{path} {_share_words(points)}" for path, points in paths)
        lines.append(f"{text}; its speed as a share of {rival}'s: {figures}")
    return lines + as_written


def differing_drivers(first: str, second: str) -> tuple[str, str]:
    """The drivers two template instances differ by: xts(ecb(aes-fixed-time)) and
    xts(ecb(aes-generic)) give aes-fixed-time and aes-generic; names that do not share a
    template with one differing argument stay whole (cbc-aes-aesni, cbc(aes-generic))."""
    while True:
        one, other = _template_parts(first), _template_parts(second)
        if one is None or other is None or one[0] != other[0] or len(one[1]) != len(other[1]):
            return first, second
        differ = [(a, b) for a, b in zip(one[1], other[1]) if a != b]
        if len(differ) != 1:
            return first, second
        first, second = differ[0]


def _template_parts(name: str) -> tuple[str, list[str]] | None:
    """'authenc(hmac(sha256),cbc(aes))' -> ('authenc', ['hmac(sha256)', 'cbc(aes)'])."""
    opening = name.find("(")
    if opening <= 0 or not name.endswith(")"):
        return None
    arguments, depth, start = [], 0, opening + 1
    for index in range(opening + 1, len(name) - 1):
        if name[index] == "(":
            depth += 1
        elif name[index] == ")":
            depth -= 1
        elif name[index] == "," and depth == 0:
            arguments.append(name[start:index])
            start = index + 1
    arguments.append(name[start:-1])
    return name[:opening], arguments


def _path_words(finding: Finding, context: Context) -> str:
    """Where a winner-not-fastest finding was measured, as its detail names it."""
    where, found, _ = _detail(finding, context).partition(": winner ")
    return where if found else finding.algorithm


def _share_words(points: Sequence[dict[str, Any]]) -> str:
    """'0.77x at 4096 B, 0.45x at 16384 B'; '0.38x' for a figure of no block size."""
    parts = []
    for point in points:
        ratio, size = point.get("ratio"), point.get("block_size")
        figure = f"{format_ratio(ratio)}x" if isinstance(ratio, (int, float)) else "?x"
        parts.append(f"{figure} at {size} B" if isinstance(size, int) else figure)
    return ", ".join(parts)


def _with_priority(driver: str, priority: object) -> str:
    return driver if priority is None else f"{driver} (priority {priority})"


def _inventory_priorities(results: Results) -> dict[str, Any]:
    return {
        str(entry["driver"]): entry["priority"]
        for entry in results.inventory
        if entry.get("driver") and entry.get("priority") is not None
    }


def _driver_classes(results: Results) -> dict[str, str]:
    """Driver -> class, from what was measured and from the inventory."""
    classes = {
        str(entry["driver"]): str(entry["class"])
        for entry in results.inventory
        if entry.get("driver") and entry.get("class")
    }
    for measurement in results.measurements:
        if measurement.driver and measurement.driver_class:
            classes.setdefault(measurement.driver, measurement.driver_class)
    return classes


def _first_point(extra: Mapping[str, Any]) -> dict[str, Any] | None:
    points = extra.get("points")
    if isinstance(points, list) and points and isinstance(points[0], dict):
        return points[0]
    return None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
