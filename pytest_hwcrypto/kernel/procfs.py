# SPDX-License-Identifier: MIT
"""Parse ``/proc/crypto`` into typed records -- as the kernel writes it and as people paste it.

The kernel prints one block per registered algorithm implementation ("driver"): lines of
``key : value`` (the key left-aligned in a 13-column field, e.g. ``min keysize  : 16``) and
an empty line after each block. Which keys appear depends on the algorithm type and the
kernel version, so every record keeps all raw key/value pairs in ``fields`` (in the order
printed, unknown keys included) next to typed attributes for the common keys.

What reaches us is often not the file itself but a paste of it, so the reader also takes:

* records without blank lines between them (a ``name :`` line always starts a record);
* shell prompts, commands and prose before, between and after records;
* CRLF line ends, indentation, tabs, e-mail quoting (``> ``);
* ``grep -A/-B`` excerpts: ``--`` separators, ``/proc/crypto:`` / ``/proc/crypto-`` file
  prefixes and ``12:`` / ``12-`` line-number prefixes;
* a record cut at the end (dropped and reported in ``truncated_at_line``).

What cannot be trusted is left out with a *note* (one line naming source and line) rather
than guessed; only a text holding no record at all is an error. Parsing is pure:
:func:`parse_proc_crypto` takes text. :func:`read_proc_crypto` and :func:`read_capture` only
read a file and hand its text over.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from pytest_hwcrypto import vocabulary

PROC_CRYPTO = vocabulary.PROC_CRYPTO

# proc.c prints name, driver, module, priority, refcnt, selftest, internal, [fips], type for
# every algorithm, then type-specific lines.
_LAST_COMMON_FIELD = "type"
# Every key crypto/proc.c and the type-specific show() functions print (2.6 to 6.x).
KNOWN_KEYS = frozenset(
    {
        "name",
        "driver",
        "module",
        "priority",
        "refcnt",
        "selftest",
        "internal",
        "fips",
        "type",
        "async",
        "blocksize",
        "min keysize",
        "max keysize",
        "ivsize",
        "geniv",
        "chunksize",
        "walksize",
        "statesize",
        "digestsize",
        "maxauthsize",
        "seedsize",
    }
)
# A key the kernel might add later: lower-case words, short. Prose ("Note: ...") and prompts
# ("root@board:~#") do not look like this, so they are not taken for fields.
_KEY = re.compile(r"[a-z][a-z0-9_]*(?: [a-z0-9_]+)?")
# grep's prefixes: "FILE:" / "FILE-" (with -H or several files), "12:" / "12-" (with -n).
_GREP_LINE_NUMBER = re.compile(r"\d+[:-]")
_QUOTE = re.compile(r"^(?:>\s?)+")
_GREP_SEPARATOR = "--"
_ELISION = re.compile(r"(?:\.{3}|\u2026|\[\.\.\.\]|\[snip\]|<snip>)")
# Values a wrapped line may go on: names and drivers (template names get long).
_WRAPPABLE = ("name", "driver")
_HTML_BREAK = re.compile(r"<br\s*/?>|</?(?:pre|code|tt)>", re.IGNORECASE)

_YES_NO = {"yes": True, "no": False}
_SHOWN = 60  # characters of a value quoted in a note
_MAX_BINARY_SHARE = 0.01

_T = TypeVar("_T")


class ProcCryptoError(ValueError):
    """/proc/crypto text that cannot be used at all; the message names the source and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        place = f"{source}:{line}" if line else source
        super().__init__(f"{place}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


@dataclass(frozen=True)
class CryptoAlg:
    """One block of /proc/crypto: a registered implementation of an algorithm.

    ``fields`` holds every printed key/value pair verbatim and in order; the typed
    attributes are conveniences for the common keys (``None`` when the kernel did not
    print that key for this record). ``source`` and ``line`` (where the block starts) are
    for messages only and do not take part in equality, so two identical blocks compare
    equal.
    """

    name: str
    driver: str
    module: str | None = None
    priority: int | None = None
    refcnt: int | None = None
    selftest: str | None = None
    internal: bool | None = None
    fips: bool | None = None
    type: str | None = None
    # "async" is a Python keyword, hence the different attribute name.
    is_async: bool | None = None
    blocksize: int | None = None
    min_keysize: int | None = None
    max_keysize: int | None = None
    ivsize: int | None = None
    chunksize: int | None = None
    walksize: int | None = None
    statesize: int | None = None
    digestsize: int | None = None
    maxauthsize: int | None = None
    seedsize: int | None = None
    geniv: str | None = None
    fields: dict[str, str] = field(default_factory=dict, hash=False)
    source: str = field(default="/proc/crypto", compare=False)
    line: int = field(default=0, compare=False)
    # False for the last record of a text cut short: lines the kernel printed are missing.
    complete: bool = field(default=True, compare=False)

    @property
    def is_internal(self) -> bool:
        """True for helper implementations the kernel never hands out by name."""
        return self.internal is True

    @property
    def passed_selftest(self) -> bool:
        """True when the kernel marked the implementation tested.

        The kernel prints ``passed`` once the self-test succeeded (or tests are compiled
        out) and ``unknown`` while it is pending or after it failed.
        """
        return self.selftest == "passed"

    @property
    def location(self) -> str:
        """``source:line`` of the block, for messages."""
        return f"{self.source}:{self.line}"


@dataclass(frozen=True)
class ParsedProcCrypto:
    """The records of a /proc/crypto text, where it was cut off (if it was), and notes.

    ``truncated_at_line`` is the first line that was ignored: the start of a dropped
    partial block, or a last line without its newline. ``notes`` are one line each
    (``source:line: what was left out and why``), in text order.
    """

    algs: tuple[CryptoAlg, ...]
    source: str
    truncated_at_line: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        return self.truncated_at_line is not None


@dataclass
class _Block:
    """Key/value lines collected for one record before conversion."""

    first_line: int
    fields: dict[str, str] = field(default_factory=dict)
    line_of: dict[str, int] = field(default_factory=dict)
    # Ended by a blank line, a grep separator, prose or the next record -- not by the text.
    terminated: bool = False
    # The writer left lines out ("..."): an excerpt, not a cut read.
    elided: bool = False
    # The last record of a text cut short: kept, but incomplete.
    cut: bool = False


@dataclass
class _Reader:
    """Walks the lines once; collects blocks and notes."""

    source: str
    blocks: list[_Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    current: _Block | None = None
    # Lines after a record was given up on, up to the next blank line or name line.
    skipping: bool = False
    # The key of a value that may go on in the next line (empty, or open parentheses).
    open_value: str | None = None

    def note(self, line: int, problem: str) -> None:
        self.notes.append(f"{self.source}:{line}: {problem}")

    def close(self) -> None:
        self.open_value = None
        if self.current is not None:
            self.current.terminated = True
            self.blocks.append(self.current)
            self.current = None
        self.skipping = False

    def field_line(self, number: int, key: str, value: str) -> None:
        block = self.current
        starts_record = key == "name" or (
            # `grep driver /proc/crypto` and `grep -A1 ...` excerpts: driver lines without
            # their name line still name a driver, so each starts a (nameless) record.
            key == "driver" and (block is None or "driver" in block.fields)
        )
        if starts_record:
            self.close()
            block = self.current = _Block(first_line=number)
        elif block is None:
            if key in KNOWN_KEYS and not self.skipping:
                shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
                self.note(number, f"'{key} : {shown}' outside a record (no 'name' line above)")
                self.skipping = True
            return
        if key in block.fields:
            # The kernel prints each key once per block: a repeat means lines of another
            # record whose name line is missing. Keep what came first, drop the rest.
            self.note(
                number,
                f"field {key!r} repeated in the record starting at line {block.first_line}"
                " (lines of a record without its 'name' line?): skipped up to the next record",
            )
            self.close()
            self.skipping = True
            return
        block.fields[key] = value
        block.line_of[key] = number
        self.open_value = key if _value_may_continue(key, value) else None

    def continue_value(self, text: str) -> bool:
        """Join a line to a value a terminal or mailer wrapped (``driver :`` then the name)."""
        block = self.current
        key = self.open_value
        if block is None or key is None:
            return False
        block.fields[key] = block.fields[key] + text
        self.open_value = key if _value_may_continue(key, block.fields[key]) else None
        return True


def parse_proc_crypto(text: str, source: str = "/proc/crypto") -> list[CryptoAlg]:
    """Parse /proc/crypto text into records, in the order the kernel listed them.

    Several drivers of one name and even identical blocks are all kept. What cannot be
    trusted is left out (see :func:`parse_proc_crypto_detailed` for the notes saying so).
    Text without any record line gives ``[]`` when it is blank and raises
    :class:`ProcCryptoError` (naming ``source``) when it holds something else.
    """
    return list(parse_proc_crypto_detailed(text, source).algs)


def parse_proc_crypto_detailed(text: str, source: str = "/proc/crypto") -> ParsedProcCrypto:
    """Like :func:`parse_proc_crypto`, but also reports a truncated last block and notes."""
    reader, partial_line = _split_blocks(text, source)
    blocks = reader.blocks
    truncated_at = partial_line
    cut = bool(blocks) and _looks_cut_off(blocks[-1], blocks[:-1])
    if cut:
        last = blocks[-1]
        truncated_at = last.first_line
        if "driver" in last.fields:
            # Its name and driver still say what it is; what decides a winner may be gone.
            reader.note(
                last.first_line,
                "record cut off before its 'type' line: kept, but it cannot win its name",
            )
            last.cut = True
        else:
            blocks.pop()
            reader.note(last.first_line, "record cut off before its 'driver' line: dropped")
    algs: list[CryptoAlg] = []
    for block in blocks:
        alg = _to_alg(block, reader)
        if alg is not None:
            algs.append(alg)
    if not algs and not reader.notes and text.strip() and truncated_at is None:
        raise ProcCryptoError(source, 0, _no_record_problem(text))
    return ParsedProcCrypto(
        algs=tuple(algs), source=source, truncated_at_line=truncated_at, notes=tuple(reader.notes)
    )


def read_proc_crypto(path: Path = PROC_CRYPTO) -> list[CryptoAlg]:
    """Read and parse a /proc/crypto file (the running kernel's by default)."""
    return parse_proc_crypto(path.read_text(encoding="utf-8", errors="replace"), str(path))


def read_capture(path: Path) -> ParsedProcCrypto:
    """Read a /proc/crypto file or a capture of it, for a user who named that file.

    Every problem is a :class:`ProcCryptoError` of one line naming the file: missing,
    a directory, unreadable, binary, empty, or holding no record.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ProcCryptoError(str(path), 0, "no such file") from None
    except IsADirectoryError:
        raise ProcCryptoError(str(path), 0, "is a directory, not a /proc/crypto capture") from None
    except OSError as error:
        raise ProcCryptoError(str(path), 0, f"cannot be read: {error.strerror}") from None
    return parse_capture_bytes(data, str(path))


def parse_capture_bytes(data: bytes, source: str) -> ParsedProcCrypto:
    """Decode and parse a capture's bytes; binary, empty or record-less data is an error."""
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise ProcCryptoError(source, line, "binary data (a NUL byte), not /proc/crypto text")
    text = data.decode("utf-8", errors="replace")
    if text.count("\ufffd") > max(1, len(text) * _MAX_BINARY_SHARE):
        raise ProcCryptoError(source, 0, "binary data (not UTF-8 text), not /proc/crypto text")
    if not text.strip():
        raise ProcCryptoError(source, 0, "empty: no /proc/crypto record in it")
    parsed = parse_proc_crypto_detailed(text, source)
    if not parsed.algs:
        first = parsed.notes[0] if parsed.notes else ""
        detail = f" (first problem: {first.split(': ', 1)[-1]})" if first else ""
        raise ProcCryptoError(source, 0, f"no usable /proc/crypto record{detail}")
    return parsed


def _split_blocks(text: str, source: str) -> tuple[_Reader, int | None]:
    """Group field lines into blocks; returns the reader and a cut-off last line, if any.

    When the text does not end with a newline its last line may have been cut mid-value,
    so it belongs to no block and its number is returned.
    """
    reader = _Reader(source)
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = _clean(raw)
        if number == len(lines) and _ends_mid_line(text) and _may_be_cut_field(line):
            # Without its newline the last line may be partial ("10" of "100"): ignore it.
            if reader.current is not None:
                reader.blocks.append(reader.current)
            return reader, number
        if not line or line == _GREP_SEPARATOR:
            reader.close()
            continue
        key_value = field_of_line(line)
        if key_value is not None:
            reader.field_line(number, *key_value)
            continue
        if reader.continue_value(line):
            continue
        if _ELISION.fullmatch(line):
            # "..." where the writer left fields out: the record goes on, an excerpt.
            if reader.current is not None:
                reader.current.elided = True
            continue
        if reader.current is not None and _starts_with_known_key(line):
            # "refcnt 1": a field line that lost its colon. Its value cannot be trusted.
            reader.note(number, f"malformed line {raw.strip()!r} (expected 'key : value'): skipped")
            continue
        # Prose, a prompt, a command, Markdown: ends the record it follows.
        reader.close()
    if reader.current is not None:
        reader.blocks.append(reader.current)
    return reader, None


def field_of_line(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a /proc/crypto field line, with any grep prefix taken off.

    ``None`` for anything else (prose, prompts, a ``key : value`` whose key does not look
    like one the kernel prints). A prefix is only taken off when a known key follows it.
    """
    direct = _split_key_value(line)
    if direct is not None and _KEY.fullmatch(direct[0]) and not direct[1].startswith("//"):
        return direct
    for cut in _grep_prefix_ends(line):
        rest = line[cut:].lstrip()
        split = _split_key_value(rest)
        if split is not None and split[0] in KNOWN_KEYS:
            return split
    return None


def _grep_prefix_ends(line: str) -> list[int]:
    """Positions just after each candidate grep prefix (``FILE:``, ``12-``, ``FILE:12:``)."""
    head = line.split(" ", 1)[0]
    ends: list[int] = []
    for position, character in enumerate(head):
        if character in ":-":
            ends.append(position + 1)
            number = _GREP_LINE_NUMBER.match(line, position + 1)
            if number:
                ends.append(number.end())
    number = _GREP_LINE_NUMBER.match(line)
    if number:
        ends.append(number.end())
    return sorted(set(ends))


def _clean(raw: str) -> str:
    """A line without what pasting added: indentation, e-mail quoting, HTML remnants."""
    line = _QUOTE.sub("", raw.strip()).strip()
    if "<" in line:
        line = _HTML_BREAK.sub("", line).strip()
    if "&" in line and ";" in line:
        line = html.unescape(line)
    return line


def _may_be_cut_field(line: str) -> bool:
    """Whether a last line without its newline may be a field line cut short ("nam")."""
    if not line:
        return False
    if field_of_line(line) is not None:
        return True
    return any(key.startswith(line) for key in KNOWN_KEYS)


def _split_key_value(line: str) -> tuple[str, str] | None:
    key, colon, value = line.partition(":")
    key = " ".join(key.split())
    if not colon or not key:
        return None
    return key, value.strip()


def _value_may_continue(key: str, value: str) -> bool:
    if key not in _WRAPPABLE:
        return False
    return not value or value.count("(") > value.count(")")


def _starts_with_known_key(line: str) -> bool:
    words = line.split()
    return bool(words) and (words[0] in KNOWN_KEYS or " ".join(words[:2]) in KNOWN_KEYS)


def _ends_mid_line(text: str) -> bool:
    return bool(text) and not text.endswith(("\n", "\r"))


def _no_record_problem(text: str) -> str:
    if "processor" in text and ("model name" in text or "cpu family" in text):
        return "this is /proc/cpuinfo, not /proc/crypto (no 'name : ...' record)"
    return "no /proc/crypto record in it (no 'name : ...' line followed by 'driver : ...')"


def _looks_cut_off(block: _Block, before: list[_Block]) -> bool:
    """Whether the last block is a truncated read rather than a complete record.

    The kernel ends every block with a blank line, but text is often passed around with
    trailing blank lines stripped, so a missing blank line alone does not prove a cut. An
    unterminated last block counts as cut off when it has no driver, or when it stops
    before ``type`` (the last line the kernel prints for every algorithm) while the records
    before it have theirs -- in a ``grep`` excerpt no record has one, and the last is as
    complete as the others.
    """
    if block.terminated or (block.elided and "driver" in block.fields):
        return False
    if "driver" not in block.fields:
        return True
    excerpt = bool(before) and all(_LAST_COMMON_FIELD not in b.fields for b in before)
    return _LAST_COMMON_FIELD not in block.fields and not excerpt


def _to_alg(block: _Block, reader: _Reader) -> CryptoAlg | None:
    if "driver" not in block.fields:
        reader.note(
            block.first_line,
            f"record {block.fields.get('name', '?')!r} has no 'driver' line: skipped",
        )
        return None

    def number(key: str) -> int | None:
        return _typed(block, key, reader, _parse_int)

    def yes_no(key: str) -> bool | None:
        return _typed(block, key, reader, _parse_yes_no)

    text = block.fields.get
    return CryptoAlg(
        name=block.fields.get("name", ""),
        driver=block.fields["driver"],
        module=text("module"),
        priority=number("priority"),
        refcnt=number("refcnt"),
        selftest=text("selftest"),
        internal=yes_no("internal"),
        fips=yes_no("fips"),
        type=text("type"),
        is_async=yes_no("async"),
        blocksize=number("blocksize"),
        min_keysize=number("min keysize"),
        max_keysize=number("max keysize"),
        ivsize=number("ivsize"),
        chunksize=number("chunksize"),
        walksize=number("walksize"),
        statesize=number("statesize"),
        digestsize=number("digestsize"),
        maxauthsize=number("maxauthsize"),
        seedsize=number("seedsize"),
        geniv=text("geniv"),
        fields=dict(block.fields),
        source=reader.source,
        line=block.first_line,
        complete=not block.cut,
    )


def _typed(block: _Block, key: str, reader: _Reader, convert: Callable[[str], _T]) -> _T | None:
    if key not in block.fields:
        return None
    value = block.fields[key]
    try:
        return convert(value)
    except ValueError:
        reader.note(block.line_of[key], f"unexpected value {value!r} for {key!r}: left out")
        return None


def _parse_int(value: str) -> int:
    return int(value, 10)


def _parse_yes_no(value: str) -> bool:
    try:
        return _YES_NO[value]
    except KeyError:
        raise ValueError(value) from None
