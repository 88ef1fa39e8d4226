# SPDX-License-Identifier: MIT
"""Read `openssl speed` output as pasted: every run a Table (pure: Paste in, Tables out).

The line formats are in openssl_lines.py.  Here they are grouped into runs and turned
into results:

* one Measurement per algorithm and block size (source "openssl", block_size in bytes,
  op "encrypt" for ciphers -- "decrypt" with ``-decrypt`` -- and "digest" for hashes and
  MACs, the algorithm normalised: ``aes-128 cbc`` and ``AES-128-CBC`` are ``aes-128-cbc``);
* the numbers come from the table when it is there, else from the ``-mr`` ``+F:`` lines,
  else (a truncated paste) from the ``Doing ...: N x's in T s`` or ``+DT``/``+R`` lines,
  with a warning naming the line that is missing;
* sign/verify rows become `PublicKeyRecord`s, never Measurements, and a row openssl
  could not compute (``infk``: it counted no CPU time) a `NoRateRecord`;
* a row or a header a mailer wrapped goes on with the next line's values or sizes;
* rows pasted without their ``type`` header take the sizes of the last header above
  them in the post, else openssl's defaults for their number of values (with a
  warning), and the command's ``-mb`` or ``-bytes N`` when the command says so;
* the run's facts: OpenSSL version and build lines, the engine (``-engine`` or ``Engine
  "x" set.``), whether time is elapsed or CPU time, ``-evp``, ``-mr``, ``-multi N``,
  ``-async_jobs N`` (each measurement says it too: jobs are not requests in flight
  unless the kernel completes their AIO asynchronously).
  Which of these the text shows decides the findings (findings.py).

A run ends at prose, or where a new one visibly begins (``Engine ... set``, ``You have
chosen ...``, ``Doing`` or ``Forked child`` after results; a build header or a ``type``
header after rows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers import openssl_lines as lines
from pytest_hwcrypto.parsers.paste import Paste, is_blank
from pytest_hwcrypto.parsers.tables import Command, Record, Table, finite_rate
from pytest_hwcrypto.vocabulary import Op, Source

TOOL = "openssl"
SPLITTERS = lines.SPLITTERS
_ORPHAN_K_VALUES = 3


@dataclass
class _Run:
    first: int
    last: int = 0
    facts: dict[str, Any] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    mr_sizes: list[int] = field(default_factory=list)
    rows: list[tuple[int, str, list[float | None]]] = field(default_factory=list)
    mr_rows: list[tuple[int, str, list[float]]] = field(default_factory=list)
    child_rows: list[tuple[int, str, list[float]]] = field(default_factory=list)
    doing: dict[tuple[str, int], tuple[int, float]] = field(default_factory=dict)
    doing_lines: dict[str, int] = field(default_factory=dict)
    mr_pending: tuple[str, int] | None = None
    records: list[Record] = field(default_factory=list)
    pkey_columns: list[str] = field(default_factory=list)
    children: int = 0
    cpu_times: list[float] = field(default_factory=list)

    @property
    def has_results(self) -> bool:
        return bool(self.rows or self.mr_rows or self.records)


def find_tables(paste: Paste) -> list[Table]:
    """Every openssl speed run in the paste that yields a measurement or a record."""
    runs: list[_Run] = []
    run: _Run | None = None
    header_seen = False
    for index, line in enumerate(paste.lines):
        if is_blank(line):
            continue
        kind = _classify(line, run) or _orphan_row(line, header_seen)
        if kind is None:
            run = None
            continue
        if run is None or _starts_new_run(run, kind):
            run = _Run(first=index)
            runs.append(run)
        run.last = index
        _read(run, index, line, kind)
        header_seen = header_seen or kind == "type"
    tables = []
    last_sizes: list[int] = []
    for run in runs:
        tables.append(_table(paste, run, last_sizes))
        last_sizes = run.sizes or last_sizes
    return [table for table in tables if not table.empty]


def _orphan_row(line: str, header_seen: bool) -> str | None:
    """A result row without a run around it (its header cut off, or prose in between).

    Taken when the post showed a `type` header before, or when the row alone is plainly
    openssl's: at least three values in 1000s of bytes ('123.45k').
    """
    row = lines.ROW.match(line)
    if row is None:
        return None
    if header_seen or len(re.findall(r"\d\.\d\dk", row["values"])) >= _ORPHAN_K_VALUES:
        return "row"
    return None


def _classify(line: str, run: _Run | None) -> str | None:
    checks = (
        ("engine", lines.ENGINE_SET),
        ("engine-invalid", lines.ENGINE_INVALID),
        ("elapsed", lines.ELAPSED),
        ("doing", lines.DOING),
        ("doing-pkey", lines.DOING_PKEY),
        ("forked", lines.FORKED),
        ("got", lines.GOT),
        ("mr", lines.MR),
        ("numbers", lines.NUMBERS),
        ("type", lines.TYPE),
        ("version", lines.VERSION),
    )
    for kind, pattern in checks:
        if pattern.match(line):
            return kind
    if run is None:
        return None
    if lines.BUILD.match(line):
        return "build"
    if lines.ROW.match(line) and (run.sizes or run.mr_sizes or run.facts.get("version")):
        return "row"
    if run.rows and lines.MORE_VALUES.match(line):
        return "row-more"  # a row a mailer wrapped: its last values on their own line
    if run.sizes and not run.rows and lines.MORE_SIZES.match(line):
        return "type-more"
    if lines.PKEY_HEADER.match(line):
        return "pkey-header"
    if run.pkey_columns and lines.PKEY_ROW.match(line):
        return "pkey-row"
    return None


def _starts_new_run(run: _Run, kind: str) -> bool:
    if kind in ("engine", "engine-invalid", "elapsed", "doing", "doing-pkey", "forked"):
        return run.has_results
    if kind in ("version", "type"):
        return bool(run.rows)
    return False


def _read(run: _Run, index: int, line: str, kind: str) -> None:
    facts = run.facts
    if kind == "engine":
        match = lines.ENGINE_SET.match(line)
        assert match is not None
        facts["engine"] = match["engine"]
    elif kind == "engine-invalid":
        invalid = lines.ENGINE_INVALID.match(line)
        assert invalid is not None
        facts["engine_invalid"] = invalid["engine"]
    elif kind == "elapsed":
        facts["elapsed"] = True
    elif kind == "doing":
        _read_doing(run, index, line)
    elif kind == "forked":
        run.children += 1
    elif kind == "got":
        got = lines.GOT.match(line)
        assert got is not None
        _read_mr(run, index, got["line"], child=True)
    elif kind == "mr":
        facts["mr"] = True
        _read_mr(run, index, line, child=False)
    elif kind == "version":
        version = lines.VERSION.match(line)
        assert version is not None
        facts["version"] = version["v3"] or version["v1"]
    elif kind == "build":
        build = lines.BUILD.match(line)
        assert build is not None
        facts[build["key"].lower().replace(" ", "_")] = build["value"].strip()
    elif kind == "type":
        header = lines.TYPE.match(line)
        assert header is not None
        sizes = re.findall(r"(\d{1,12})\s*bytes?", header["sizes"])
        run.sizes = [int(size) for size in sizes]
    elif kind == "row":
        row = lines.ROW.match(line)
        assert row is not None
        run.rows.append((index, row["name"], lines.row_rates(row["values"])))
    elif kind == "row-more":
        row_index, name, rates = run.rows[-1]
        run.rows[-1] = (row_index, name, rates + lines.row_rates(line))
    elif kind == "type-more":
        run.sizes += [int(size) for size in re.findall(r"(\d{1,12})\s*bytes?", line)]
    elif kind == "pkey-header":
        run.pkey_columns = line.split()
    elif kind == "pkey-row":
        pkey = lines.PKEY_ROW.match(line)
        assert pkey is not None
        run.records.append(
            lines.pkey_record(pkey["name"], run.pkey_columns, pkey["times"], pkey["rates"])
        )


def _read_doing(run: _Run, index: int, line: str) -> None:
    doing = lines.DOING.match(line)
    assert doing is not None
    run.facts.setdefault("seconds", int(doing["seconds"][:6]))
    if doing["count"] is None or len(doing["count"]) > 18 or len(doing["size"]) > 12:
        return
    key = (doing["name"], int(doing["size"]))
    time = float(doing["time"])
    run.doing[key] = (int(doing["count"]), time)
    run.doing_lines.setdefault(doing["name"], index)
    run.cpu_times.append(time)


def _read_mr(run: _Run, index: int, text: str, child: bool) -> None:
    sizes = lines.MR_SIZES.match(text)
    result = lines.MR_RESULT.match(text)
    pkey = lines.MR_PKEY.match(text)
    start = lines.MR_START.match(text)
    count = lines.MR_COUNT.match(text)
    if sizes:
        run.mr_sizes = [int(size) for size in sizes[1].split(":") if 0 < len(size) <= 12]
    elif result:
        values = lines.numbers(result["values"])
        (run.child_rows if child else run.mr_rows).append((index, result["name"], values))
    elif pkey and not child:
        _read_mr_pkey(run, int(pkey["kind"][:3]), pkey["bits"], pkey["values"])
    elif start and len(start["size"]) <= 12:
        run.mr_pending = (start["name"], int(start["size"]))
    elif count and run.mr_pending is not None and run.mr_pending[0] == count["name"]:
        if len(count["count"]) <= 18:
            run.doing[run.mr_pending] = (int(count["count"]), float(count["time"]))
            run.doing_lines.setdefault(count["name"], index)
        run.mr_pending = None


def _read_mr_pkey(run: _Run, kind: int, bits: str, values: str) -> None:
    algorithm, columns = lines.MR_PKEY_KINDS.get(kind, (f"pkey{kind}", ("a/s", "b/s")))
    record = lines.PublicKeyRecord(algorithm, int(bits) if len(bits) <= 6 else None)
    for column, value in zip(columns, lines.numbers(values)):
        if not finite_rate(value):
            continue
        if column.endswith("/s"):
            record.per_second[column] = value
        else:
            record.seconds[column] = value
    run.records.append(record)


def _table(paste: Paste, run: _Run, earlier_sizes: list[int]) -> Table:
    table = Table(TOOL, run.first, run.last, records=run.records, facts=run.facts)
    if run.children:
        run.facts["multi"] = run.children
    if run.cpu_times:
        # what the 'Doing' lines counted: below the requested seconds means CPU time
        run.facts["timed_seconds"] = [min(run.cpu_times), max(run.cpu_times)]
    invalid = run.facts.get("engine_invalid")
    if invalid:
        table.warnings.append(
            f"{paste.where(run.first)}: openssl could not load engine {invalid} "
            "('Invalid engine'); this run measured openssl's own code"
        )
    sizes = run.sizes or run.mr_sizes
    if run.rows:
        if not sizes:
            sizes = _assumed_sizes(paste, table, run, earlier_sizes)
        for index, name, rates in run.rows:
            _row_measurements(paste, table, index, name, sizes, rates)
    elif run.mr_rows:
        for index, name, values in run.mr_rows:
            _row_measurements(paste, table, index, name, run.mr_sizes, list(values))
    elif run.child_rows:
        _summed_children(paste, table, run)
    elif run.doing:
        _from_counts(paste, table, run)
    return table


def _assumed_sizes(paste: Paste, table: Table, run: _Run, earlier: list[int]) -> list[int]:
    """Sizes for rows without a header: the post's last header, else openssl's defaults."""
    index, _, rates = run.rows[0]
    if earlier and len(earlier) == len(rates):
        return list(earlier)
    version = str(run.facts.get("version", ""))
    if len(rates) == len(lines.DEFAULT_SIZES_1_0) or version.startswith(("0.", "1.0")):
        sizes = list(lines.DEFAULT_SIZES_1_0)
    else:
        sizes = list(lines.DEFAULT_SIZES)
    # the command may still say otherwise (-mb, -bytes): apply_command looks at this
    run.facts["assumed_sizes"] = sizes
    table.warnings.append(
        f"{paste.where(index)}: no 'type' header above this row; "
        f"read with openssl's default sizes {', '.join(map(str, sizes))}"
    )
    return sizes


def _row_measurements(
    paste: Paste,
    table: Table,
    index: int,
    name: str,
    sizes: list[int],
    rates: list[float | None],
) -> None:
    if len(rates) != len(sizes):
        table.warnings.append(
            f"{paste.where(index)}: {name} has {len(rates)} values for {len(sizes)} block "
            f"sizes; read the first {min(len(rates), len(sizes))}"
        )
    no_rate = []
    for size, rate in zip(sizes, rates):
        if rate is not None and finite_rate(rate):
            table.measurements.append(_measurement(name, size, rate, table.facts))
        else:
            no_rate.append(size)
    if no_rate:
        table.records.append(lines.NoRateRecord(lines.normalise_name(name), no_rate))


def _summed_children(paste: Paste, table: Table, run: _Run) -> None:
    """-multi output cut before its summed row: add up the children's +F lines."""
    totals: dict[str, list[float]] = {}
    for _, name, values in run.child_rows:
        total = totals.setdefault(name, [0.0] * len(values))
        for position, value in enumerate(values[: len(total)]):
            total[position] += value
    table.warnings.append(
        f"{paste.where(run.child_rows[-1][0])}: no summed row after the children's results; "
        "added up their 'Got: +F' lines"
    )
    for name, values in totals.items():
        _row_measurements(paste, table, run.child_rows[-1][0], name, run.mr_sizes, list(values))


