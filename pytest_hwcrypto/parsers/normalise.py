# SPDX-License-Identifier: MIT
"""Undo what the web and the locale do to tool output, line by line (pure: text in, text out).

Every parser reads the lines `paste.read_paste` hands it; this module is the stage in
there that makes a line as the tool printed it, so no parser needs its own special cases:

* **HTML remnants** (a page copied from its source, a forum's export): ``<br>``,
  ``</p>``, ``</div>``, ``</tr>``, ``</li>`` end a line; table cells (``<td>``) are
  kept apart by a blank; other known tags (``<pre>``, ``<code>``, ``<b>``...) are
  dropped; entities (``&nbsp;``, ``&gt;``, ``&#39;``) become their characters.  Only
  known tag names are dropped, so a kernel log's ``<6>`` level (handled below) and text
  such as ``<stdin>`` stay.
* **Markdown remnants**: list bullets (``- ``, ``* ``, ``1. ``, ``1 - ``), emphasis
  around a row or a value (``**aes-cbc 256b ... MiB/s**``, ``__x__``, ``~~x~~``,
  ``*row*``, and the ``*`` that opens or closes a paragraph in emphasis on its first or
  last line), a row wrapped in inline code (`` `row` ``), and table pipes
  (``| aes-xts | 512b | ... |``; the ``|---|`` rule is dropped).  A line of tool output
  never starts with a bullet followed by a blank, nor holds ``**``, so nothing the tools
  print is changed.
* **Kernel log prefixes**: the printk level ``<6>``, syslog/journal prefixes
  (``Dec  6 10:00:00 host kernel: ``), dmesg's ``[ 1234.567890]`` (also ``dmesg -T``'s
  ``[Sun Dec  6 10:00:00 2026]`` and the caller id ``[    T1]``).  `strip_log_prefix`
  says whether there was one, so a stretch of kernel log is still known as one.
* **Side-by-side columns** (``diff -y``, or two runs pasted next to each other): a run of
  lines cut by one ``|`` at the same column becomes the left column's lines followed by
  the right column's, each keeping its line number (`unfold_columns`).
* **Locale numbers**: a decimal comma before a unit (``690,1 MiB/s`` from cryptsetup
  under de_DE, fr_FR, ru_RU...; cryptsetup formats with printf after setlocale, so
  every language with a comma writes it so), with dots grouping thousands before it
  (``1.234,5``, as a spreadsheet re-formats it).  A comma is only read as a decimal point
  when a rate or size unit follows, so fio's ``iops=852, runt=`` and openssl's
  ``bn(64,64)`` stay as they are.
"""

from __future__ import annotations

import html
import re

_BREAK_TAGS = re.compile(r"<\s*(?:br\s*/?|/\s*(?:p|div|tr|li|h[1-6]|pre|blockquote))\s*>", re.I)
_TAGS = re.compile(
    r"<\s*/?\s*(?:pre|code|p|div|span|font|b|i|u|em|strong|tt|kbd|samp|var|small|big|sup|sub"
    r"|blockquote|li|ul|ol|dl|dt|dd|table|thead|tbody|tfoot|tr|td|th|h[1-6]|a|hr|img|nobr"
    r"|wbr|section|article|details|summary|mark|del|ins|s|strike|center)\b[^<>]*>",
    re.I,
)
_CELLS = re.compile(r"<\s*/?\s*(?:td|th)\b[^<>]*>", re.I)  # cells apart, not glued
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});", re.I)

_BULLET = re.compile(r"^(\s*)(?:[-*+\u2022\u2023\u25e6]|\d{1,2}[.)]|\d{1,2}\s+[-\u2013])\s+(?=\S)")
_STRONG = re.compile(r"\*\*|__(?=\S)|(?<=\S)__|~~")
_WRAPPED = re.compile(r"^(\s*)([*_`])(?=\S)(.*?\S)\2\s*$")
_OPEN_STAR = re.compile(r"^(\s*)\*(?=[^\s*])")
_CLOSE_STAR = re.compile(r"(?<=[^\s*])\*\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")

_LOG_PREFIX = re.compile(
    r"^\s*(?:<\d>\s*)?"
    r"(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\S+\s+kernel:\s*"  # syslog
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*\s+\S+\s+kernel:\s*)?"  # journalctl -o short-iso
    r"(?:\[\s*\d+\.\d+\]\s?|\[\.\.\.\]\s?"  # dmesg, or its timestamp elided as [...]
    r"|\[[A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+\d{4}\]\s?)"  # dmesg -T
    r"(?:\[\s*[TC]\d+\]\s?)?"  # printk caller id
)
_SYSLOG_ONLY = re.compile(
    r"^\s*(?:<\d>\s*)?(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\S+"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*\s+\S+)\s+kernel:\s*"
)
_PRINTK_LEVEL = re.compile(r"^\s*<\d>(?=\S)")

