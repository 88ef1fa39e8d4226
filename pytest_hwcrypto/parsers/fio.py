# SPDX-License-Identifier: MIT
"""Read fio's human ("normal") output as pasted: one Table per fio run (pure).

fio 3.x prints, per run (stat.c)::

    randrw: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, ..., iodepth=4
    fio-3.33
    randrw: (groupid=0, jobs=1): err= 0: pid=823: Tue Dec  1 09:17:03 2026
      read: IOPS=98, BW=392KiB/s (401kB/s)(3144KiB/8019msec)
        clat (usec): min=15321, max=24717, avg=20036.03, stdev=505.60
        clat percentiles (usec):
         |  1.00th=[19006],  5.00th=[19792], ...
       bw (  KiB/s): min=  304, max=  463, per=99.98%, avg=392.80, stdev=37.09, samples=15
      write: IOPS=102, BW=408KiB/s ...
      cpu          : usr=0.00%, sys=0.00%, ctx=415, majf=0, minf=34
    Run status group 0 (all jobs):
    Disk stats (read/write):
        dm-1: ios=775/805, ..., util=98.72%, aggrios=786/818, ..., aggrutil=98.65%
      loop1: ios=786/818, merge=0/0, ticks=16/24, in_queue=41, util=0.00%

fio 2.x (and 1.x) print the same blocks with other words: ``bs=4K-4K/4K-4K/4K-4K`` in
the job line, ``read : io=1024.0MB, bw=34952KB/s, iops=8738, runt= 30001msec`` per job,
``bw (KB  /s): min=..., avg=..., stdev=...`` and the group summary ``READ: io=21013MB,
aggrb=1126.5MB/s, minb=..., maxb=..., mint=..., maxt=...``.  Their ``KB``, ``MB``, ``GB``
are powers of 1024 (fio's default kb_base; 3.0 renamed them KiB, MiB, GiB and added the
decimal kB, MB, GB in brackets), so a rate read from a line that names no IEC unit is
taken in powers of 1024.

Each job and direction becomes a Measurement (source "fio", algorithm the job name, op
"read"/"write"/"trim", block_size from ``bs=``, bytes/s from ``BW=``) whose `extra` holds
the IOPS, the bandwidth's stdev over fio's samples (the noise findings.py needs), the
latencies and percentiles in microseconds and the job's CPU usr/sys.  Every disk of
"Disk stats" becomes a `FioDisk` record; the first one listed is the device fio wrote to
(the dm-crypt volume), the ones after it are what lies under it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.paste import Paste, is_blank
from pytest_hwcrypto.parsers.tables import Command, Record, Table, finite_rate
from pytest_hwcrypto.vocabulary import Source

TOOL = "fio"
_N = r"\d+(?:\.\d+)?"
_RATE_UNITS = {
    "B/s": 1.0,
    "KiB/s": 2.0**10,
    "MiB/s": 2.0**20,
    "GiB/s": 2.0**30,
    "TiB/s": 2.0**40,
    "kB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
}
# fio 2.x: K, M, G are 1024-based whatever the spelling
_RATE_UNITS_2X = {"B/s": 1.0, "KB/s": 2.0**10, "MB/s": 2.0**20, "GB/s": 2.0**30, "TB/s": 2.0**40}
_SIZE_UNITS = {"": 1, "K": 2**10, "Ki": 2**10, "M": 2**20, "Mi": 2**20, "G": 2**30, "Gi": 2**30}
_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
_TIME_UNITS = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}

# (lines may be indented as a whole: a Markdown or reStructuredText code block, a tab)
_SETUP = re.compile(r"^\s*(?P<job>\S+): \(g=\d+\): rw=(?P<rw>\w+), (?P<rest>.*)$")
_BS = re.compile(
    r"\((?P<d>[RWT])\)\s*(?P<lo>[\d.]+)(?P<lu>[KMG]?i?)B-(?P<hi>[\d.]+)(?P<hu>[KMG]?i?)B"
)
# fio 2.x: bs=4K-4K/4K-4K/4K-4K (read/write/trim ranges), or bs=4K-4K/4K-4K
_BS_2X = re.compile(
    r"\bbs=(?P<ranges>[\d.]+[KMG]?i?B?-[\d.]+[KMG]?i?B?(?:/[\d.]+[KMG]?i?B?-[\d.]+[KMG]?i?B?)*)"
)
_RANGE_2X = re.compile(r"(?P<lo>[\d.]+)(?P<lu>[KMG]?i?)B?-(?P<hi>[\d.]+)(?P<hu>[KMG]?i?)B?")
_RESULT = re.compile(r"^\s*(?P<job>\S+): \(groupid=\d+, jobs=\d+\): err=\s*(?P<err>\d+)")
_UNIT = r"[KMGT]i?B/s|[kMGT]B/s|B/s"
# 'mixed' with --unified_rw_reporting
_DIRECTION = re.compile(r"^\s*(?P<op>read|write|trim|mixed)\s*:\s*(?=.*\b(?:BW|bw)=)")
_BW = re.compile(rf"\b(?:BW|bw)=\s*(?P<bw>{_N})\s*(?P<unit>{_UNIT})")
_IOPS_FIELD = re.compile(rf"\b(?:IOPS|iops)=\s*(?P<iops>{_N})(?P<ik>[kKM]?)")
# the group summary: 'READ: bw=392KiB/s (401kB/s), ...' (3.x), 'READ: io=..., aggrb=...' (2.x)
_GROUP = re.compile(
    rf"^\s*(?P<op>READ|WRITE|TRIM|MIXED)\s*:\s*(?:io=\S+\s+)?(?:aggrb|bw)=\s*(?P<bw>{_N})\s*"
    rf"(?P<unit>{_UNIT})"
)
_LATENCY = re.compile(
    rf"^\s*(?P<kind>slat|clat|lat)\s*\((?P<unit>nsec|usec|msec|sec)\):\s*"
    rf"min=\s*(?P<min>{_N})(?P<mink>[kKMG]?)\s*,\s*max=\s*(?P<max>{_N})(?P<maxk>[kKMG]?)\s*,\s*"
    rf"avg=\s*(?P<avg>{_N})\s*,\s*stdev=\s*(?P<stdev>{_N})"
)
_PERCENTILES = re.compile(
    r"^\s*(?P<kind>slat|clat|lat)\s+percentiles\s*\((?P<unit>nsec|usec|msec)\)"
)
_PERCENTILE = re.compile(rf"(?P<p>{_N})th=\[\s*(?P<v>{_N})(?P<k>[kKMG]?)\]")
_BANDWIDTH = re.compile(
    rf"^\s*bw\s*\(\s*(?P<unit>[KMGT]i?B\s*/s|[kMGT]B\s*/s|B\s*/s)\s*\):\s*min=\s*{_N},"
    rf"\s*max=\s*{_N},\s*per=\s*{_N}%,\s*avg=\s*(?P<avg>{_N}),\s*stdev=\s*(?P<stdev>{_N})"
    r"(?:,\s*samples=\s*(?P<n>\d+))?"
)
_IOPS = re.compile(
    rf"^\s*iops\s*:\s*min=\s*{_N},\s*max=\s*{_N},\s*avg=\s*(?P<avg>{_N}),"
    rf"\s*stdev=\s*(?P<stdev>{_N}),\s*samples=\s*(?P<n>\d+)"
)
_CPU = re.compile(rf"^\s*cpu\s*:\s*usr=(?P<usr>{_N})%,\s*sys=(?P<sys>{_N})%")
_DISK = re.compile(
    rf"^\s*(?P<name>[\w.:/-]+): ios=(?P<r>\d+)/(?P<w>\d+),.*?\butil=(?P<util>{_N})%"
    rf"(?:.*?aggrutil=(?P<aggr>{_N})%)?"
)
_ERROR = re.compile(r"^\s*fio: (?P<message>.*)$")
_ALL_JOBS = "all jobs"
_OPTION_SIZE = re.compile(r"^(?P<number>\d+(?:\.\d+)?)(?P<unit>[kKmMgG]?i?)[bB]?$")
_STATUS = re.compile(r"^\s*Run status group \d+")
_OTHER = re.compile(
    r"^\s*(?:fio-\d|\d+\.\d+\.\d+\s*$|Starting \d+ (?:process|thread)|Jobs: \d"
    r"|\S+: Laying out IO file|note: |"
    r"Run status group \d|Disk stats \(read/write\)|"
    r"\s*(?:lat \((?:nsec|usec|msec)\)|IO depths|submit|complete|issued(?: rwts)?|latency"
    r"|fsync/fdatasync/sync_file_range|sync (?:percentiles )?\((?:nsec|usec|msec)\))"
    r"\s*:|\s*\|\s*\d|\s*\.\.\.\s*$)"
)


@dataclass
class FioDisk(Record):
    """A disk of fio's "Disk stats": how busy it was (util, %) and how many I/Os it did."""

    KIND = "fio-disk"
    name: str
    util: float
    position: int
    read_ios: int | None = None
    write_ios: int | None = None
    aggr_util: float | None = None

    def describe(self) -> str:
        role = "the volume fio wrote to" if self.position == 0 else "under the volume"
        return f"disk {self.name}: util {self.util:.2f}% ({role})"


