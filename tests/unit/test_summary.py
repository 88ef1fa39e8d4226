"""The end-of-run summary and the throughput tables under it, read from recorded board runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.model.results import Results, Verdict, load_results
from pytest_hwcrypto.report.summary import Context, summary_lines
from pytest_hwcrypto.report.throughput_table import size_label, throughput_tables

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="module")
def uml() -> Results:
    return load_results(DATA / "board_uml_results_1.json")


@pytest.fixture(scope="module")
def qemu() -> Results:
    return load_results(DATA / "board_qemu_results.json")


def texts(results: Results, **context: object) -> list[str]:
    return [line.text for line in summary_lines(results, Context(**context))]  # type: ignore[arg-type]


def test_tables_group_by_path_and_mark_the_winner(uml: Results) -> None:
    tables = throughput_tables(uml)
    assert [table.title() for table in tables] == [  # sorted, whatever the recording order
        "afalg cbc(aes) 128-bit encrypt",
        "afalg ctr(aes) 128-bit encrypt",
        "afalg ecb(aes) 128-bit encrypt",
        "afalg xts(aes) 256-bit encrypt",
    ]
    ecb = tables[2]
    assert [row.driver for row in ecb.rows if row.winner] == ["ecb(aes-fixed-time)"]
    assert [row.driver for row in ecb.rows if row.slower_winner] == ["ecb(aes-fixed-time)"]
    assert ecb.block_sizes == (16, 64, 256, 1024, 4096, 16384, 65536)


def test_hardware_rows_carry_ratio_and_crossover_against_the_fastest_generic(
    qemu: Results,
) -> None:
    cbc = next(t for t in throughput_tables(qemu) if t.title() == "afalg cbc(aes) 128-bit encrypt")
    rows = {row.driver: row for row in cbc.rows}
    virtio = rows["virtio_crypto_aes_cbc"]
    assert virtio.reference == "cbc(aes-generic)"
    # the offload engine loses at small blocks and wins at 64 KiB (DESIGN: 39.9 vs 11.2)
    assert virtio.ratios[16] < 1 < virtio.ratios[65536]
    assert virtio.crossover == 16384
    assert rows["cbc(aes-generic)"].ratios == {}
    assert "faster from 16K B on" in virtio.verdict()


def test_default_summary_has_environment_tables_findings_and_json(uml: Results) -> None:
    lines = texts(uml, width=120, json_path="out/results.json", board="uml")
    assert lines[0].startswith("kernel 6.1.176 (x86_64), board uml, profile none")
    assert any(line.startswith("*ecb(aes-fixed-time)") for line in lines)
    assert "winner-not-fastest (4): the driver the kernel hands out is not the fastest one" in lines
    assert lines[-1] == "results JSON: out/results.json"


def test_lines_fit_the_width_and_verbose_shows_everything(uml: Results) -> None:
    narrow = texts(uml, width=60)
    table_lines = [line for line in narrow if line.startswith((" ", "*", "driver"))]
    # tables drop middle block sizes; findings are cut with an ellipsis
    assert any("sizes left out to fit" in line for line in narrow)
    assert all(len(line) <= 60 for line in narrow if line.startswith("  ecb"))
    assert any(line.endswith("…") for line in narrow)
    verbose = texts(uml, width=60, verbosity=1)
    assert not any("sizes left out" in line or line.endswith("…") for line in verbose)
    head = next(line for line in verbose if line.startswith("driver"))
    assert [size_label(s) for s in (16, 1024, 65536)] == ["16", "1K", "64K"]
    assert all(label in head.split() for label in ("16", "64", "256", "1K", "4K", "16K", "64K"))
    assert table_lines


def test_quiet_levels(uml: Results) -> None:
    quiet = texts(uml, verbosity=-1, width=200)
    assert not quiet[0].startswith("kernel")  # no environment line
    assert any(line.startswith("winner-not-fastest: ecb(aes)") for line in quiet)
    (only,) = texts(uml, verbosity=-2)
    assert only.startswith("hwcrypto: 56 measurements, 4 findings (4 winner-not-fastest), 0 of 0")


def test_failed_rules_are_listed_red_and_passed_only_with_verbose(uml: Results) -> None:
    results = Results(
        kernel=uml.kernel,
        measurements=uml.measurements,
        verdicts=[
            Verdict("hw-beats-sw cbc(aes)", False, "0.45x at 65536 B"),
            Verdict("floor xts(aes)", True, "ok"),
        ],
    )
    lines = summary_lines(results, Context(width=200))
    failed = [line for line in lines if "FAIL" in line.text]
    assert [line.text for line in failed] == ["  FAIL hw-beats-sw cbc(aes): 0.45x at 65536 B"]
    assert failed[0].markup == {"red": True}
    assert any(line.text == "rules: 1 passed, 1 failed" for line in lines)
    assert not any("floor xts(aes)" in line.text for line in lines)
    assert any("pass floor xts(aes)" in t for t in texts(results, width=200, verbosity=1))


def test_single_driver_series_are_counted_and_listed_with_verbose(qemu: Results) -> None:
    lines = texts(qemu, width=200)
    assert "52 series measured on one driver only (-v lists them)" in lines
    verbose = texts(qemu, width=200, verbosity=1)
    assert sum(line.startswith("tcrypt ") for line in verbose) == 52
