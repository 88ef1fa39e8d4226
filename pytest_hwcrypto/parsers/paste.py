# SPDX-License-Identifier: MIT
"""Turn a pasted post into clean lines, and name the tables found in it (pure).

What a forum or a bug tracker does to tool output, and what is undone here:

* line ends: CRLF, lone CR (old Mac, progress bars) and LF all end a line;
* tabs expanded, no-break and ideographic spaces made plain, zero-width characters and
  terminal colour codes dropped, so "collapsed" or re-spaced columns read alike;
* shell prompts (`$ `, `[root@host ~]# `, `root@box:~# `, `bash-5.2$ `) removed, and a
  command of a known tool after one remembered with its flags (commandline.py);
* e-mail quoting (`> `) and markdown/BBCode fences that are lines of their own ignored;
* HTML and Markdown remnants, kernel log prefixes and decimal commas undone by
  normalise.py (the kernel log lines are remembered: `Paste.log_lines`);
* **glued text**: when a line break was lost, a value runs into the next words
  (``54.6 MiB/sThe next run``).  Every parser lists the places where one of its lines can
  end or start (`splitters`); the generic ones here cut after a rate unit or a
  percentage glued to a word, and between a digit and a capitalised word.  The pieces keep
  the line number of the line they came from, so warnings still name the right line.

After the parsers have found their tables, `name_tables` gives each its index (order of
appearance), its label (the nearest line above it that belongs to no table and is not a
command line: a heading or a prose line; the command only when nothing else is there)
and the command line above it, if there is one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_hwcrypto.parsers import normalise
from pytest_hwcrypto.parsers.commandline import PROGRAMS, parse_command, strip_prompt
from pytest_hwcrypto.parsers.tables import Command, Table

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_SPACES = dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u3000"), " ")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
# lines that only frame a code block: never a label, never content
_FENCE = re.compile(
    r"^\s*(?:`{3,}\S*|~{3,}\S*|\[/?(?:code|pre|quote)[^\]]*\]|</?(?:pre|code)>|[-=*_]{3,}"
    r"|(?:code|quote|spoiler|output)\s*:?"
    r"|-{2,}\s*snip\s*-{2,}|\[\.\.\.\]|\.\.\.|\u2026"  # elisions: --snip--, [...], ...
    r"|\.\.\s+code-block::.*)\s*$",  # reStructuredText
    re.IGNORECASE,
)
# a tool's own frame lines left outside a table (its rows were cut): never a label
_CHROME = re.compile(
    r"^\s*(?:type\s+\d+\s*bytes|The 'numbers' are in|#\s*Tests are approximate"
    r"|#?\s*Algorithm\s*\||Run status group \d|Disk stats \(|fio-\d|Starting \d+ process)"
)
_HEADING_MARKS = re.compile(r"^\s*(?:#{1,6}\s+|\*\*|__)|(?:\*\*|__)\s*$")
_LABEL_LENGTH = 160

# Cut points every tool shares: after a rate unit or a percentage glued to a word, and
# between a number and a capitalised word ("...2004271.10kThe next", "99.5%Second run").
GENERIC_SPLITTERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<=[KMGT]iB/s)(?=[^\s,;:.)\]/|(-])"),
    re.compile(r"(?<=\d\.\d\d%)(?=[^\s\d,;:)\]%])"),
    re.compile(r"(?<=\d)(?=[A-Z][a-z]{2,})(?![KMGT](?:hz|bps|bit|byte)s?\b)"),  # not 400Mhz
)


@dataclass(frozen=True)
class Paste:
    """The post as clean lines; `origins[i]` is the 1-based line of the text line i came from.

    `commands` maps a line index to the known-tool command read on it (prompt removed);
    `log_lines` are the indices of lines that came with a kernel log prefix (dmesg's
    timestamp, syslog's "kernel:"), which normalise.py removed.
    """

    source_name: str
    lines: tuple[str, ...]
    origins: tuple[int, ...]
    commands: dict[int, Command]
    log_lines: frozenset[int] = frozenset()

    def where(self, index: int) -> str:
        """'post.txt:12', the place warnings name."""
        return f"{self.source_name}:{self.origins[index]}"

    def text(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first : last + 1])


def read_paste(text: str, source_name: str, splitters: Iterable[re.Pattern[str]] = ()) -> Paste:
    """Clean `text` line by line and cut glued lines at the parsers' `splitters`."""
    cuts = (*GENERIC_SPLITTERS, *splitters)
    lines: list[str] = []
    origins: list[int] = []
    commands: dict[int, Command] = {}
    log_lines: set[int] = set()
    raw_lines = [_plain(line) for line in _LINE_BREAK.split(text)]
    for position, raw in normalise.unfold_columns(raw_lines):
        number = position + 1
        for part in normalise.html_lines(raw):
            cleaned, logged = _clean(part)
            for piece in _cut(cleaned, cuts):
                stripped, prompted = strip_prompt(piece)
                command = parse_command(stripped) if prompted or _starts_command(stripped) else None
                if command is not None:
                    commands[len(lines)] = command
                if logged:
                    log_lines.add(len(lines))
                lines.append(stripped.rstrip())
                origins.append(number)
    return Paste(source_name, tuple(lines), tuple(origins), commands, frozenset(log_lines))


def _plain(raw: str) -> str:
    """Without terminal colours, zero-width characters, odd blanks and tabs."""
    return _ANSI.sub("", raw).translate(_ZERO_WIDTH).translate(_SPACES).expandtabs(8)


def _clean(line: str) -> tuple[str, bool]:
    """The line as the tool printed it, and whether it carried a kernel log prefix."""
    line = _QUOTE.sub("", line)
    line, logged = normalise.strip_log_prefix(line)
    if not _FENCE.match(line):
        line = normalise.strip_markdown(line)
        line = _QUOTE.sub("", line)  # a quote inside a list item: "- > row"
    return normalise.locale_numbers(line), logged


def _cut(line: str, cuts: Sequence[re.Pattern[str]]) -> list[str]:
    """Split `line` at every cut point (a zero-width or blank match not at the very start)."""
    points: set[tuple[int, int]] = set()
    for pattern in cuts:
        for match in pattern.finditer(line):
            if match.start() > 0 and line[: match.start()].strip():
                points.add((match.start(), match.end()))
    if not points:
        return [line]
    pieces = []
    position = 0
    for start, end in sorted(points):
        if start < position:
            continue
        pieces.append(line[position:start])
        position = end
    pieces.append(line[position:])
    return [piece for piece in pieces if piece.strip()] or [""]


def _starts_command(line: str) -> bool:
    """A bare command line without a prompt, e.g. `openssl speed -evp aes-128-cbc`."""
    word = line.strip().split(" ", 1)[0]
    return word in ("openssl", "cryptsetup", "fio", "sudo", "modprobe", "time", "dmesg")


def is_blank(line: str) -> bool:
    return not line.strip() or _FENCE.match(line) is not None


def name_tables(paste: Paste, tables: list[Table]) -> list[Table]:
    """Order `tables`, drop any overlapping an earlier one, and fill index/label/command.

    The label is the nearest non-blank line above the table that belongs to no table and
    is not a command line (the command when there is nothing else); the command is the
    nearest command line of the table's tool in that same gap, if the paste has one; the
    heading is the nearest line above the command (or the label when there is no command).
    """
    ordered: list[Table] = []
    for table in sorted(tables, key=lambda item: (item.first, -item.last)):
        if ordered and table.first <= ordered[-1].last:
            ordered[-1].warnings.append(
                f"{paste.where(table.first)}: a {table.tool} table overlaps the "
                f"{ordered[-1].tool} table above; it was left out"
            )
            continue
        ordered.append(table)
    floor = 0
    for index, table in enumerate(ordered):
        table.index = index
        gap = [
            line
            for line in range(table.first - 1, floor - 1, -1)
            if not is_blank(paste.lines[line])
        ]
        if gap:
            table.label = _label_text(paste.lines[_label_line(paste, gap)])
        elif index and ordered[index - 1].tool == table.tool:
            # right after a table of the same tool (the next test of one tcrypt stretch,
            # the next run of a loop): under the same heading as the one before
            table.label = ordered[index - 1].label
        for position, line in enumerate(gap):
            command = paste.commands.get(line)
            if command is not None and PROGRAMS.get(command.program) == table.tool:
                table.command = command
                above = gap[position + 1 : position + 2]
                table.heading = _label_text(paste.lines[above[0]]) if above else None
                break
        if table.command is None:
            table.heading = table.label
        floor = table.last + 1
    return ordered


def _label_line(paste: Paste, gap: list[int]) -> int:
    """The line that names a table: the nearest one above it that is not a command line.

    Posts repeat the same command above every table (`cryptsetup benchmark` once per
    kernel); the line above it (``kernel v5.4.6``, ``with CESA:``) is what tells the
    tables apart, and the command is kept apart as the table's `command`.  A tool's own
    frame lines left outside a table (a `type 16 bytes ...` header) are skipped too.
    Only when the gap holds nothing else is its nearest line the label.
    """
    for line in gap:
        if line not in paste.commands and not _CHROME.match(paste.lines[line]):
            return line
    return gap[0]


def _label_text(line: str) -> str:
    text = _HEADING_MARKS.sub("", line).strip()
    if len(text) > _LABEL_LENGTH:
        text = text[: _LABEL_LENGTH - 3].rstrip() + "..."
    return text
