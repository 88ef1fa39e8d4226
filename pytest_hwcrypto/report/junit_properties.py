# SPDX-License-Identifier: MIT
"""JUnit properties of a test case and of the test suite (pure: names and values only).

A test case that measured (or judged) throughput carries, for each measurement it is
about, the source, driver, MiB/s and HW/SW ratio, named by the measured cell
(`throughput_table.measurement_id`), so a CI dashboard can chart one cell across runs:

    hwcrypto.source = afalg
    hwcrypto.driver = cbc(aes-generic)
    hwcrypto.afalg.cbc(aes).128.encrypt.cbc-aes-aesni.4096.mib_s = 11.5
    hwcrypto.afalg.cbc(aes).128.encrypt.cbc-aes-aesni.4096.ratio = 1.17

The suite carries the kernel, board and profile, and every finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pytest_hwcrypto.model.results import Finding, Measurement, Results
from pytest_hwcrypto.report.throughput_table import Table, measurement_id, throughput_tables
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.vocabulary import Source, Suite

Property = tuple[str, str]
PREFIX = "hwcrypto"

# The sources each measuring suite records; a test of the suite is about these.
SUITE_SOURCES: dict[str, tuple[str, ...]] = {
    Suite.THROUGHPUT: (Source.AFALG, Source.TCRYPT),
    Suite.CRYPTSETUP: (Source.CRYPTSETUP,),
    Suite.OPENSSL: (Source.OPENSSL,),
    Suite.CRYPTODEV: (Source.CRYPTODEV,),
    Suite.DMCRYPT: (Source.DMCRYPT,),
}


def measurements_of_test(
    recorded: Sequence[Measurement],
    recorded_before: int,
    suites: Iterable[str],
    algorithm: str | None,
) -> list[Measurement]:
    """The measurements a test is about: with an `algorithm` parameter, every one of its
    suite's sources with that algorithm; else the ones recorded while it ran (its setup
    may have run a whole suite's measuring)."""
    if algorithm is not None:
        sources = {source for suite in suites for source in SUITE_SOURCES.get(suite, ())}
        return [m for m in recorded if m.algorithm == algorithm and m.source in sources]
    return list(recorded[recorded_before:])


def case_properties(about: Sequence[Measurement], context: Results) -> list[Property]:
    """Properties of a test case about `about`; `context` holds every measurement of the
    run so far (the software reference of a ratio may come from another test)."""
    if not about:
        return []
    tables = throughput_tables(context)
    properties: list[Property] = []
    properties += _distinct("source", (m.source for m in about))
    properties += _distinct("driver", (m.driver or "?" for m in about))
    for measurement in about:
        table = _table_of(measurement, tables)
        if table is None:
            continue
        driver = measurement.driver or "?"
        cell = f"{PREFIX}.{measurement_id(table, driver, measurement.block_size)}"
        properties.append((f"{cell}.mib_s", format_mib_s(measurement.bytes_per_second)))
        row = next((row for row in table.rows if row.driver == driver), None)
        size = measurement.block_size
        if row is not None and size is not None and size in row.ratios:
            properties.append((f"{cell}.ratio", f"{row.ratios[size]:.2f}"))
    return [(str(name), str(value)) for name, value in properties]


def suite_properties(run: dict[str, Any]) -> list[Property]:
    """`{"kernel": ..., "board": ..., "profile": ...}` as testsuite properties."""
    return [(f"{PREFIX}.run.{key}", str(value)) for key, value in run.items() if value is not None]


def finding_properties(findings: Sequence[Finding]) -> list[Property]:
    """`hwcrypto.finding.<kind>.<algorithm>` = detail; a second one of the same name gets
    `.2`, so each finding is one property."""
    seen: dict[str, int] = {}
    properties = []
    for finding in findings:
        name = f"{PREFIX}.finding.{finding.kind}.{finding.algorithm or 'kernel'}"
        seen[name] = seen.get(name, 0) + 1
        properties.append((name if seen[name] == 1 else f"{name}.{seen[name]}", finding.detail))
    return properties


def _distinct(name: str, values: Iterable[str]) -> list[Property]:
    # plain str: a test report carries these to the xdist controller, whose channel
    # refuses the vocabulary's enum members
    return [(f"{PREFIX}.{name}", str(value)) for value in dict.fromkeys(values)]


def _table_of(measurement: Measurement, tables: Sequence[Table]) -> Table | None:
    return next(
        (
            table
            for table in tables
            if (table.source, table.algorithm, table.key_bits, table.op, table.concurrency)
            == (
                measurement.source,
                measurement.algorithm,
                measurement.key_bits,
                measurement.op,
                measurement.level,
            )
        ),
        None,
    )
