# SPDX-License-Identifier: MIT
"""fio parsers (human and JSON) and the storage-bound finding, on real UML runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.parsers.fio import FioDisk
from pytest_hwcrypto.parsers.parse import ParsedDocument, parse_text

DATA = Path(__file__).parent.parent / "data" / "paste"
KIB = 1024.0


def parse(name: str, folder: str = "raw") -> ParsedDocument:
    text = (DATA / folder / f"{name}.txt").read_text(encoding="utf-8")
    return parse_text("fio", text, f"{name}.txt")


def disks(document: ParsedDocument, table: int = 0) -> dict[str, float]:
    return {
        record.name: record.util
        for owner, record in document.records()
        if owner.index == table and isinstance(record, FioDisk)
    }


def test_human_output_per_direction() -> None:
    document = parse("fio_slow_aes_ti")
    read, write = document.measurements
    assert (read.source, read.algorithm, read.op, read.block_size) == (
        "fio",
        "randrw",
        "read",
        4096,
    )
    assert read.bytes_per_second == 392 * KIB
    assert write.op == "write" and write.bytes_per_second == 408 * KIB
    assert read.extra["iops"] == 98.0
    assert read.extra["bw_stdev"] == pytest.approx(37.09 * KIB)
    assert read.extra["bw_samples"] == 15
    assert read.extra["latency_usec"]["clat"]["avg"] == pytest.approx(20036.03)
    assert read.extra["percentile_kind"] == "clat"
    assert read.extra["percentiles_usec"]["99.99"] == 24773.0
    assert len(read.extra["percentiles_usec"]) == 17
    assert (read.extra["cpu_usr"], read.extra["cpu_sys"]) == (0.0, 0.0)
    assert disks(document) == {"dm-1": 98.72, "dm-0": 98.65, "loop1": 0.0}
    positions = [r.position for _, r in document.records() if isinstance(r, FioDisk)]
    assert positions == [0, 1, 2]


def test_units_iops_in_thousands_and_mib() -> None:
    document = parse("fio_loop_aes_generic")
    read = document.measurements[0]
    assert read.bytes_per_second == 54.1 * 2**20
    assert read.extra["iops"] == 13900.0
    assert disks(document) == {"dm-1": 61.30, "loop0": 14.53}


def test_two_jobs_are_two_measurements_per_direction() -> None:
    document = parse("fio_loop_twojobs")
    assert [(m.extra["job_index"], m.op) for m in document.measurements] == [
        (0, "read"),
        (0, "write"),
        (1, "read"),
        (1, "write"),
    ]
    assert document.measurements[2].bytes_per_second == 12.1 * 2**20


def test_json_output() -> None:
    document = parse("fio_slow_aes_ti_json")
    read, write = document.measurements
    assert read.bytes_per_second == 395214
    assert write.bytes_per_second == 409548
    assert read.block_size == 4096  # from "job options": "bs": "4k"
    assert read.extra["rw"] == "randrw"
    assert read.extra["bw_stdev"] == pytest.approx(42.614328 * KIB)
    assert read.extra["percentiles_usec"]["50"] == pytest.approx(20054.016)
    assert read.extra["cpu_usr"] == 0.75
    assert disks(document) == {"dm-1": 97.826087, "dm-0": 97.404993, "loop1": 0.0}
    assert document.tables[0].facts == {"fio_version": "fio-3.33", "format": "json"}


def test_json_cut_short_keeps_the_jobs_and_warns_at_the_line() -> None:
    document = parse("fio_json_cut", "variants")
    assert len(document.measurements) == 2
    assert disks(document) == {}
    [warning] = document.warnings
    assert warning == (
        "fio_json_cut.txt:279: fio JSON ends here before the document is complete; "
        "read what comes before, from line 1"
    )


@pytest.mark.parametrize("variant", ["post_fio_storage", "post_fio_json_storage"])
def test_two_runs_over_a_busy_disk_are_storage_bound(variant: str) -> None:
    document = parse(variant, "variants")
    assert len(document.tables) == 2
    [finding] = document.findings
    assert finding.kind == "storage-bound"
    assert finding.extra["tables"] == [0, 1]
    assert finding.extra["disks"] == ["dm-0", "dm-0"]
    assert min(finding.extra["util"]) >= 95.0
    assert "says nothing about the cipher" in finding.detail


def test_cipher_bound_runs_are_not_storage_bound() -> None:
    document = parse("post_fio_cipher_bound", "variants")
    assert len(document.tables) == 2
    assert not document.findings
    assert max(disks(document, 0)["loop0"], disks(document, 1)["loop0"]) < 95.0


def test_busy_disk_but_different_speeds_is_not_storage_bound() -> None:
    slow = (DATA / "raw" / "fio_slow_aes_ti.txt").read_text(encoding="utf-8")
    faster = slow.replace("BW=408KiB/s", "BW=816KiB/s")  # as if the second run wrote twice as fast
    document = parse_text("fio", slow + "\nand then\n" + faster, "post")
    assert len(document.tables) == 2
    assert not document.findings