@dataclass
class _Job:
    name: str
    directions: dict[str, dict[str, Any]] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    current: dict[str, Any] | None = None
    percentile_unit: float = 1.0


@dataclass
class _Run:
    first: int
    last: int = 0
    setups: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: list[_Job] = field(default_factory=list)
    groups: dict[str, float] = field(default_factory=dict)
    group_ops: set[str] = field(default_factory=set)  # since the last 'Run status group'
    disks: list[FioDisk] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def find_tables(paste: Paste) -> list[Table]:
    """Every fio run (human output) in the paste that reports a job or a disk."""
    runs: list[_Run] = []
    run: _Run | None = None
    for index, line in enumerate(paste.lines):
        if is_blank(line):
            continue
        kind = _classify(line, run)
        if kind is None:
            run = None
            continue
        if run is None or _starts_new_run(run, kind, line):
            run = _Run(first=index)
            runs.append(run)
        run.last = index
        _read(paste, run, index, line, kind)
    setups: dict[str, dict[str, Any]] = {}
    for run in runs:
        # a job line cut off from its results by a line fio's parser does not know
        run.setups = {**setups, **run.setups} if not run.setups else run.setups
        setups = run.setups or setups
    tables = [_table(run) for run in runs]
    return [table for table in tables if not table.empty]


