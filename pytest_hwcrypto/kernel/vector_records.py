# SPDX-License-Identifier: MIT
"""The text format of NIST CAVP and pyca vector files, and deterministic sampling (pure).

"KEY = ..." lines, records separated by blank lines (or by a repeated field), "[...]"
section headers. Kept apart from vectors.py, which maps kernel algorithms to files and
records to vectors, because this part knows nothing about algorithms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, TypeVar

T = TypeVar("T")


# --- parsing the NIST-style text format (pure) ----------------------------------------------


@dataclass(frozen=True)
class RawRecord:
    """One record of a vector file: upper-cased field names, the section it sits in."""

    position: int
    fields: dict[str, str]
    section: tuple[tuple[str, str], ...] = ()  # "[Keylen = 128]" -> ("KEYLEN", "128")
    direction: str | None = None  # "encrypt"/"decrypt" from "[ENCRYPT]"/"[DECRYPT]"
    failed: bool = False  # a bare "FAIL" line: the record must be rejected

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)

    def where(self) -> str:
        count = self.fields.get("COUNT")
        place = f"COUNT = {count}" if count is not None else f"record {self.position}"
        if self.direction:
            place += f" in [{self.direction.upper()}]"
        params = ", ".join(f"{k} = {v}" for k, v in self.section)
        return f"{place} [{params}]" if params else place


def keep_every_section(section: Mapping[str, str]) -> bool:
    return True


def parse_records(
    lines: Iterable[str],
    keep_section: Callable[[Mapping[str, str]], bool] = keep_every_section,
) -> list[RawRecord]:
    """Records of a NIST CAVP / pyca vector file, in file order.

    A record ends at a blank line, or when a field repeats (some files have no blank line
    between records). "[ENCRYPT]"-style headers set the direction, "[Name = value]"
    headers the section parameters; both apply to the records that follow. Records of
    sections `keep_section` rejects are counted (positions stay file positions) but not
    parsed: the GCM files have 66,000 lines, two thirds of them for IV lengths the kernel
    cannot take, and this runs at collection time. One plain loop, for the same reason.
    """
    records: list[RawRecord] = []
    section: dict[str, str] = {}
    section_items: tuple[tuple[str, str], ...] = ()
    direction: str | None = None
    fields: dict[str, str] = {}
    failed = skipping = pending_skipped = False
    position = 0

    def close() -> None:
        nonlocal fields, failed, position, pending_skipped
        if fields:
            records.append(RawRecord(position, fields, section_items, direction, failed))
        if fields or pending_skipped:
            position += 1
        fields, failed, pending_skipped = {}, False, False

    for raw in lines:
        line = raw.strip()
        if not line:
            close()
        elif line[0] == "#":
            continue
        elif line[0] == "[" and line[-1] == "]":
            close()
            name, equals, value = line[1:-1].partition("=")
            if equals:
                section[name.strip().upper()] = value.strip()
            elif name.strip().upper() in ("ENCRYPT", "DECRYPT"):
                direction, section = name.strip().lower(), {}
            section_items = tuple(section.items())
            skipping = not keep_section(section)
        elif skipping:
            pending_skipped = True
        elif line == "FAIL":
            failed = True
        else:
            name, equals, value = line.partition("=")
            if not equals:
                continue
            key = name.strip().upper()
            if key in fields:
                close()
            fields[key] = value.strip()
    close()
    return records


def unhex(text: str) -> bytes:
    return bytes.fromhex(text.strip())


def message_of(record: RawRecord, field_name: str = "MSG") -> bytes:
    """The message of a hash record: NIST writes the empty message as Len = 0, Msg = 00."""
    data = unhex(record.get(field_name))
    length = record.get("LEN")
    return data[: int(length) // 8] if length else data


# --- deterministic sampling (pure) ----------------------------------------------------------


def evenly_spaced(items: Sequence[T], limit: int) -> list[T]:
    """At most `limit` items spread over `items`, always including the first and last."""
    if limit <= 0:
        return []
    if len(items) <= limit:
        return list(items)
    if limit == 1:
        return [items[0]]
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def sample(items: Sequence[T], limit: int, shape: Callable[[T], object]) -> list[T]:
    """The module docstring's rule: shape representatives, then evenly spaced, in file order."""
    representatives: list[int] = []
    seen: set[object] = set()
    for index, item in enumerate(items):
        key = shape(item)
        if key not in seen:
            seen.add(key)
            representatives.append(index)
    chosen = set(evenly_spaced(representatives, limit))
    rest = [index for index in range(len(items)) if index not in chosen]
    chosen.update(evenly_spaced(rest, limit - len(chosen)))
    return [items[index] for index in sorted(chosen)]


def record_shape(record: RawRecord) -> object:
    """What makes records exercise different code paths: section, direction, field lengths."""
    lengths = tuple(
        sorted((name, len(value)) for name, value in record.fields.items() if name != "COUNT")
    )
    return (record.direction, record.section, record.failed, lengths)
