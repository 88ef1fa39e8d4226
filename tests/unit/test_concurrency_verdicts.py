# SPDX-License-Identifier: MIT
"""Verdicts per level of requests in flight, on small fakes: an offload engine that loses
one request at a time and wins with several, the way a queued engine does."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.model.results import Measurement, inventory_items
from pytest_hwcrypto.verdict.compare import compare_measurements
from pytest_hwcrypto.verdict.rules import (
    crossover_findings,
    hw_loses_to_sw_findings,
    needs_concurrency_findings,
    rule_from_dict,
)
from tests.factories import at_mib_s, spread

MIB = 1024 * 1024
INVENTORY = inventory_items(
    [
        {"name": "cbc(aes)", "driver": "engine", "priority": 300, "class": "offload"},
        {"name": "cbc(aes)", "driver": "cbc-aes-aesni", "priority": 400, "class": "cpu-accel"},
        {"name": "cbc(aes)", "driver": "cbc(aes-generic)", "priority": 100, "class": "generic"},
    ]
)


def measured(
    driver: str, size: int, level: int, mib_s: float, cpu_per_byte: float | None = None
) -> Measurement:
    # seven samples within +-1 %: clearly apart from anything 10 % away
    samples = spread(mib_s * MIB, (-1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0))
    return at_mib_s(
        driver,
        mib_s,
        block_size=size,
        samples=samples,
        concurrency=level,
        cpu_per_byte=cpu_per_byte,
    )


def queued_engine(speeds: dict[int, float]) -> list[Measurement]:
    """The engine at each level against aesni, which does not scale (one CPU)."""
    series = []
    for level, engine in speeds.items():
        series.append(measured("engine", 4096, level, engine, cpu_per_byte=2e-9))
        series.append(measured("cbc-aes-aesni", 4096, level, 10.0, cpu_per_byte=1e-8))
    return series


def test_needs_concurrency_names_the_smallest_level_that_wins() -> None:
    data = queued_engine({1: 3.0, 2: 6.0, 4: 12.0, 16: 12.5})
    findings = needs_concurrency_findings(data, INVENTORY)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.kind == "needs-concurrency"
    assert finding.extra["concurrency"] == 4  # N=2 still loses (0.6x)
    assert finding.extra["driver"] == "engine"
    assert finding.extra["other_driver"] == "cbc-aes-aesni"
    assert "wins with 4 in flight" in finding.detail
    assert "0.30x at N=1, 1.20x at N=4" in finding.detail


def test_no_finding_when_it_never_wins_or_never_lost() -> None:
    assert needs_concurrency_findings(queued_engine({1: 3.0, 4: 8.0}), INVENTORY) == []
    assert needs_concurrency_findings(queued_engine({1: 12.0, 4: 40.0}), INVENTORY) == []
    # measured one at a time only: nothing to say about more in flight
    assert needs_concurrency_findings(queued_engine({1: 3.0}), INVENTORY) == []


def test_a_win_inside_the_noise_is_not_a_win() -> None:
    data = queued_engine({1: 3.0})
    data.append(measured("cbc-aes-aesni", 4096, 4, 10.0))
    samples = [v * MIB for v in (5.0, 8.0, 10.0, 10.5, 11.0, 12.0, 15.0)]
    noisy = at_mib_s("engine", 10.5, samples=samples, concurrency=4)
    assert needs_concurrency_findings([*data, noisy], INVENTORY) == []


def test_hw_loses_and_crossover_are_per_level() -> None:
    data = queued_engine({1: 3.0, 4: 12.0})
    losing = [f for f in hw_loses_to_sw_findings(data, INVENTORY) if "engine" in f.detail]
    assert len(losing) == 1  # only N=1 loses
    assert "concurrency" not in losing[0].extra
    crossovers = [f for f in crossover_findings(data, INVENTORY) if "engine" in f.detail]
    assert sorted(f.extra.get("concurrency", 1) for f in crossovers) == [1, 4]
    at_four = next(f for f in crossovers if f.extra.get("concurrency") == 4)
    assert "N=4" in at_four.detail
    assert at_four.extra["crossover"] == 4096


def rule(**keys: object) -> object:
    table = {
        "type": "hw-beats-sw",
        "algorithm": "cbc(aes)",
        "hw": "offload",
        "sw": "cpu-accel",
        "min_ratio": 0.9,
        **keys,
    }
    return rule_from_dict(table, "board.toml:3")


def test_rule_without_concurrency_judges_one_at_a_time() -> None:
    data = queued_engine({1: 3.0, 8: 9.3})
    outcome = rule().evaluate(data, INVENTORY)  # type: ignore[attr-defined]
    assert not outcome.verdict.passed
    assert "0.30x" in outcome.verdict.message


def test_rule_at_concurrency_n_judges_that_level_with_cpu_per_byte() -> None:
    data = queued_engine({1: 3.0, 8: 9.3})
    outcome = rule(concurrency=8, cpu_per_byte=0.25).evaluate(data, INVENTORY)  # type: ignore[attr-defined]
    assert outcome.verdict.passed, outcome.verdict.message
    message = outcome.verdict.message
    assert "cbc(aes) [N=8]" in message
    assert "0.93x" in message and "0.20x its CPU per byte (limit 0.25x)" in message


def test_cpu_per_byte_limit_fails_an_engine_that_burns_the_cpu() -> None:
    data = queued_engine({8: 9.3})
    outcome = rule(concurrency=8, cpu_per_byte=0.1).evaluate(data, INVENTORY)  # type: ignore[attr-defined]
    assert not outcome.verdict.passed
    assert "uses 0.20x the CPU per byte of cpu-accel cbc-aes-aesni at 4096 B" in (
        outcome.verdict.message
    )
    assert "may use at most 0.1x" in outcome.verdict.message


def test_cpu_per_byte_missing_fails_the_rule_that_asks_for_it() -> None:
    data = [measured("engine", 4096, 1, 12.0), measured("cbc-aes-aesni", 4096, 1, 10.0)]
    outcome = rule(cpu_per_byte=0.5).evaluate(data, INVENTORY)  # type: ignore[attr-defined]
    assert not outcome.verdict.passed
    assert "no CPU per byte measured" in outcome.verdict.message


@pytest.mark.parametrize("value", [0, -1, "4", 1.5, True])
def test_bad_concurrency_is_one_line_naming_the_key(value: object) -> None:
    with pytest.raises(ValueError, match=r"board\.toml:3: key 'concurrency' must be a positive"):
        rule(concurrency=value)


def test_regression_matches_each_level_with_itself() -> None:
    then = [measured("engine", 4096, 1, 3.0), measured("engine", 4096, 4, 12.0)]
    now = [measured("engine", 4096, 1, 3.0), measured("engine", 4096, 4, 6.0)]
    comparisons = compare_measurements(then, now, 0.1)
    assert [c.failed for c in comparisons] == [False, True]


def test_scaling_table_shows_each_driver_per_level_and_the_reports_read_it() -> None:
    from pytest_hwcrypto.model.results import Results
    from pytest_hwcrypto.report.html import render_html
    from pytest_hwcrypto.report.scaling import scaling_tables
    from pytest_hwcrypto.report.shaping import ReportInput, shape
    from pytest_hwcrypto.report.summary import Context, summary_lines
    from pytest_hwcrypto.report.throughput_table import throughput_tables

    results = Results(measurements=queued_engine({1: 3.0, 4: 12.0, 16: 12.5}))
    (table,) = scaling_tables(results)
    assert table.levels == (1, 4, 16)
    engine = next(row for row in table.rows if row.driver == "engine")
    assert table.cells(engine) == ["engine", "3", "12", "12.5", "4.17x", "2.1 -> 2.1"]
    # one throughput table per level, so a driver's cells never overwrite each other
    titles = [t.title() for t in throughput_tables(results)]
    assert titles == [
        "afalg cbc(aes) 128-bit encrypt",
        "afalg cbc(aes) 128-bit encrypt N=4",
        "afalg cbc(aes) 128-bit encrypt N=16",
    ]
    text = "\n".join(line.text for line in summary_lines(results, Context(width=120)))
    assert "afalg cbc(aes) 128-bit encrypt 4096 B: MiB/s by requests in flight" in text
    page = render_html(shape([ReportInput("run", "run.json", results)]), None, "t")
    assert "Requests in flight" in page and "4.17x" in page
    assert "4 requests in flight" in page  # the per-level panel's title