_UNIT_AFTER = r"(?=\s?(?:[KMGTkmgt]i?B/s|B/s|[KMGT]i?B\b|bytes\b|k\b|%))"
_DECIMAL_COMMA = re.compile(
    r"(?<![\w.,])(?P<whole>\d{1,3}(?:(?P<group>\.)\d{3})+|\d+),(?P<fraction>\d{1,2})"
    r"(?!\d)" + _UNIT_AFTER
)


_COLUMN_CUT = re.compile(r"\s\|(?:\s|$)")
_MIN_COLUMN = 20
_MIN_SIDE_BY_SIDE = 2


def unfold_columns(lines: list[str]) -> list[tuple[int, str]]:
    """(index, text) of every line, a side-by-side block unfolded into its two columns.

    A block holds at least two lines with exactly one ``|`` between blanks at the same
    column (diff -y pads the left side to a fixed width), and the lines around them that
    have text on both sides of a blank gap at that column (the lines diff -y found
    equal).  Other lines are passed through as they are.
    """
    unfolded: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        column = _cut_column(lines[index])
        if column is None:
            unfolded.append((index, lines[index]))
            index += 1
            continue
        # the equal lines just above the first '|' line belong to the block too
        start = index
        while (
            len(unfolded) >= index - start + 1
            and unfolded[-(index - start + 1)] == (start - 1, lines[start - 1])
            and _fits(lines[start - 1], column)
        ):
            start -= 1
        end = index
        while end < len(lines) and (_cut_column(lines[end]) == column or _fits(lines[end], column)):
            end += 1
        block = lines[start:end]
        marked = sum(_cut_column(line) == column for line in block)
        if marked < _MIN_SIDE_BY_SIDE or not _two_sided(block, column):
            unfolded.append((index, lines[index]))
            index += 1
            continue
        del unfolded[len(unfolded) - (index - start) :]
        unfolded.extend((start + n, line[:column].rstrip()) for n, line in enumerate(block))
        unfolded.extend((start + n, line[column + 2 :].strip()) for n, line in enumerate(block))
        index = end
    return unfolded


def _cut_column(line: str) -> int | None:
    cuts = list(_COLUMN_CUT.finditer(line))
    if len(cuts) != 1 or line.count("|") != 1 or cuts[0].start() < _MIN_COLUMN:
        return None
    return cuts[0].start() + 1


def _fits(line: str, column: int) -> bool:
    """A line diff -y printed as equal on both sides: text, a blank gap at `column`, text."""
    return (
        len(line) > column + 2
        and not line[column - 1 : column + 2].strip()
        and bool(line[:column].strip())
        and bool(line[column + 2 :].strip())
    )


def _two_sided(block: list[str], column: int) -> bool:
    both = [line for line in block if line[:column].strip() and line[column + 1 :].strip()]
    return 2 * len(both) > len(block)


def html_lines(line: str) -> list[str]:
    """`line` cut at HTML line breaks, with tags dropped and entities decoded."""
    if "<" not in line and "&" not in line:
        return [line]
    pieces = _BREAK_TAGS.split(line)
    return [_ENTITY.sub(_entity, _TAGS.sub("", _CELLS.sub(" ", piece))) for piece in pieces]


def _entity(match: re.Match[str]) -> str:
    text = html.unescape(match[0])
    return " " if text in ("\u00a0", "\u2009", "\u202f") else text


def strip_log_prefix(line: str) -> tuple[str, bool]:
    """The line without a kernel log's level, syslog and timestamp prefix; was there one."""
    match = _LOG_PREFIX.match(line) or _SYSLOG_ONLY.match(line) or _PRINTK_LEVEL.match(line)
    if match is None or match.end() == 0:
        return line, False
    return line[match.end() :], True


def strip_markdown(line: str) -> str:
    """The line without list bullets, emphasis, a wrapping code span or table pipes."""
    if _TABLE_RULE.match(line) and "|" in line:
        return ""
    row = _TABLE_ROW.match(line)
    if row is not None and row[1].count("|") >= 1:
        line = "  ".join(cell.strip() for cell in row[1].split("|"))
    line = _BULLET.sub(r"\1", line)
    if "**" in line or "__" in line or "~~" in line:
        line = _STRONG.sub("", line)
    wrapped = _WRAPPED.match(line)
    while wrapped is not None:
        line = wrapped[1] + wrapped[3]
        wrapped = _WRAPPED.match(line)
    if line.count("*") == 1:
        # emphasis around a whole paragraph opens on its first line and closes on its last
        line = _OPEN_STAR.sub(r"\1", _CLOSE_STAR.sub("", line))
    return line


def locale_numbers(line: str) -> str:
    """Decimal commas before a unit made points: '690,1 MiB/s' -> '690.1 MiB/s'."""
    if "," not in line:
        return line
    return _DECIMAL_COMMA.sub(_decimal_point, line)


def _decimal_point(match: re.Match[str]) -> str:
    whole = match["whole"]
    if match["group"]:
        whole = re.sub(r"\D", "", whole)
    return f"{whole}.{match['fraction']}"