def _starts_new_run(run: _Run, kind: str, line: str) -> bool:
    """A job line or fio's version after results, or a group summary line repeating an op
    of the group above it (summaries of several runs listed one after another)."""
    if kind in ("setup", "version"):
        return bool(run.jobs or run.disks or run.groups)
    if kind == "group":
        group = _GROUP.match(line)
        return group is not None and group["op"].lower() in run.group_ops
    return False


def _classify(line: str, run: _Run | None) -> str | None:
    if _SETUP.match(line):
        return "setup"
    if re.match(r"\s*fio-\d+\.\d+", line):
        return "version"
    if _RESULT.match(line):
        return "result"
    if _GROUP.match(line):
        return "group"  # a group summary alone (the rest cut, or `| grep READ`)
    if run is None and _DIRECTION.match(line) and _BW.search(line):
        return "direction"  # a job's lines pasted without the job's header
    if _STATUS.match(line):
        return "status"
    if run is None:
        return "error" if _ERROR.match(line) and "err=" in line else None
    for kind, pattern in (
        ("direction", _DIRECTION),
        ("group", _GROUP),
        ("latency", _LATENCY),
        ("percentiles", _PERCENTILES),
        ("bandwidth", _BANDWIDTH),
        ("iops", _IOPS),
        ("cpu", _CPU),
        ("disk", _DISK),
        ("error", _ERROR),
        ("other", _OTHER),
    ):
        if pattern.match(line):
            return kind
    return None


def _read(paste: Paste, run: _Run, index: int, line: str, kind: str) -> None:
    job = run.jobs[-1] if run.jobs else None
    if kind == "setup":
        setup = _SETUP.match(line)
        assert setup is not None
        run.setups[setup["job"]] = {"rw": setup["rw"], "bs": _block_sizes(setup["rest"])}
    elif kind == "version":
        run.facts["fio_version"] = line.strip()
    elif kind == "result":
        result = _RESULT.match(line)
        assert result is not None
        run.jobs.append(_Job(result["job"]))
        if result["err"] != "0":
            run.warnings.append(f"{paste.where(index)}: job {result['job']} ended with an error")
    elif kind == "error":
        run.warnings.append(f"{paste.where(index)}: fio says: {line.strip()[:160]}")
    elif kind == "disk":
        _read_disk(run, line)
    elif kind == "direction" and job is None:
        run.jobs.append(_Job(_ALL_JOBS))
        _read_job_line(run.jobs[-1], line, kind)
    elif kind == "status":
        run.group_ops = set()
    elif kind == "group":
        group = _GROUP.match(line)
        assert group is not None
        op = group["op"].lower()
        run.group_ops.add(op)
        rate = _rate(group["bw"], group["unit"], line)
        if rate is not None:
            run.groups.setdefault(op, rate)
    elif job is not None:
        _read_job_line(job, line, kind)


