# SPDX-License-Identifier: MIT
"""Read `cryptsetup benchmark` output, 1.x and 2.x, as pasted (pure: Paste in, Tables out).

What the tool prints (lib/utils_benchmark.c and src/cryptsetup.c), and what becomes what:

* ``# Tests are approximate using memory only (no storage IO).`` -- starts a run;
* ``PBKDF2-sha256    4821039 iterations per second for 256-bit key`` (1.x omits
  ``for 256-bit key``; a hash the kernel lacks prints ``PBKDF2-whirlpool N/A``) and
  ``argon2id  4 iterations, 65536 memory, 4 parallel threads (CPUs) for 256-bit key
  (requested 2000 ms time)`` -- key-derivation cost, recorded as `PbkdfRecord`s: they are
  iterations and KiB, never bytes/s;
* the header ``#     Algorithm |       Key |      Encryption |      Decryption`` (its
  spacing differs between versions and with ``-c``);
* cipher rows ``aes-xts   512b   1234.5 MiB/s   1190.2 MiB/s`` -- two Measurements each
  (op encrypt and decrypt, key_bits from the row, block_size None: cryptsetup does not
  say which buffer it used), bytes/s = MiB/s x 2^20;
* ``serpent-cbc  128b  N/A  N/A`` -- a cipher this kernel lacks: an `UnavailableCipher`
  record, and ``Cipher X (with N bits key) is not available.`` for ``-c X`` likewise.

Translations (cryptsetup's po files: de, fr, ru, ja, zh_CN...) change every word but the
layout: the header is any comment line cut into three or four cells by ``|`` (``#
Algorithmus | Schlüssel | Verschlüsselung | Entschlüsselung``; also without the ``#``,
as hand-edited), the first comment is any ``#`` line right above the PBKDF2 lines, a
PBKDF2 row is ``PBKDF2-<hash>`` and its count (the key size is the last number), an
argon2 row its numbers in order, and "not available" is any value without digits
(``N/A``, ``N/D``, Russian ``N/D`` in Cyrillic, ``不可用``).  Comment lines a poster
added inside a run (``# encryption:``) belong to it.  Kernel log lines interleaved by a
serial console do not end a run.

A run ends at prose, or where a new run visibly starts (a PBKDF line, a header or a
comment after cipher rows, a row repeating one already read).  A row cut short (a truncated paste)
keeps what it has, with a warning naming the line; an exact repeat of a line is ignored
with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.paste import Paste, is_blank
from pytest_hwcrypto.parsers.tables import Record, Table, finite_rate
from pytest_hwcrypto.vocabulary import Op, Source

TOOL = "cryptsetup"
_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_RATE = r"\d+(?:\.\d+)?\s*[KMGT]iB/s"
# 'aes-xts', 'serpent-cbc', Adiantum's 'xchacha12,aes-adiantum', and with -c the mode as
# given: 'aes-cbc-essiv:sha256', 'aes-xts-plain64'
_CIPHER = r"[a-z0-9]+(?:[-,][a-z0-9_:.]+)+"

_TESTS = re.compile(r"^\s*#\s*Tests are approximate", re.IGNORECASE)
_COMMENT = re.compile(r"^\s*[#\u2116](?!#)\s*\S")  # Ukrainian uses '№' for '#'
# three or four cells of words split by '|': the header in any language
_HEADER = re.compile(r"^\s*[#\u2116]?\s*[^\W\d][^|\d]*(?:\|[^|\d]*[^\W\d][^|\d]*){2,3}\|?\s*$")
_PBKDF2 = re.compile(r"^\s*[\"\u201e]?PBKDF2-(?P<hash>[\w.-]+?)[\"\u201c]?\s+(?P<rest>\S.*)$")
_ARGON = re.compile(r"^\s*(?P<kdf>argon2id?)\s+(?P<rest>\S.*)$")
_ROW = re.compile(
    rf"^\s*(?P<cipher>{_CIPHER})\s+(?P<key>\d+)\s*b\s+(?P<enc>{_RATE}|N/A)"
    rf"(?:\s+(?P<dec>{_RATE}|N/A))?\s*$"
)
_ROW_START = re.compile(
    rf"^\s*(?P<cipher>{_CIPHER})\s*\|?\s+(?P<key>\d+)\s*b\b\s*\|?\s*(?P<rest>.*)$"
)
_MISSING = re.compile(
    r"Cipher\s+(?P<cipher>\S+)\s+\(with\s+(?P<key>\d+)\s+bits?\s+key\)\s+is\s+not\s+available"
)
# cryptsetup's word for "Decryption" in its po files (en, de, fr, es, it, pl, pt_BR, ro,
# cs, sk, da, sv, nl, ru, uk, sr, ja, zh_CN, ka), by stem
_DECRYPTION = re.compile(
    r"decr|dekr|descif|descrip|déchif|dechif|entschl|odszyf|ontsl|dešif|desif|avkryp"
    r"|расшиф|розшиф|дешиф|復号|解密|გაშიფ"
)
_ONE_VALUE_COLUMN = 3  # algorithm, key, one value
# what cryptsetup prints right after its first comment line: a translated one is known so
_OPENS = ("kdf", "header")
_VALUE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT])iB/s")

# Where a pasted cryptsetup line may have lost its line break (paste.read_paste).
SPLITTERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\s*(?=#\s*Tests are approximate)"),
    re.compile(r"\s*(?=#\s*Algorithm\s*\|)"),
    re.compile(r"(?<=Decryption)\s*(?=\S)"),
    re.compile(r"\s*(?=PBKDF2-[\w.-]+\s+(?:\d+\s+iterations|N/A))"),
    re.compile(r"\s*(?=argon2id?\s+(?:\d+\s+iterations,|N/A))"),
    re.compile(rf"(?:(?<=iB/s)|(?<=N/A))\s+(?={_CIPHER}\s+\d+\s*b\s)"),
    # words after a rate (not the next value): the text after a table
    re.compile(r"(?:(?<=iB/s)|(?<=N/A))\s+(?!N/A)(?=[^\W\d_])"),
    re.compile(r"(?<=bit key)\s*(?=[^\s(])"),
    re.compile(r"(?<=ms time\))\s*(?=\S)"),
)


@dataclass
class PbkdfRecord(Record):
    """A key-derivation benchmark row: what unlocking a LUKS volume costs, not throughput."""

    KIND = "cryptsetup-pbkdf"
    kdf: str
    hash: str | None = None
    iterations_per_second: int | None = None
    iterations: int | None = None
    memory_kib: int | None = None
    threads: int | None = None
    key_bits: int | None = None
    requested_ms: int | None = None
    available: bool = True

    def describe(self) -> str:
        name = f"{self.kdf}-{self.hash}" if self.hash else self.kdf
        if not self.available:
            return f"{name}: N/A"
        key = f" for {self.key_bits}-bit key" if self.key_bits else ""
        if self.iterations_per_second is not None:
            return f"{name}: {self.iterations_per_second} iterations per second{key}"
        return (
            f"{name}: {self.iterations} iterations, {self.memory_kib} KiB memory, "
            f"{self.threads} threads{key}"
        )


@dataclass
class UnavailableCipher(Record):
    """A cipher cryptsetup could not benchmark: the kernel lacks it (an N/A row)."""

    KIND = "cryptsetup-unavailable"
    algorithm: str
    key_bits: int | None = None

    def describe(self) -> str:
        return f"{self.algorithm} {self.key_bits}-bit: N/A (not available in this kernel)"


@dataclass
class _Run:
    first: int
    last: int
    table: Table
    rows: dict[tuple[str, int], str] = field(default_factory=dict)
    previous: str | None = None
    has_rows: bool = False
    only: Op | None = None  # a header with one value column: which op it is


def find_tables(paste: Paste) -> list[Table]:
    """Every cryptsetup benchmark run in the paste, with a Table each (may be empty)."""
    tables: list[Table] = []
    run: _Run | None = None
    for index, line in enumerate(paste.lines):
        if is_blank(line):
            continue
        kind = _classify(line)
        if kind is None and _COMMENT.match(line) and _next_kind(paste, index) is not None:
            # '# Die Tests sind nur annähernd genau...' or a poster's '# encryption:'
            kind = "tests" if run is not None or _next_kind(paste, index) in _OPENS else None
        if kind is None and index in paste.log_lines:
            continue  # a kernel message on the same console
        if kind is None:
            if run is not None:
                tables.append(_finish(run))
            run = None
            continue
        if run is None or _starts_new_run(run, kind, line):
            if run is not None:
                tables.append(_finish(run))
            run = _Run(first=index, last=index, table=Table(TOOL, index, index))
        _read(paste, run, index, line, kind)
    if run is not None:
        tables.append(_finish(run))
    return [table for table in tables if not table.empty]


def _next_kind(paste: Paste, index: int) -> str | None:
    """The kind of the next line that is neither blank nor a kernel message."""
    for line in range(index + 1, len(paste.lines)):
        text = paste.lines[line]
        if not is_blank(text) and line not in paste.log_lines:
            return _classify(text)
    return None


def _classify(line: str) -> str | None:
    if _TESTS.match(line):
        return "tests"
    if _HEADER.match(line):
        return "header"
    if _PBKDF2.match(line) or _ARGON.match(line):
        return "kdf"
    if _ROW_START.match(line):
        return "row"
    if _MISSING.search(line):
        return "missing"
    return None


def _starts_new_run(run: _Run, kind: str, line: str) -> bool:
    if kind in ("tests", "kdf", "header") and run.has_rows:
        return True
    if kind == "row" and line.strip() != run.previous:
        row = _ROW_START.match(line)
        assert row is not None
        return (row["cipher"].lower(), int(row["key"])) in run.rows
    return False


def _read(paste: Paste, run: _Run, index: int, line: str, kind: str) -> None:
    run.last = index
    table = run.table
    text = line.strip()
    if kind == "row" and text == run.previous:
        table.warnings.append(f"{paste.where(index)}: repeats the line above; ignored")
        return
    run.previous = text
    if kind == "kdf":
        table.records.append(_kdf_record(line))
    elif kind == "header":
        run.only = _single_column(line)
    elif kind == "row":
        run.has_rows = True
        _read_row(paste, run, index, line)
    elif kind == "missing":
        missing = _MISSING.search(line)
        assert missing is not None
        table.records.append(UnavailableCipher(missing["cipher"], int(missing["key"])))
        table.warnings.append(f"{paste.where(index)}: cryptsetup says: {text}")


def _single_column(header: str) -> Op | None:
    """The op of a header with one value column ('Key | Decryption'), else None.

    Posters cut the table into an encryption and a decryption part; the column's word,
    in cryptsetup's own languages, says which (a word not known here: encryption).
    """
    cells = [cell.strip().lower() for cell in header.lstrip("#\u2116 ").split("|")]
    cells = [cell for cell in cells if cell]
    if len(cells) != _ONE_VALUE_COLUMN:
        return None
    return Op.DECRYPT if _DECRYPTION.search(cells[-1]) else Op.ENCRYPT


def _kdf_record(line: str) -> PbkdfRecord:
    """A PBKDF2 or argon2 line, by its numbers alone (the words are translated).

    PBKDF2: iterations per second, then the key size (1.x prints none); argon2:
    iterations, memory, threads, key size, requested milliseconds.  No number at all is
    cryptsetup's "N/A" in whatever language.
    """
    pbkdf2 = _PBKDF2.match(line)
    if pbkdf2:
        numbers = re.findall(r"\d+", pbkdf2["rest"])
        return PbkdfRecord(
            kdf="pbkdf2",
            hash=pbkdf2["hash"].lower(),
            iterations_per_second=_int(numbers[0]) if numbers else None,
            key_bits=_int(numbers[-1]) if len(numbers) > 1 else None,
            available=bool(numbers),
        )
    argon = _ARGON.match(line)
    assert argon is not None
    numbers = [_int(number) for number in re.findall(r"\d+", argon["rest"])]
    numbers += [None] * (5 - len(numbers))
    return PbkdfRecord(
        kdf=argon["kdf"].lower(),
        iterations=numbers[0],
        memory_kib=numbers[1],
        threads=numbers[2],
        key_bits=numbers[3],
        requested_ms=numbers[4],
        available=numbers[0] is not None,
    )


def _read_row(paste: Paste, run: _Run, index: int, line: str) -> None:
    table = run.table
    start = _ROW_START.match(line)
    assert start is not None
    algorithm, key_bits = start["cipher"].lower(), int(start["key"])
    run.rows[(algorithm, key_bits)] = line.strip()
    rest = start["rest"].replace("|", " ").strip()
    row = _ROW.match(f"{algorithm} {key_bits}b {rest}")
    if row is not None and run.only is not None:
        # a one-column table ('Key | Decryption'): its one value is that op's
        if row["dec"] is not None:
            table.warnings.append(
                f"{paste.where(index)}: {algorithm} {key_bits}b row has more values than its "
                f"header's one column; read the first as {run.only}"
            )
        encrypt, decrypt = (row["enc"], None) if run.only == Op.ENCRYPT else (None, row["enc"])
    elif row is not None:
        encrypt, decrypt = row["enc"], row["dec"]
        if decrypt is None:
            table.warnings.append(
                f"{paste.where(index)}: {algorithm} {key_bits}b row has no decryption value"
            )
    elif rest and not re.search(r"\d", rest):
        encrypt, decrypt = "N/A", "N/A"  # "not available" in the locale's words
    else:
        values = [match for match in _VALUE.finditer(rest)][:2]
        if not values:
            table.warnings.append(f"{paste.where(index)}: {algorithm} row has no values")
            return
        encrypt = values[0][0]
        decrypt = values[1][0] if len(values) > 1 else None
        table.warnings.append(
            f"{paste.where(index)}: {algorithm} {key_bits}b row is incomplete; read "
            + ("encryption only" if decrypt is None else "its first two values")
        )
    if encrypt in ("N/A", None) and decrypt in ("N/A", None):
        table.records.append(UnavailableCipher(algorithm, key_bits))
        return
    for op, value in ((Op.ENCRYPT, encrypt), (Op.DECRYPT, decrypt)):
        rate = _bytes_per_second(value)
        if rate is None:
            continue
        table.measurements.append(
            Measurement(
                source=str(Source.CRYPTSETUP),
                algorithm=algorithm,
                driver=None,
                key_bits=key_bits,
                block_size=None,
                op=str(op),
                bytes_per_second=rate,
                extra={"mib_per_second": round(rate / 2**20, 3)},
            )
        )


def _bytes_per_second(value: str | None) -> float | None:
    if value is None:
        return None
    match = _VALUE.search(value)
    if match is None:
        return None
    rate = float(match["number"]) * _UNITS[match["unit"]]
    return rate if finite_rate(rate) else None


def _finish(run: _Run) -> Table:
    run.table.first, run.table.last = run.first, run.last
    return run.table


def _int(text: str | None) -> int | None:
    """The number, or None when absent or too long to be a count (a mangled paste)."""
    return int(text) if text is not None and len(text) <= 18 else None