def _from_counts(paste: Paste, table: Table, run: _Run) -> None:
    """No table at all (cut short): bytes/s from 'N x's in T s' counts."""
    for name, index in run.doing_lines.items():
        table.warnings.append(
            f"{paste.where(index)}: no result table for {name}; rates computed from the "
            "operation counts and times"
        )
    for (name, size), (count, time) in run.doing.items():
        if time > 0:
            rate = count * size / time
            if finite_rate(rate):
                table.measurements.append(_measurement(name, size, rate, table.facts))


def _measurement(name: str, size: int, rate: float, facts: dict[str, Any]) -> Measurement:
    algorithm = lines.normalise_name(name)
    digest = lines.is_digest(algorithm)
    extra: dict[str, Any] = {"name_printed": name}
    engine = facts.get("engine")
    if engine:
        extra["engine"] = engine
    return Measurement(
        source=str(Source.OPENSSL),
        algorithm=algorithm,
        driver=f"engine:{engine}" if engine else None,
        key_bits=None if digest else lines.key_bits(algorithm),
        block_size=size,
        op=str(Op.DIGEST if digest else Op.ENCRYPT),
        bytes_per_second=rate,
        extra=extra,
    )


def apply_command(table: Table, command: Command | None) -> None:
    """Fold the command line's flags into the run's facts (the text alone may not say).

    Called once labels are known; then the measurements' op and engine are settled too.
    """
    facts = table.facts
    if command is not None and command.program == "openssl":
        flags = command.flags
        if "engine" in flags and flags["engine"] != facts.get("engine_invalid"):
            facts.setdefault("engine", flags["engine"])
        facts["elapsed"] = bool(flags.get("elapsed")) or bool(facts.get("elapsed"))
        facts["evp"] = "evp" in flags
        for name in (
            "multi",
            "async_jobs",
            "bytes",
            "seconds",
            "mr",
            "decrypt",
            "aead",
            "misalign",
        ):
            value = flags.get(name)
            if isinstance(value, str) and value.isdigit() and len(value) <= 9:
                facts[name] = int(value)
            elif value is not None:
                facts[name] = value
    else:
        facts.setdefault("evp", _evp_from_names(table))
        if "elapsed" not in facts and facts.get("seconds") and not facts.get("mr"):
            # 'Doing' lines print either way, the elapsed-time notice only with -elapsed
            facts["elapsed"] = False
    if command is not None and command.program == "openssl":
        _sizes_from_command(table, command)
        _key_bits_from_command(table, command)
    if facts.get("decrypt"):
        for measurement in table.measurements:
            if measurement.op == Op.ENCRYPT:
                measurement.op = str(Op.DECRYPT)
    engine = facts.get("engine")
    if isinstance(engine, str):
        for measurement in table.measurements:
            measurement.driver = f"engine:{engine}"
            measurement.extra["engine"] = engine
    jobs = facts.get("async_jobs")
    if isinstance(jobs, int):
        # N ASYNC jobs of one process: requests in flight only if the engine and the
        # kernel complete them asynchronously, so not a `concurrency` (see measure/
        # openssl_engine.py); said beside each figure.
        for measurement in table.measurements:
            measurement.extra["async_jobs"] = jobs