def _read_job_line(job: _Job, line: str, kind: str) -> None:
    if kind == "direction":
        direction = _DIRECTION.match(line)
        bandwidth = _BW.search(line)
        if direction is None or bandwidth is None:  # 'BW=' cut off before its value
            job.current = None
            return
        rate = _rate(bandwidth["bw"], bandwidth["unit"], line)
        job.current = {"bytes_per_second": -1.0 if rate is None else rate}
        iops = _IOPS_FIELD.search(line)
        if iops is not None:
            job.current["iops"] = _scaled(iops["iops"], iops["ik"])
        job.directions[direction["op"]] = job.current
        return
    current = job.current
    if kind == "cpu":
        cpu = _CPU.match(line)
        assert cpu is not None
        job.cpu = {"cpu_usr": float(cpu["usr"]), "cpu_sys": float(cpu["sys"])}
    elif current is None:
        return
    elif kind == "latency":
        lat = _LATENCY.match(line)
        assert lat is not None
        scale = _TIME_UNITS[lat["unit"]]
        current.setdefault("latency_usec", {})[lat["kind"]] = {
            "min": _scaled(lat["min"], lat["mink"]) * scale,
            "max": _scaled(lat["max"], lat["maxk"]) * scale,
            "avg": float(lat["avg"]) * scale,
            "stdev": float(lat["stdev"]) * scale,
        }
    elif kind == "percentiles":
        header = _PERCENTILES.match(line)
        assert header is not None
        job.percentile_unit = _TIME_UNITS[header["unit"]]
        current["percentile_kind"] = header["kind"]
    elif kind == "other" and "th=[" in line:
        table = current.setdefault("percentiles_usec", {})
        for match in _PERCENTILE.finditer(line):
            value = _scaled(match["v"], match["k"]) * job.percentile_unit
            table[f"{float(match['p']):g}"] = value
    elif kind == "bandwidth":
        bandwidth = _BANDWIDTH.match(line)
        assert bandwidth is not None
        unit = _unit(bandwidth["unit"].replace(" ", ""), line)
        current["bw_stdev"] = float(bandwidth["stdev"]) * unit
        current["bw_mean"] = float(bandwidth["avg"]) * unit
        if bandwidth["n"]:
            current["bw_samples"] = int(bandwidth["n"][:9])
    elif kind == "iops":
        iops_line = _IOPS.match(line)
        assert iops_line is not None
        current["iops_stdev"] = float(iops_line["stdev"])


def _read_disk(run: _Run, line: str) -> None:
    disk = _DISK.match(line)
    assert disk is not None
    run.disks.append(
        FioDisk(
            name=disk["name"],
            util=float(disk["util"]),
            position=len(run.disks),
            read_ios=int(disk["r"][:18]),
            write_ios=int(disk["w"][:18]),
            aggr_util=float(disk["aggr"]) if disk["aggr"] else None,
        )
    )


def _rate(number: str, unit: str, line: str) -> float | None:
    rate = float(number) * _unit(unit, line)
    return rate if finite_rate(rate) else None


def _unit(unit: str, line: str) -> float:
    """Bytes/s of one `unit`: 1024-based on a line in fio 2.x's words (no IEC unit on it)."""
    if unit in _RATE_UNITS_2X and ("iB" not in line or unit not in _RATE_UNITS):
        return _RATE_UNITS_2X[unit]
    return _RATE_UNITS[unit]


def _block_sizes(text: str) -> dict[str, int | None]:
    """'(R) 4096B-4096B, (W) 4096B-4096B' (3.x) or 'bs=4K-4K/4K-4K/4K-4K' (2.x) per op."""
    names = {"R": "read", "W": "write", "T": "trim"}
    sizes: dict[str, int | None] = {}
    for match in _BS.finditer(text):
        low = _bytes(match["lo"], match["lu"])
        high = _bytes(match["hi"], match["hu"])
        sizes[names[match["d"]]] = low if low == high else None
    old = _BS_2X.search(text) if not sizes else None
    if old is not None:
        for op, match in zip(("read", "write", "trim"), _RANGE_2X.finditer(old["ranges"])):
            low = _bytes(match["lo"], match["lu"])
            high = _bytes(match["hi"], match["hu"])
            sizes[op] = low if low == high else None
    return _with_mixed(sizes)


def _with_mixed(sizes: dict[str, int | None]) -> dict[str, int | None]:
    """'mixed' (--unified_rw_reporting) has the block size every direction shares."""
    distinct = set(sizes.values())
    if len(distinct) == 1:
        sizes["mixed"] = distinct.pop()
    return sizes


def _bytes(number: str, unit: str) -> int | None:
    value = float(number) * _SIZE_UNITS.get(unit, 1)
    return int(value) if finite_rate(value) and value < 2**62 else None


def _scaled(number: str, suffix: str) -> float:
    return float(number) * _SUFFIX.get(suffix, 1.0)


