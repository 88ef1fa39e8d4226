# SPDX-License-Identifier: MIT
"""Read fio's ``--output-format=json`` as pasted, prose and all around it (pure).

A JSON document is found where a line starts with ``{`` and the next lines name ``"fio
version"`` or ``"jobs"``; it is decoded from there (`raw_decode`, so text glued after the
closing brace does not matter; strings may hold raw line breaks, as a re-wrapped paste
leaves them).  A document cut short is closed after its last complete object and read
with a warning naming the line, so a truncated paste still gives the jobs it holds.

What is read, as from the human output (fio.py): per job and direction with I/O, the
bandwidth (``bw_bytes``), IOPS, the stdev of the bandwidth samples (``bw_dev``, KiB/s),
``clat_ns`` percentiles and ``lat_ns`` mean/stdev in microseconds, CPU usr/sys; and every
entry of ``disk_util`` as a `FioDisk` record.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pytest_hwcrypto.parsers.fio import TOOL, FioDisk, job_measurement, note_storage
from pytest_hwcrypto.parsers.paste import Paste
from pytest_hwcrypto.parsers.tables import Table, finite_rate

_LOOKAHEAD = 6
_SIZE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[kKmMgG]?)i?[bB]?\s*$")
_SIZE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}
_DECODER = json.JSONDecoder(strict=False)
_LATENCY_KEYS = (("min", "min"), ("max", "max"), ("avg", "mean"), ("stdev", "stddev"))


def find_tables(paste: Paste) -> list[Table]:
    """Every fio JSON document in the paste that has a job or a disk."""
    tables: list[Table] = []
    index = 0
    while index < len(paste.lines):
        line = paste.lines[index]
        if line.lstrip().startswith("{") and _looks_like_fio(paste, index):
            table, last = _decode(paste, index)
            if table is not None and not table.empty:
                tables.append(table)
            index = max(last, index) + 1
        else:
            index += 1
    return tables


def _looks_like_fio(paste: Paste, index: int) -> bool:
    window = paste.text(index, min(index + _LOOKAHEAD, len(paste.lines) - 1))
    return '"fio version"' in window or '"jobs"' in window


def _decode(paste: Paste, first: int) -> tuple[Table | None, int]:
    text = paste.text(first, len(paste.lines) - 1).lstrip()
    warnings: list[str] = []
    try:
        document, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError as error:
        # keep what precedes the damage (a cut, a dropped or doubled line)
        repaired = _close_truncated(text[: error.pos])
        try:
            document = _DECODER.raw_decode(repaired)[0] if repaired else None
        except json.JSONDecodeError:
            document = None
        if not isinstance(document, dict):
            return None, first
        end = error.pos
        line = min(first + error.lineno - 1, len(paste.lines) - 1)
        if not text[error.pos :].strip():  # nothing after the error: the paste ends here
            while line > first and not paste.lines[line].strip():
                line -= 1
            problem = "ends here before the document is complete"
        else:
            problem = f"is damaged here ({error.msg})"
        warnings.append(
            f"{paste.where(line)}: fio JSON {problem}; read what comes before, "
            f"from line {paste.origins[first]}"
        )
    if not isinstance(document, dict):
        return None, first
    last = min(first + text[:end].count("\n"), len(paste.lines) - 1)
    table = Table(TOOL, first, last, warnings=warnings)
    version = document.get("fio version")
    if isinstance(version, str):
        table.facts["fio_version"] = version
    table.facts["format"] = "json"
    _read_jobs(table, document)
    _read_disks(table, document.get("disk_util"))
    note_storage(table)
    return table, last


def _close_truncated(text: str) -> str | None:
    """`text` cut after its last complete object or array, with the open brackets closed."""
    stack: list[str] = []
    in_string = escaped = False
    cut: tuple[int, int] | None = None
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack[-1] != char:
                break
            stack.pop()
            cut = (position + 1, len(stack))
            if not stack:
                break
    if cut is None:
        return None
    position, depth = cut
    return text[:position] + "".join(reversed(stack[:depth]))


def _read_jobs(table: Table, document: dict[str, Any]) -> None:
    jobs = document.get("jobs")
    if not isinstance(jobs, list):
        return
    options = document.get("global options")
    global_options = options if isinstance(options, dict) else {}
    for job_index, job in enumerate(jobs):
        if not isinstance(job, dict):
            continue
        name = str(job.get("jobname", f"job{job_index}"))
        job_options = job.get("job options")
        settings = {**global_options, **(job_options if isinstance(job_options, dict) else {})}
        block_size = _size(settings.get("bs"))
        cpu = {
            key: float(job[source])
            for key, source in (("cpu_usr", "usr_cpu"), ("cpu_sys", "sys_cpu"))
            if _number(job.get(source))
        }
        for op in ("read", "write", "trim"):
            details = _direction(job.get(op))
            if details is None:
                continue
            rw = settings.get("rw") or settings.get("readwrite")
            measurement = job_measurement(
                name, op, block_size, details, str(rw) if rw else None, cpu
            )
            if measurement is not None:
                measurement.extra["job_index"] = job_index
                table.measurements.append(measurement)


def _direction(section: Any) -> dict[str, Any] | None:
    if not isinstance(section, dict):
        return None
    ios = _value(section.get("total_ios", section.get("io_bytes")))
    rate = _value(section.get("bw_bytes"))
    if not ios or rate is None:
        return None
    details: dict[str, Any] = {"bytes_per_second": rate}
    for key, source, scale in (
        ("iops", "iops", 1.0),
        ("bw_stdev", "bw_dev", 1024.0),
        ("bw_mean", "bw_mean", 1024.0),
        ("bw_samples", "bw_samples", 1.0),
        ("iops_stdev", "iops_stddev", 1.0),
    ):
        if _number(section.get(source)):
            value = float(section[source]) * scale
            details[key] = int(value) if key == "bw_samples" else value
    latencies = {}
    for kind in ("slat", "clat", "lat"):
        stats = section.get(f"{kind}_ns")
        if isinstance(stats, dict) and _number(stats.get("N")) and stats["N"] > 0:
            latencies[kind] = {
                name: float(stats[key]) / 1000.0
                for name, key in _LATENCY_KEYS
                if _number(stats.get(key))
            }
            percentiles = stats.get("percentile")
            if isinstance(percentiles, dict):
                details["percentile_kind"] = kind
                details["percentiles_usec"] = {
                    f"{float(p):g}": float(value) / 1000.0
                    for p, value in percentiles.items()
                    if _number(value) and _is_float(p)
                }
    if latencies:
        details["latency_usec"] = latencies
    return details


def _read_disks(table: Table, disks: Any) -> None:
    if not isinstance(disks, list):
        return
    for disk in disks:
        if not isinstance(disk, dict) or not _number(disk.get("util")):
            continue
        table.records.append(
            FioDisk(
                name=str(disk.get("name", "?")),
                util=float(disk["util"]),
                position=sum(isinstance(record, FioDisk) for record in table.records),
                read_ios=int(disk["read_ios"]) if _number(disk.get("read_ios")) else None,
                write_ios=int(disk["write_ios"]) if _number(disk.get("write_ios")) else None,
                aggr_util=float(disk["aggr_util"]) if _number(disk.get("aggr_util")) else None,
            )
        )


def _size(value: Any) -> int | None:
    """fio's 'bs' option ('4k', '4096', '64KiB') in bytes; k is 1024 as fio reads it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    match = _SIZE.match(value.split(",")[0])
    if match is None:
        return None
    size = float(match["number"]) * _SIZE_UNITS[match["unit"].lower()]
    return int(size) if finite_rate(size) and size < 2**62 else None


def _value(value: Any) -> float | None:
    return float(value) if _number(value) else None


def _number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0


def _is_float(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
