"""The end-of-run summary of `pytest --hwcrypto` (pure: Results in, lines out).

What a kernel-CI engineer reads first: per algorithm path, one row per driver with its
class, MiB/s per block size, the HW/SW ratio and crossover, and a verdict in words; then
the findings, one line each under a line that says what that kind of finding means; the
rules that failed; the kernel, the board and where the results file went.

Verbosity follows pytest's: `-qq` one line; `-q` tables and findings; default adds the
environment and what each kind of finding means; `-v` every block size, findings in full,
single-driver series and passed rules too. Lines are fitted to `width`: block-size
columns are left out from the middle first, and long findings are cut with an ellipsis
(`-v` never cuts).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.model.results import Finding, Results
from pytest_hwcrypto.report.scaling import ScalingTable, scaling_tables
from pytest_hwcrypto.report.throughput_table import Row, Table, size_label, throughput_tables
from pytest_hwcrypto.verdict.compare_text import format_mib_s
from pytest_hwcrypto.vocabulary import MIB, FindingKind

TITLE = "hwcrypto summary"

# What each kind of finding means, in one line (the finding's own detail has the numbers).
MEANING: dict[str, str] = {
    FindingKind.HW_LOSES_TO_SW: "a hardware driver is slower than software at some sizes",
    FindingKind.WINNER_NOT_FASTEST: "the driver the kernel hands out is not the fastest one",
    FindingKind.CROSSOVER: "the block size from which hardware keeps up with software",
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
_ELLIPSIS = "…"
_GAP = "  "


@dataclass(frozen=True)
class Line:
    """One line of the summary and how to mark it up (pytest's markup names: red, bold...)."""

    text: str
    markup: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What the summary says beside the results."""

    verbosity: int = 0
    width: int = 80
    json_path: str | None = None
    board: str | None = None  # "uml", "qemu", "host"
    profile: str | None = None  # the board profile's path


def summary_lines(results: Results, context: Context) -> list[Line]:
    if context.verbosity <= -2:
        return [Line(one_line(results, context))]
    lines: list[Line] = []
    if context.verbosity >= 0:
        lines.append(Line(environment_line(results, context)))
    for table in throughput_tables(results):
        if len(table.rows) >= 2 or context.verbosity >= 1:
            lines += table_lines(table, context)
    single = [table for table in throughput_tables(results) if len(table.rows) < 2]
    if single and context.verbosity == 0:
        lines.append(Line(f"{len(single)} series measured on one driver only (-v lists them)"))
    for scaling in scaling_tables(results):
        lines += scaling_lines(scaling)
    lines += finding_lines(results.findings, context)
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
    cells = [_row_cells(row, sizes) for row in table.rows]
    widths = [max(len(head), *(len(row[i]) for row in cells)) for i, head in enumerate(heads)]
    numeric = range(2, len(heads) - 1)
    lines = [Line(f"{table.title()}: MiB/s by block size (B)", {"bold": True})]
    if hidden:
        lines[0] = Line(
            f"{lines[0].text}; {hidden} of {len(table.block_sizes)} sizes left out to fit "
            "(-v shows all)",
            {"bold": True},
        )
    lines.append(Line(_join(heads, widths, numeric)))
    for row, row_cells in zip(table.rows, cells):
        markup = {"yellow": True} if row.slower_winner or _loses(row) else {}
        lines.append(Line(_join(row_cells, widths, numeric), markup))
    return lines


def _row_cells(row: Row, sizes: Sequence[int | None]) -> list[str]:
    speeds = [format_mib_s(row.mib_s[size] * MIB) if size in row.mib_s else "-" for size in sizes]
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
    if context.verbosity >= 1:
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


def finding_lines(findings: Sequence[Finding], context: Context) -> list[Line]:
    if not findings:
        return [Line("findings: none")] if context.verbosity >= 0 else []
    lines = [Line(f"findings ({len(findings)}):", {"bold": True})]
    by_kind: dict[str, list[Finding]] = {}
    # sorted: the same findings merged from xdist workers in another order read the same
    for finding in sorted(findings, key=lambda f: (f.kind, f.algorithm, f.detail)):
        by_kind.setdefault(finding.kind, []).append(finding)
    for kind, members in by_kind.items():
        markup = {"yellow": True} if kind in _ATTENTION else {}
        if context.verbosity >= 0:
            meaning = MEANING.get(kind, "")
            lines.append(Line(_fit(f"{kind} ({len(members)}): {meaning}", context), markup))
            lines += [Line(_fit(f"  {_detail(finding, context)}", context)) for finding in members]
        else:
            lines += [
                Line(_fit(f"{kind}: {_detail(finding, context)}", context), markup)
                for finding in members
            ]
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
        lines.append(
            Line(_fit(f"  {state} {verdict.rule}: {verdict.message}", context), line_markup)
        )
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


def _fit(text: str, context: Context) -> str:
    if context.verbosity >= 1 or len(text) <= context.width:
        return text
    return text[: max(context.width - 1, 1)] + _ELLIPSIS