def busiest_under_volume(table: Table) -> FioDisk | None:
    """The busiest disk under the volume fio wrote to (the only disk when fio lists one)."""
    disks = [record for record in table.records if isinstance(record, FioDisk)]
    under = disks[1:] if len(disks) > 1 else disks
    return max(under, key=lambda disk: disk.util, default=None)


def note_storage(table: Table) -> None:
    """Each measurement carries how busy the storage under it was (`storage_util`, %).

    So the evidence travels with the number: `hwcrypto compare` on two files parsed
    apart can still tell a run the disk decided (verdict/storage_bound.py).
    """
    disk = busiest_under_volume(table)
    if disk is None:
        return
    for measurement in table.measurements:
        measurement.extra["storage_util"] = disk.util
        measurement.extra["storage_device"] = disk.name


def _table(run: _Run) -> Table:
    table = Table(TOOL, run.first, run.last, warnings=run.warnings, facts=run.facts)
    table.records.extend(run.disks)
    for job_index, job in enumerate(run.jobs):
        setup = run.setups.get(job.name, {})
        for op, details in job.directions.items():
            block_sizes: dict[str, int | None] = setup.get("bs", {})
            measurement = job_measurement(
                job.name, op, block_sizes.get(op), details, setup.get("rw"), job.cpu
            )
            if measurement is not None:
                measurement.extra["job_index"] = job_index
                table.measurements.append(measurement)
    _group_measurements(table, run)
    note_storage(table)
    return table


def apply_command(table: Table, command: Command | None) -> None:
    """What only the command line says: the block size (``--bs``), the job (``--name``).

    Used for measurements read from a group summary or a job without its job line.
    """
    if command is None or command.program != "fio":
        return
    sizes = _command_block_sizes(command.flags.get("bs") or command.flags.get("blocksize"))
    name = command.flags.get("name")
    for measurement in table.measurements:
        if measurement.block_size is None and measurement.op in sizes:
            measurement.block_size = sizes[measurement.op]
            measurement.extra["block_size_from"] = "command"
        if measurement.algorithm == _ALL_JOBS and isinstance(name, str) and name:
            measurement.algorithm = name
            measurement.extra["job"] = name


def _command_block_sizes(value: str | bool | None) -> dict[str, int]:
    """'--bs=4k' (every op) or '--bs=4k,64k' (read, write[, trim]); k is 1024 to fio."""
    if not isinstance(value, str):
        return {}
    parts = [_option_size(part) for part in value.split(",")]
    if len(parts) == 1:
        parts = parts * 3
    named = dict(zip(("read", "write", "trim"), parts))
    return {op: size for op, size in _with_mixed(named).items() if size is not None}


def _option_size(text: str) -> int | None:
    match = _OPTION_SIZE.match(text.strip())
    if match is None:
        return None
    return _bytes(match["number"], match["unit"].upper())


def _group_measurements(table: Table, run: _Run) -> None:
    """The group summary's rate for each direction no job line reports (cut from the post)."""
    reported = {measurement.op for measurement in table.measurements}
    names = list(dict.fromkeys([job.name for job in run.jobs] + list(run.setups)))
    name = names[0] if len(names) == 1 else _ALL_JOBS
    setup = run.setups.get(name, {})
    for op, rate in run.groups.items():
        if op in reported:
            continue
        block_sizes: dict[str, int | None] = setup.get("bs", {})
        measurement = job_measurement(
            name, op, block_sizes.get(op), {"bytes_per_second": rate}, setup.get("rw"), {}
        )
        if measurement is not None:
            measurement.extra["group"] = True
            table.measurements.append(measurement)


def job_measurement(
    job: str,
    op: str,
    block_size: int | None,
    details: dict[str, Any],
    rw: str | None,
    cpu: dict[str, float],
) -> Measurement | None:
    """The Measurement of one job and direction; None for a rate that is not a number."""
    rate = float(details.get("bytes_per_second", -1.0))
    if not finite_rate(rate):
        return None
    extra: dict[str, Any] = {"job": job}
    if rw:
        extra["rw"] = rw
    for key, value in details.items():
        if key != "bytes_per_second" and _json_safe(value):
            extra[key] = value
    extra.update({key: value for key, value in cpu.items() if finite_rate(value)})
    return Measurement(
        source=str(Source.FIO),
        algorithm=job,
        driver=None,
        key_bits=None,
        block_size=block_size,
        op=op,
        bytes_per_second=rate,
        extra=extra,
    )


def _json_safe(value: Any) -> bool:
    """No inf/NaN reaches the JSON (digits alone can overflow a float)."""
    if isinstance(value, float):
        return finite_rate(value)
    if isinstance(value, dict):
        return all(_json_safe(item) for item in value.values())
    return True
