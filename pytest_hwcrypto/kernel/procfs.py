"""Parse ``/proc/crypto`` into typed records.

The kernel prints one block per registered algorithm implementation ("driver"): lines of
``key : value`` (the key left-aligned in a 13-column field, e.g. ``min keysize  : 16``) and
an empty line after each block. Which keys appear depends on the algorithm type and the
kernel version, so every record keeps all raw key/value pairs in ``fields`` (in the order
printed, unknown keys included) next to typed attributes for the common keys.

Parsing is pure: :func:`parse_proc_crypto` takes text. :func:`read_proc_crypto` only reads
a file (the real ``/proc/crypto`` by default) and hands its text over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from pytest_hwcrypto import vocabulary

PROC_CRYPTO = vocabulary.PROC_CRYPTO

# Keys every record must carry: without them a record cannot be named or selected.
REQUIRED_FIELDS = ("name", "driver")
# proc.c prints name, driver, module, priority, refcnt, selftest, internal, [fips], type for
# every algorithm, then type-specific lines.
_LAST_COMMON_FIELD = "type"

_YES_NO = {"yes": True, "no": False}

_T = TypeVar("_T")


class ProcCryptoError(ValueError):
    """/proc/crypto text that cannot be parsed; the message names the source and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
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
    """The complete records of a /proc/crypto text, plus where it was cut off (if it was).

    ``truncated_at_line`` is the first line that was ignored: the start of a dropped
    partial block, or a last line without its newline.
    """

    algs: tuple[CryptoAlg, ...]
    source: str
    truncated_at_line: int | None = None

    @property
    def truncated(self) -> bool:
        return self.truncated_at_line is not None


@dataclass
class _Block:
    """Key/value lines collected for one record before conversion."""

    first_line: int
    fields: dict[str, str] = field(default_factory=dict)
    line_of: dict[str, int] = field(default_factory=dict)
    terminated: bool = False


def parse_proc_crypto(text: str, source: str = "/proc/crypto") -> list[CryptoAlg]:
    """Parse /proc/crypto text into records, in the order the kernel listed them.

    Several drivers of one name and even identical blocks are all kept. Text cut off
    mid-way keeps its complete records: a last line without its newline is ignored (its
    value may be partial) and a last block that stops before its ``type`` line is dropped;
    :func:`parse_proc_crypto_detailed` tells whether that happened.

    Raises :class:`ProcCryptoError` (naming ``source`` and the line) for a malformed line,
    a key repeated inside one block, a complete block without ``name`` or ``driver``, or a
    value of the wrong kind (``priority : high``).
    """
    return list(parse_proc_crypto_detailed(text, source).algs)


def parse_proc_crypto_detailed(text: str, source: str = "/proc/crypto") -> ParsedProcCrypto:
    """Like :func:`parse_proc_crypto`, but also reports a truncated last block."""
    blocks, partial_line = _split_blocks(text, source)
    truncated_at = partial_line
    if blocks and _looks_cut_off(blocks[-1]):
        truncated_at = blocks[-1].first_line
        blocks = blocks[:-1]
    algs = tuple(_to_alg(block, source) for block in blocks)
    return ParsedProcCrypto(algs=algs, source=source, truncated_at_line=truncated_at)


def read_proc_crypto(path: Path = PROC_CRYPTO) -> list[CryptoAlg]:
    """Read and parse a /proc/crypto file (the running kernel's by default)."""
    return parse_proc_crypto(path.read_text(encoding="utf-8", errors="replace"), str(path))


def _split_blocks(text: str, source: str) -> tuple[list[_Block], int | None]:
    """Group lines into blocks separated by blank lines.

    Returns the blocks and, when the text does not end with a newline, the number of its
    last line: that line may have been cut mid-value, so it belongs to no block.
    """
    blocks: list[_Block] = []
    current: _Block | None = None
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        # Serial consoles add \r; pasted text may be indented. Neither changes the meaning.
        line = raw.strip()
        if not line:
            if current is not None:
                current.terminated = True
                blocks.append(current)
                current = None
            continue
        if number == len(lines) and _ends_mid_line(text):
            # Without its newline the last line may be partial ("10" of "100"): ignore it.
            return blocks + ([current] if current else []), number
        key_value = _split_key_value(line)
        if key_value is None:
            raise ProcCryptoError(
                source, number, f"malformed line {raw!r} (expected 'key : value')"
            )
        if current is None:
            current = _Block(first_line=number)
        _add_field(current, key_value, number, source)
    if current is not None:
        blocks.append(current)
    return blocks, None


def _ends_mid_line(text: str) -> bool:
    return bool(text) and not text.endswith(("\n", "\r"))


def _split_key_value(line: str) -> tuple[str, str] | None:
    key, colon, value = line.partition(":")
    key = key.strip()
    if not colon or not key:
        return None
    return key, value.strip()


def _add_field(block: _Block, key_value: tuple[str, str], number: int, source: str) -> None:
    key, value = key_value
    if key in block.fields:
        # The kernel prints each key once per block; a repeat means two blocks ran together.
        raise ProcCryptoError(
            source,
            number,
            f"field {key!r} repeated in the block starting at line {block.first_line}"
            " (missing blank line between records?)",
        )
    block.fields[key] = value
    block.line_of[key] = number


def _looks_cut_off(block: _Block) -> bool:
    """Whether the last block is a truncated read rather than a bad record.

    The kernel ends every block with a blank line, but text is often passed around with
    trailing blank lines stripped, so a missing blank line alone does not prove a cut. An
    unterminated last block counts as cut off when it stops before ``type``, the last line
    the kernel prints for every algorithm (the lines after it are type-specific sizes).
    """
    if block.terminated:
        return False
    return any(key not in block.fields for key in (*REQUIRED_FIELDS, _LAST_COMMON_FIELD))


def _to_alg(block: _Block, source: str) -> CryptoAlg:
    _require_fields(block, source)

    def number(key: str) -> int | None:
        return _typed(block, key, source, _parse_int)

    def yes_no(key: str) -> bool | None:
        return _typed(block, key, source, _parse_yes_no)

    text = block.fields.get
    return CryptoAlg(
        name=block.fields["name"],
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
        source=source,
        line=block.first_line,
    )


def _require_fields(block: _Block, source: str) -> None:
    for key in REQUIRED_FIELDS:
        if key not in block.fields:
            raise ProcCryptoError(
                source, block.first_line, f"record has no {key!r} field: {_describe(block)}"
            )


def _typed(block: _Block, key: str, source: str, convert: Callable[[str], _T]) -> _T | None:
    if key not in block.fields:
        return None
    value = block.fields[key]
    try:
        return convert(value)
    except ValueError:
        raise ProcCryptoError(
            source, block.line_of[key], f"unexpected value {value!r} for {key!r}"
        ) from None


def _parse_int(value: str) -> int:
    return int(value, 10)


def _parse_yes_no(value: str) -> bool:
    try:
        return _YES_NO[value]
    except KeyError:
        raise ValueError(value) from None


def _describe(block: _Block) -> str:
    shown = ", ".join(f"{key}={value}" for key, value in list(block.fields.items())[:3])
    return shown or "(empty)"