def _sizes_from_command(table: Table, command: Command) -> None:
    """Rows read with assumed sizes, when the command names others (-mb, -bytes N).

    With -mb openssl measures speed.c's multi-block lengths; -multi then prints the
    summed row without a header (and, in 4.x, a spurious extra column, dropped here).
    """
    assumed = table.facts.pop("assumed_sizes", None)
    if not isinstance(assumed, list):
        return
    actual: list[int] | None = None
    if command.flags.get("mb"):
        actual = list(lines.MB_SIZES)
    elif isinstance(command.flags.get("bytes"), str) and str(command.flags["bytes"]).isdigit():
        actual = [int(str(command.flags["bytes"]))]
    if actual is None:
        return
    moved = dict(zip(assumed, actual))
    defaults = f"openssl's default sizes {', '.join(map(str, assumed))}"
    flag = "-mb" if command.flags.get("mb") else "-bytes"
    table.warnings[:] = [
        warning.replace(defaults, f"the sizes {flag} measures, {', '.join(map(str, actual))}")
        for warning in table.warnings
    ]
    table.measurements = [m for m in table.measurements if m.block_size in moved]
    for measurement in table.measurements:
        measurement.block_size = moved[measurement.block_size or 0]


def _key_bits_from_command(table: Table, command: Command) -> None:
    """A cipher row relabelled by the poster ('afalg-v1.1.0') takes the command's key size.

    Only when the command names a single cipher (``-evp AES-256-CBC``), so every row of
    the run is that cipher whatever its label says.
    """
    named = [command.flags.get("evp"), *command.arguments]
    ciphers = {
        lines.normalise_name(name)
        for name in named
        if isinstance(name, str) and lines.key_bits(lines.normalise_name(name)) is not None
    }
    if len(ciphers) != 1 or len([name for name in named if isinstance(name, str)]) != 1:
        return
    bits = lines.key_bits(ciphers.pop())
    for measurement in table.measurements:
        if measurement.key_bits is None and measurement.op != Op.DIGEST:
            measurement.key_bits = bits
            measurement.extra["key_bits_from"] = "command"


def _evp_from_names(table: Table) -> bool | None:
    """How the cipher names are spelt says whether -evp was given, when no command does.

    3.x prints EVP cipher names upper-case and its legacy ones lower-case; 1.1 spells its
    legacy ones with a blank ('aes-128 cbc').  Digests say nothing.
    """
    printed = [
        str(m.extra.get("name_printed", "")) for m in table.measurements if m.op != Op.DIGEST
    ]
    if any(name != name.lower() for name in printed):
        return True
    if any(" " in name for name in printed):
        return False
    version = table.facts.get("version")
    if printed and isinstance(version, str) and version.startswith("3"):
        return False
    return None
