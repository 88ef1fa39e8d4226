# SPDX-License-Identifier: MIT
"""The end-of-run summary and the throughput tables under it, read from recorded board runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.model.results import Finding, Results, Verdict, load_results
from pytest_hwcrypto.report.summary import Context, differing_drivers, summary_lines
from pytest_hwcrypto.report.throughput_table import throughput_tables
from pytest_hwcrypto.units import size_label

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


def test_tables_fit_the_width_and_verbose_shows_every_size(uml: Results) -> None:
    narrow = texts(uml, width=60)
    assert any("sizes left out to fit" in line for line in narrow)
    verbose = texts(uml, width=60, verbosity=1)
    assert not any("sizes left out" in line for line in verbose)
    head = next(line for line in verbose if line.startswith("driver"))
    assert [size_label(s) for s in (16, 1024, 65536)] == ["16", "1K", "64K"]
    assert all(label in head.split() for label in ("16", "64", "256", "1K", "4K", "16K", "64K"))


@pytest.mark.parametrize("width", [80, 200])
def test_summary_reads_as_recorded_golden_text(width: int) -> None:
    """The summary of README command 1 (every suite on the UML board; a real run, 25
    findings), line for line against tests/data/summary_golden/."""
    main = load_results(DATA / "board_uml_results_main.json")
    lines = texts(main, width=width, json_path="out/results.json", board="uml")
    golden = DATA / "summary_golden" / f"board_uml_results_main_{width}.txt"
    assert "\n".join(lines) + "\n" == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [40, 80, 200])
def test_findings_wrap_to_the_width_and_keep_every_figure(uml: Results, width: int) -> None:
    lines = texts(uml, width=width)
    findings = lines[lines.index("findings (4):") + 1 : -1]
    assert findings and all(len(line) <= width for line in findings)
    assert not any("…" in line for line in lines)
    # continuation lines are indented under the line they continue
    first = next(i for i, line in enumerate(findings) if line.startswith("  aes-fixed-time"))
    assert len(findings) > first + 1
    assert all(line.startswith("      ") for line in findings[first + 1 :])
    said = " ".join(line.strip() for line in findings)
    for finding in uml.findings:
        for point in finding.extra["points"]:
            assert f"{point['ratio']:.2f}x at {point['block_size']} B" in said


def test_without_a_terminal_nothing_is_wrapped_or_left_out(uml: Results) -> None:
    lines = texts(uml, width=None)
    assert not any("sizes left out" in line for line in lines)
    (pair,) = [line for line in lines if line.startswith("  aes-fixed-time")]
    assert len(pair) > 200 and pair.endswith("0.57x at 16384 B, 0.58x at 65536 B")
    head = next(line for line in lines if line.startswith("driver"))
    assert all(label in head.split() for label in ("16", "64", "256", "1K", "4K", "16K", "64K"))


def test_one_fact_on_many_paths_is_one_line_per_pair_of_drivers_with_its_reason(
    uml: Results,
) -> None:
    lines = texts(uml, width=None)
    assert "winner-not-fastest (4): the driver the kernel hands out is not the fastest one" in lines
    (pair,) = [line for line in lines if "is handed out over" in line]
    assert pair.startswith(
        "  aes-fixed-time (priority 101) is handed out over aes-generic (priority 100), "
        "which is faster on 4 paths; the kernel prefers aes-fixed-time on purpose: it is "
        "built to run in constant time"
    )
    for path in ("cbc(aes) [afalg 128 encrypt]", "xts(aes) [afalg 256 encrypt]"):
        assert path in pair
    # -v keeps every finding as recorded; the results keep one finding per path
    verbose = texts(uml, width=None, verbosity=1)
    assert sum("is slower than another driver" in line for line in verbose) == 4
    assert len(uml.findings) == 4


def test_pairs_are_the_drivers_two_template_instances_differ_by() -> None:
    assert differing_drivers("xts(ecb(aes-fixed-time))", "xts(ecb(aes-generic))") == (
        "aes-fixed-time",
        "aes-generic",
    )
    assert differing_drivers(
        "authenc(hmac(sha256-generic),cbc(aes-fixed-time))",
        "authenc(hmac(sha256-generic),cbc(aes-generic))",
    ) == ("aes-fixed-time", "aes-generic")
    assert differing_drivers("cbc-aes-aesni", "cbc(aes-generic)") == (
        "cbc-aes-aesni",
        "cbc(aes-generic)",
    )
    assert differing_drivers("rfc4106(gcm(aes-x))", "gcm(aes-y)") == (
        "rfc4106(gcm(aes-x))",
        "gcm(aes-y)",
    )


def test_a_generic_driver_losing_to_openssl_is_never_called_hardware(uml: Results) -> None:
    """The openssl suite's hw-loses-to-sw for cbc(aes-generic) (class generic, the UML
    board's inventory) through the afalg engine: the kernel path is generic C."""
    detail = (
        "aes-128-cbc [openssl -engine afalg -> cbc(aes-generic)]: the kernel path (generic C) "
        "loses to OpenSSL's own code at 5 of 7 block sizes, down to 0.31x at 16 B "
        "(0.29 vs 0.93 MiB/s)"
    )
    loses = Finding(
        "hw-loses-to-sw", "aes-128-cbc", detail, {"driver": "cbc(aes-generic)", "source": "openssl"}
    )
    results = Results(
        kernel=uml.kernel, inventory=uml.inventory, measurements=uml.measurements, findings=[loses]
    )
    lines = texts(results, width=None)
    assert (
        "hw-loses-to-sw (1): the kernel path (generic C) loses to OpenSSL's own code"
        in (lines[lines.index("findings (1):") + 1])
    )
    assert not any("hardware" in line for line in lines)


def test_hardware_losing_to_generic_c_says_so(qemu: Results) -> None:
    lines = texts(qemu, width=None)
    meaning = next(line for line in lines if line.startswith("hw-loses-to-sw (1): "))
    assert meaning == (
        "hw-loses-to-sw (1): a hardware driver is slower than a generic C one (at some sizes)"
    )


def test_quiet_levels(uml: Results) -> None:
    quiet = texts(uml, verbosity=-1, width=200)
    assert not quiet[0].startswith("kernel")  # no environment line
    assert any(
        line.startswith("winner-not-fastest: aes-fixed-time (priority 101)") for line in quiet
    )
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


def test_a_generic_driver_keeping_up_with_openssl_is_not_called_hardware(uml: Results) -> None:
    """The openssl suite's crossover for cbc(aes-generic) against OpenSSL's software."""
    crossover = Finding(
        "crossover",
        "aes-128-cbc",
        "aes-128-cbc [openssl -engine afalg -> cbc(aes-generic)]: keeps up with OpenSSL's "
        "software from 16384 B on",
        {"driver": "cbc(aes-generic)", "block_size": 16384, "source": "openssl"},
    )
    results = Results(
        kernel=uml.kernel,
        inventory=uml.inventory,
        measurements=uml.measurements,
        findings=[crossover],
    )
    lines = texts(results, width=None)
    meaning = lines[lines.index("findings (1):") + 1]
    assert meaning == (
        "crossover (1): the block size from which the kernel path (generic C) keeps up with "
        "OpenSSL's own code"
    )
    assert not any("hardware" in line for line in lines)
