# SPDX-License-Identifier: MIT
from __future__ import annotations

import random
from typing import Any

import pytest

from pytest_hwcrypto.model.results import ROUNDS_KEY, Measurement, Results, inventory_items
from pytest_hwcrypto.verdict.rules import (
    FloorRule,
    HwBeatsSwRule,
    NoRegressionRule,
    RuleError,
    WinnerFastestRule,
    crossover_findings,
    evaluate_rules,
    hw_loses_to_sw_findings,
    recorded_winner,
    rule_from_dict,
    rules_from_list,
    winner_not_fastest_findings,
)
from tests.factories import at_mib_s

MIB = 1024 * 1024

# The QEMU x86 board (measured there): AF_ALG cbc(aes), MiB/s at 16 B / 4 KiB / 64 KiB
QEMU_SPEEDS = {
    "virtio_crypto_aes_cbc": {16: 0.03, 4096: 6.6, 65536: 39.9},
    "cbc-aes-aesni": {16: 0.07, 4096: 11.5, 65536: 26.7},
    "cbc(aes-generic)": {16: 0.08, 4096: 9.8, 65536: 11.2},
}
QEMU_INVENTORY_JSON = [
    {
        "name": "cbc(aes)",
        "driver": "cbc-aes-aesni",
        "priority": 400,
        "class": "cpu-accel",
        "winner": True,
    },
    {
        "name": "cbc(aes)",
        "driver": "virtio_crypto_aes_cbc",
        "priority": 150,
        "class": "offload",
        "winner": False,
    },
    {
        "name": "cbc(aes)",
        "driver": "cbc(aes-generic)",
        "priority": 100,
        "class": "generic",
        "winner": False,
    },
]
QEMU_INVENTORY = inventory_items(QEMU_INVENTORY_JSON)


def measure(
    driver: str,
    block_size: int,
    mib_s: float,
    samples: list[float] | None = None,
    algorithm: str = "cbc(aes)",
    key_bits: int = 128,
    source: str = "afalg",
    op: str = "encrypt",
    driver_class: str | None = None,
) -> Measurement:
    return at_mib_s(
        driver,
        mib_s,
        source=source,
        algorithm=algorithm,
        key_bits=key_bits,
        block_size=block_size,
        op=op,
        samples=[value * MIB for value in samples or []],
        driver_class=driver_class,
    )


def qemu_measurements(
    speeds: dict[str, dict[int, float]] = QEMU_SPEEDS, **kwargs: Any
) -> list[Measurement]:
    return [
        measure(driver, size, mib_s, **kwargs)
        for driver, table in speeds.items()
        for size, mib_s in table.items()
    ]


def rule(**table: Any) -> Any:
    return rule_from_dict(table, "board.toml rule #1")


def noisy(rng: random.Random, centre: float, cov: float, n: int = 10) -> list[float]:
    return [rng.gauss(centre, centre * cov) for _ in range(n)]


# --- reading rules ---------------------------------------------------------------------------


def test_profile_example_rule_is_read() -> None:
    read = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", min_ratio=1.0,
        block_sizes=">=65536", source="afalg",
    )  # fmt: skip
    assert isinstance(read, HwBeatsSwRule)
    assert (read.hw, read.sw, read.min_ratio, read.scope.source) == (
        "offload",
        "generic",
        1.0,
        "afalg",
    )
    assert read.scope.block_sizes.low == 65536
    assert read.label == "hw-beats-sw cbc(aes) offload vs generic"


def test_every_rule_type_is_read() -> None:
    tables: list[dict[str, Any]] = [
        {
            "type": "floor",
            "algorithm": "xts(aes)",
            "class": "cpu-accel",
            "min_mib_s": 500,
            "block_sizes": "4K..",
        },
        {"type": "floor", "algorithm": "xts(aes)", "driver": "xts-aes-aesni", "min_mib_s": 500.5},
        {
            "type": "winner-fastest",
            "algorithm": "xts(aes)",
            "tolerance": "3%",
            "name": "xts winner",
        },
        {"type": "no-regression", "max_drop": "15%", "source": "afalg", "block_sizes": [16, 4096]},
        {
            "type": "no-regression",
            "algorithm": "cbc(aes)",
            "max_drop": 0.2,
            "driver": "cbc-aes-aesni",
        },
    ]
    floor_class, floor_driver, winner, regression, regression_driver = rules_from_list(
        tables, "board.toml"
    )
    assert isinstance(floor_class, FloorRule) and floor_class.target == "cpu-accel"
    assert isinstance(floor_driver, FloorRule) and floor_driver.min_mib_s == 500.5
    assert isinstance(winner, WinnerFastestRule) and winner.tolerance == pytest.approx(0.03)
    assert winner.label == "xts winner"
    assert isinstance(regression, NoRegressionRule) and regression.max_drop == pytest.approx(0.15)
    assert regression.scope.algorithm is None and regression.scope.block_sizes.contains(4096)
    assert not regression.scope.block_sizes.contains(64)
    assert (
        isinstance(regression_driver, NoRegressionRule)
        and regression_driver.driver == "cbc-aes-aesni"
    )


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"algorithm": "cbc(aes)"}, "board.toml rule #2: missing key 'type'"),
        ({"type": "faster"}, "board.toml rule #2: unknown rule type 'faster'"),
        (
            {"type": "hw-beats-sw", "hw": "offload", "sw": "generic"},
            "board.toml rule #2: missing key 'algorithm'",
        ),
        (
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "min_ration": 1,
            },
            "board.toml rule #2: unknown key 'min_ration' (known: ",
        ),
        (
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "min_ratio": "1x",
            },
            "board.toml rule #2: key 'min_ratio' must be a positive number, got str '1x'",
        ),
        (
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "min_ratio": True,
            },
            "key 'min_ratio' must be a positive number",
        ),
        (
            {"type": "hw-beats-sw", "algorithm": "cbc(aes)", "hw": "offload", "sw": "offload"},
            "board.toml rule #2: 'hw' and 'sw' are both 'offload'",
        ),
        (
            {"type": "hw-beats-sw", "algorithm": "cbc(aes)", "hw": 3, "sw": "generic"},
            "key 'hw' must be a non-empty string, got int 3",
        ),
        (
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "block_sizes": ">=lots",
            },
            "board.toml rule #2: key 'block_sizes': bad block-size range '>=lots'",
        ),
        (
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "key_bits": "128",
            },
            "key 'key_bits' must be a positive integer",
        ),
        (
            {
                "type": "floor",
                "algorithm": "cbc(aes)",
                "driver": "d",
                "class": "offload",
                "min_mib_s": 1,
            },
            "board.toml rule #2: give exactly one of 'driver' and 'class'",
        ),
        (
            {"type": "floor", "algorithm": "cbc(aes)", "min_mib_s": 1},
            "give exactly one of 'driver' and 'class'",
        ),
        (
            {"type": "floor", "algorithm": "cbc(aes)", "class": "fast", "min_mib_s": 1},
            "key 'class' must be one of generic, cpu-accel, offload, got 'fast'",
        ),
        ({"type": "floor", "algorithm": "cbc(aes)", "class": "offload"}, "missing key 'min_mib_s'"),
        (
            {"type": "no-regression", "max_drop": "10"},
            "board.toml rule #2: key 'max_drop': bad fraction '10'",
        ),
        ({"type": "no-regression", "max_drop": 1.5}, "key 'max_drop' must be a fraction below 1"),
        ({"type": "winner-fastest"}, "missing key 'algorithm'"),
    ],
)
def test_bad_rules_name_where_and_the_key(table: dict[str, Any], expected: str) -> None:
    tables = [{"type": "winner-fastest", "algorithm": "cbc(aes)"}, table]
    with pytest.raises(RuleError) as error:
        rules_from_list(tables, "board.toml")
    assert expected in str(error.value)


def test_rule_must_be_a_table() -> None:
    with pytest.raises(RuleError, match=r"p\.toml rule #1: expected a table"):
        rules_from_list(["hw-beats-sw"], "p.toml")  # type: ignore[list-item]


# --- hw-beats-sw -----------------------------------------------------------------------------


def test_message_in_the_documented_format() -> None:
    speeds = {
        "virtio_crypto_aes_cbc": {4096: 4.5, 65536: 40.0},
        "cbc(aes-generic)": {4096: 10.0, 65536: 11.2},
    }
    hw_rule = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", block_sizes=">=4096"
    )
    outcome = hw_rule.evaluate(qemu_measurements(speeds), QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == (
        "cbc(aes): offload virtio_crypto_aes_cbc is 0.45x generic cbc(aes-generic) at 4096 B "
        "(needs >= 1.0x from 4096 B); crossover 65536 B"
    )
    assert outcome.verdict.rule == "hw-beats-sw cbc(aes) offload vs generic"
    (finding,) = outcome.findings
    assert finding.kind == "hw-loses-to-sw" and finding.algorithm == "cbc(aes)"
    assert finding.detail == outcome.verdict.message
    assert finding.extra["points"][0]["ratio"] == pytest.approx(0.45)


def test_offload_loses_small_wins_large_on_the_qemu_board() -> None:
    measurements = qemu_measurements()
    everywhere = rule(type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic")
    outcome = everywhere.evaluate(measurements, QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == (
        "cbc(aes): offload virtio_crypto_aes_cbc is 0.38x generic cbc(aes-generic) at 16 B "
        "(needs >= 1.0x at every block size); also below at 4096 B; crossover 65536 B"
    )
    large = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", block_sizes=">=65536"
    )
    outcome = large.evaluate(measurements, QEMU_INVENTORY)
    assert outcome.verdict.passed, outcome.verdict.message
    assert outcome.verdict.message == (
        "cbc(aes): offload virtio_crypto_aes_cbc >= 1.0x generic cbc(aes-generic) from 65536 B "
        "(lowest 3.56x at 65536 B); crossover 65536 B"
    )
    assert outcome.findings == []


def test_class_side_picks_the_fastest_driver_of_the_class_and_names_it() -> None:
    speeds = {
        "cbc-aes-aesni": {4096: 11.5},
        "cbc-aes-avx-slow": {4096: 3.0},
        "cbc(aes-generic)": {4096: 9.8},
    }
    measurements = qemu_measurements(speeds)
    measurements[1].driver_class = "cpu-accel"  # known from the measurement, not the inventory
    outcome = rule(type="hw-beats-sw", algorithm="cbc(aes)", hw="cpu-accel", sw="generic").evaluate(
        measurements, QEMU_INVENTORY
    )
    assert outcome.verdict.passed
    assert "cpu-accel cbc-aes-aesni >= 1.0x generic cbc(aes-generic)" in outcome.verdict.message


def test_driver_names_as_sides() -> None:
    engine_rule = rule(
        type="hw-beats-sw",
        algorithm="cbc(aes)",
        hw="virtio_crypto_aes_cbc",
        sw="cbc-aes-aesni",
        min_ratio=1.2,
        block_sizes=">=64K",
    )
    outcome = engine_rule.evaluate(qemu_measurements(), QEMU_INVENTORY)
    assert outcome.verdict.passed
    assert outcome.verdict.message.startswith(
        "cbc(aes): virtio_crypto_aes_cbc >= 1.2x cbc-aes-aesni from 65536 B"
    )


def test_shortfall_within_noise_passes_clear_shortfall_fails() -> None:
    rng = random.Random(3)
    noisy_hw = [measure("virtio_crypto_aes_cbc", 65536, 0, samples=noisy(rng, 9.7, 0.14))]
    noisy_sw = [measure("cbc(aes-generic)", 65536, 0, samples=noisy(rng, 10.0, 0.14))]
    hw_rule = rule(type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic")
    assert hw_rule.evaluate(noisy_hw + noisy_sw, QEMU_INVENTORY).verdict.passed
    tight_hw = [measure("virtio_crypto_aes_cbc", 65536, 0, samples=noisy(rng, 8.5, 0.01))]
    tight_sw = [measure("cbc(aes-generic)", 65536, 0, samples=noisy(rng, 10.0, 0.01))]
    assert not hw_rule.evaluate(tight_hw + tight_sw, QEMU_INVENTORY).verdict.passed


def test_point_values_decide_on_the_point() -> None:
    speeds = {"virtio_crypto_aes_cbc": {65536: 9.9}, "cbc(aes-generic)": {65536: 10.0}}
    outcome = rule(type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic").evaluate(
        qemu_measurements(speeds), QEMU_INVENTORY
    )
    assert not outcome.verdict.passed
    assert "0.99x" in outcome.verdict.message


def test_missing_side_fails_and_says_which() -> None:
    without_engine = {k: v for k, v in QEMU_SPEEDS.items() if k != "virtio_crypto_aes_cbc"}
    outcome = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", source="afalg"
    ).evaluate(qemu_measurements(without_engine), QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == "cbc(aes): no offload driver measured (source afalg)"
    outcome = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", source="dmcrypt"
    ).evaluate(qemu_measurements(), QEMU_INVENTORY)
    assert not outcome.verdict.passed


def test_nothing_in_range_fails() -> None:
    outcome = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", block_sizes=">=1M"
    ).evaluate(qemu_measurements(), QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert (
        "no block size from 1048576 B with both offload and generic measured"
        in outcome.verdict.message
    )


def test_series_are_kept_apart_and_named_when_several() -> None:
    measurements = qemu_measurements() + qemu_measurements(
        {"virtio_crypto_aes_cbc": {65536: 5.0}, "cbc(aes-generic)": {65536: 10.0}}, key_bits=256
    )
    outcome = rule(
        type="hw-beats-sw", algorithm="cbc(aes)", hw="offload", sw="generic", block_sizes=">=65536"
    ).evaluate(measurements, QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == (
        "cbc(aes) [afalg, 256-bit key, encrypt]: offload virtio_crypto_aes_cbc is 0.50x generic "
        "cbc(aes-generic) at 65536 B (needs >= 1.0x from 65536 B); no crossover"
    )
    assert outcome.findings[0].extra["key_bits"] == 256
    only_128 = rule(
        type="hw-beats-sw",
        algorithm="cbc(aes)",
        hw="offload",
        sw="generic",
        block_sizes=">=65536",
        key_bits=128,
    )
    assert only_128.evaluate(measurements, QEMU_INVENTORY).verdict.passed


# --- floor -----------------------------------------------------------------------------------


def test_floor_by_driver_and_by_class() -> None:
    measurements = qemu_measurements()
    passing = rule(
        type="floor",
        algorithm="cbc(aes)",
        driver="cbc-aes-aesni",
        min_mib_s=20,
        block_sizes=">=64K",
    )
    outcome = passing.evaluate(measurements, QEMU_INVENTORY)
    assert outcome.verdict.passed
    assert (
        outcome.verdict.message
        == "cbc(aes): cbc-aes-aesni >= 20 MiB/s from 65536 B (lowest 26.7 MiB/s at 65536 B)"
    )
    failing = rule_from_dict(
        {
            "type": "floor",
            "algorithm": "cbc(aes)",
            "class": "offload",
            "min_mib_s": 10,
            "block_sizes": ">=4096",
        },
        "board.toml rule #1",
    )
    outcome = failing.evaluate(measurements, QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == (
        "cbc(aes): offload virtio_crypto_aes_cbc gives 6.60 MiB/s at 4096 B "
        "(floor 10 MiB/s from 4096 B)"
    )
    (finding,) = outcome.findings
    assert finding.kind == "below-floor" and finding.extra["block_size"] == 4096


def test_floor_uses_the_interval() -> None:
    floor_rule = rule(type="floor", algorithm="cbc(aes)", driver="cbc-aes-aesni", min_mib_s=100)
    within_noise = [measure("cbc-aes-aesni", 4096, 0, samples=[85, 95, 98, 99, 101, 103, 105])]
    assert floor_rule.evaluate(within_noise, QEMU_INVENTORY).verdict.passed
    clearly_below = [measure("cbc-aes-aesni", 4096, 0, samples=[85, 86, 87, 88, 89, 90, 91])]
    assert not floor_rule.evaluate(clearly_below, QEMU_INVENTORY).verdict.passed


def test_floor_without_data_fails() -> None:
    outcome = rule(
        type="floor", algorithm="xts(aes)", driver="xts-aes-aesni", min_mib_s=100
    ).evaluate(qemu_measurements(), QEMU_INVENTORY)
    assert not outcome.verdict.passed
    assert outcome.verdict.message == "xts(aes): no xts-aes-aesni measured"
    outcome = rule(
        type="floor",
        algorithm="cbc(aes)",
        driver="cbc-aes-aesni",
        min_mib_s=1,
        block_sizes="<=8",
        op="decrypt",
    ).evaluate(qemu_measurements(), QEMU_INVENTORY)
    assert outcome.verdict.message == "cbc(aes): no cbc-aes-aesni measured up to 8 B (op decrypt)"


# --- winner-fastest --------------------------------------------------------------------------

UML_INVENTORY_JSON = [
    {
        "name": "xts(aes)",
        "driver": "xts(ecb(aes-fixed-time))",
        "priority": 101,
        "class": "generic",
        "winner": True,
    },
    {
        "name": "xts(aes)",
        "driver": "xts(ecb(aes-generic))",
        "priority": 100,
        "class": "generic",
        "winner": False,
    },
]
UML_INVENTORY = inventory_items(UML_INVENTORY_JSON)


def uml_measurements(fixed_time: float, generic: float) -> list[Measurement]:
    return [
        measure("xts(ecb(aes-fixed-time))", 4096, fixed_time, algorithm="xts(aes)", key_bits=256),
        measure("xts(ecb(aes-generic))", 4096, generic, algorithm="xts(aes)", key_bits=256),
    ]


def test_winner_of_prefers_the_flag_then_priority() -> None:
    winner = recorded_winner("xts(aes)", UML_INVENTORY)
    assert winner is not None and (winner.driver, winner.priority) == (
        "xts(ecb(aes-fixed-time))",
        101,
    )
    unflagged = inventory_items([dict(entry, winner=False) for entry in UML_INVENTORY_JSON[::-1]])
    winner = recorded_winner("xts(aes)", unflagged)
    assert winner is not None and winner.driver == "xts(ecb(aes-fixed-time))"
    assert recorded_winner("cbc(aes)", UML_INVENTORY) is None


def test_winner_twice_as_slow_fails_like_on_the_uml_board() -> None:
    outcome = rule(type="winner-fastest", algorithm="xts(aes)").evaluate(
        uml_measurements(20.0, 40.0), UML_INVENTORY
    )
    assert not outcome.verdict.passed
    assert outcome.verdict.message == (
        "xts(aes): winner xts(ecb(aes-fixed-time)) (priority 101) is slower than another driver: "
        "0.50x xts(ecb(aes-generic)) at 4096 B"
    )
    (finding,) = outcome.findings
    assert finding.kind == "winner-not-fastest"
    assert (
        finding.extra["winner"] == "xts(ecb(aes-fixed-time))" and finding.extra["priority"] == 101
    )


def test_a_winner_half_as_fast_on_a_drifting_board_is_seen_through_its_rounds() -> None:
    """UML on a shared host: the board's speed moves 2x between rounds, so each driver's own
    interval is wide, but the two samples of a round were taken side by side."""
    rng = random.Random(7)
    drift = [rng.choice((0.5, 0.7, 1.0, 1.4, 2.0)) for _ in range(11)]

    def run(rounds_id: str | None) -> list[Measurement]:
        pair = uml_measurements(20.0, 40.0)
        for measurement, mib_s in zip(pair, (20.0, 40.0)):
            measurement.samples = [mib_s * MIB * d * rng.gauss(1.0, 0.02) for d in drift]
            if rounds_id is not None:
                measurement.extra[ROUNDS_KEY] = rounds_id
        return pair

    winner = rule(type="winner-fastest", algorithm="xts(aes)")
    unpaired = winner.evaluate(run(None), UML_INVENTORY)
    assert unpaired.verdict.passed, "each interval alone is too wide to tell 0.5x from 1x"
    paired = winner.evaluate(run("one-run"), UML_INVENTORY)
    assert not paired.verdict.passed
    assert "0.50x xts(ecb(aes-generic)) at 4096 B" in paired.verdict.message
    (finding,) = winner_not_fastest_findings(run("one-run"), UML_INVENTORY)
    (point,) = finding.extra["points"]
    assert point["ratio"] == pytest.approx(0.5, abs=0.03)
    other_runs = run("run-a")
    other_runs[1].extra[ROUNDS_KEY] = "run-b"
    assert winner.evaluate(other_runs, UML_INVENTORY).verdict.passed


def test_winner_within_tolerance_passes() -> None:
    outcome = rule(type="winner-fastest", algorithm="xts(aes)").evaluate(
        uml_measurements(39.0, 40.0), UML_INVENTORY
    )
    assert outcome.verdict.passed
    assert (
        "is the fastest within noise at every block size (1 comparisons)" in outcome.verdict.message
    )
    strict = rule(type="winner-fastest", algorithm="xts(aes)", tolerance=0.0)
    assert not strict.evaluate(uml_measurements(39.0, 40.0), UML_INVENTORY).verdict.passed


def test_winner_not_measured_or_not_registered_fails_only_winner_passes() -> None:
    winner_rule = rule(type="winner-fastest", algorithm="xts(aes)")
    others_only = uml_measurements(20.0, 40.0)[1:]
    outcome = winner_rule.evaluate(others_only, UML_INVENTORY)
    assert (
        not outcome.verdict.passed
        and "winner xts(ecb(aes-fixed-time)) not measured" in outcome.verdict.message
    )
    assert not winner_rule.evaluate(others_only, []).verdict.passed
    outcome = winner_rule.evaluate(uml_measurements(20.0, 40.0)[:1], UML_INVENTORY)
    assert outcome.verdict.passed and "only driver measured" in outcome.verdict.message


# --- no-regression ---------------------------------------------------------------------------


def test_no_regression_is_stable_on_an_unchanged_system() -> None:
    rng = random.Random(99)
    regression_rule = rule(type="no-regression", max_drop="10%")
    for _ in range(100):
        baseline = Results(
            measurements=[measure("cbc-aes-aesni", 4096, 0, samples=noisy(rng, 11.5, 0.14))]
        )
        current = [measure("cbc-aes-aesni", 4096, 0, samples=noisy(rng, 11.5, 0.14))]
        assert regression_rule.evaluate(current, QEMU_INVENTORY, baseline).verdict.passed


def test_no_regression_catches_a_tight_fifteen_percent_drop() -> None:
    rng = random.Random(1)
    baseline = Results(
        measurements=[
            measure("cbc-aes-aesni", 4096, 0, samples=noisy(rng, 11.5, 0.02)),
            measure("cbc(aes-generic)", 4096, 0, samples=noisy(rng, 9.8, 0.02)),
        ]
    )
    current = [
        measure("cbc-aes-aesni", 4096, 0, samples=noisy(rng, 11.5 * 0.85, 0.02)),
        measure("cbc(aes-generic)", 4096, 0, samples=noisy(rng, 9.8, 0.02)),
    ]
    outcome = rule(type="no-regression", algorithm="cbc(aes)").evaluate(
        current, QEMU_INVENTORY, baseline
    )
    assert not outcome.verdict.passed
    assert outcome.verdict.message.startswith(
        "1 of 2 measurements regress more than 10%: "
        "cbc(aes) 128-bit 4096 B encrypt cbc-aes-aesni (afalg) "
    )
    (finding,) = outcome.findings
    assert finding.kind == "regression" and "cbc-aes-aesni" in finding.detail
    # a rule scoped to the other driver does not see it
    generic_only = rule(type="no-regression", driver="cbc(aes-generic)")
    assert generic_only.evaluate(current, QEMU_INVENTORY, baseline).verdict.passed
    lenient = rule(type="no-regression", max_drop=0.2)
    assert lenient.evaluate(current, QEMU_INVENTORY, baseline).verdict.passed


def test_no_regression_relative_to_generic_ignores_a_board_slower_as_a_whole() -> None:
    """Per round the whole board runs at one speed (shared noise of 20 %); in the current
    run it is 30 % slower throughout, and aesni alone lost another 15 %."""
    rng = random.Random(7)

    def run(aesni: float, generic: float) -> list[Measurement]:
        machine = [rng.lognormvariate(0.0, 0.2) for _ in range(10)]
        return [
            measure("cbc-aes-aesni", 4096, 0, samples=[aesni * m for m in machine]),
            measure("cbc(aes-generic)", 4096, 0, samples=[generic * m for m in machine]),
        ]

    baseline = Results(measurements=run(11.5, 9.8))
    slower_board = run(11.5 * 0.7, 9.8 * 0.7)
    relative = rule(type="no-regression", relative_to="cbc(aes-generic)", driver="cbc-aes-aesni")
    assert relative.relative_to == "cbc(aes-generic)"
    assert relative.evaluate(slower_board, QEMU_INVENTORY, baseline).verdict.passed
    slower_aesni = run(11.5 * 0.7 * 0.85, 9.8 * 0.7)
    outcome = relative.evaluate(slower_aesni, QEMU_INVENTORY, baseline)
    assert not outcome.verdict.passed
    assert "cbc-aes-aesni (afalg) 1.173x -> 0.997x cbc(aes-generic) (-15.0%)" in (
        outcome.verdict.message
    )
    # without its reference in the run there is nothing to be relative to
    aesni_only = [m for m in slower_aesni if m.driver == "cbc-aes-aesni"]
    outcome = relative.evaluate(aesni_only, QEMU_INVENTORY, baseline)
    assert not outcome.verdict.passed
    assert "with cbc(aes-generic) measured beside it" in outcome.verdict.message


def test_no_regression_without_baseline_or_matches_fails() -> None:
    regression_rule = rule(type="no-regression")
    outcome = regression_rule.evaluate(qemu_measurements(), QEMU_INVENTORY, None)
    assert not outcome.verdict.passed and "no baseline" in outcome.verdict.message
    outcome = regression_rule.evaluate(qemu_measurements(), QEMU_INVENTORY, Results())
    assert (
        not outcome.verdict.passed
        and "no measurement matches the baseline" in outcome.verdict.message
    )


def test_evaluate_rules_in_order() -> None:
    rules = rules_from_list(
        [
            {
                "type": "hw-beats-sw",
                "algorithm": "cbc(aes)",
                "hw": "offload",
                "sw": "generic",
                "block_sizes": ">=64K",
            },
            {"type": "winner-fastest", "algorithm": "cbc(aes)"},
            {"type": "no-regression"},
        ],
        "qemu.toml",
    )
    measurements = qemu_measurements()
    outcomes = evaluate_rules(
        rules, measurements, QEMU_INVENTORY, Results(measurements=measurements)
    )
    assert [outcome.verdict.passed for outcome in outcomes] == [True, False, True]


# --- findings without rules ------------------------------------------------------------------


def test_winner_not_fastest_findings_on_the_qemu_board() -> None:
    (finding,) = winner_not_fastest_findings(qemu_measurements(), QEMU_INVENTORY)
    assert finding.kind == "winner-not-fastest"
    assert finding.detail == (
        "cbc(aes) [afalg, 128-bit key, encrypt]: winner cbc-aes-aesni (priority 400) "
        "is slower than another driver: 0.88x cbc(aes-generic) at 16 B, "
        "0.67x virtio_crypto_aes_cbc at 65536 B"
    )
    assert [point["block_size"] for point in finding.extra["points"]] == [16, 65536]


def test_no_winner_finding_when_the_winner_is_fastest() -> None:
    speeds = {"cbc-aes-aesni": {16: 1.0, 4096: 20.0}, "cbc(aes-generic)": {16: 0.99, 4096: 9.8}}
    assert winner_not_fastest_findings(qemu_measurements(speeds), QEMU_INVENTORY) == []


def test_hw_loses_to_sw_findings_for_every_hardware_driver() -> None:
    findings = hw_loses_to_sw_findings(qemu_measurements(), QEMU_INVENTORY)
    details = sorted(finding.detail for finding in findings)
    assert details == [
        "cbc(aes) [afalg, 128-bit key, encrypt]: cpu-accel cbc-aes-aesni is slower than "
        "generic cbc(aes-generic) at 16 B (0.88x at 16 B)",
        "cbc(aes) [afalg, 128-bit key, encrypt]: offload virtio_crypto_aes_cbc is slower than "
        "cpu-accel cbc-aes-aesni at 16, 4096 B (0.43x at 16 B)",
        "cbc(aes) [afalg, 128-bit key, encrypt]: offload virtio_crypto_aes_cbc is slower than "
        "generic cbc(aes-generic) at 16, 4096 B (0.38x at 16 B)",
    ]
    assert {finding.kind for finding in findings} == {"hw-loses-to-sw"}


def test_crossover_findings_for_every_pair() -> None:
    findings = {
        f.detail.split(": ", 1)[1]: f
        for f in crossover_findings(qemu_measurements(), QEMU_INVENTORY)
    }
    assert set(findings) == {
        "offload virtio_crypto_aes_cbc reaches 1.0x generic cbc(aes-generic) from 65536 B on",
        "cpu-accel cbc-aes-aesni reaches 1.0x generic cbc(aes-generic) from 4096 B on",
        # the CPU's own AES instructions are the software path an offload engine must beat
        "offload virtio_crypto_aes_cbc reaches 1.0x cpu-accel cbc-aes-aesni from 65536 B on",
    }
    assert {f.kind for f in findings.values()} == {"crossover"}
    virtio = findings[
        "offload virtio_crypto_aes_cbc reaches 1.0x generic cbc(aes-generic) from 65536 B on"
    ]
    assert virtio.extra["crossover"] == 65536
    assert [pair[0] for pair in virtio.extra["ratios"]] == [16, 4096, 65536]


def test_crossover_findings_never_and_always() -> None:
    never = {
        "virtio_crypto_aes_cbc": {16: 0.01, 4096: 1.0},
        "cbc(aes-generic)": {16: 0.08, 4096: 9.8},
    }
    (finding,) = crossover_findings(qemu_measurements(never), QEMU_INVENTORY)
    assert finding.extra["crossover"] is None
    assert finding.detail.endswith(
        "never reaches 1.0x generic cbc(aes-generic) (largest size 4096 B: 0.10x)"
    )
    always = {"cbc-aes-aesni": {16: 1.0, 4096: 20.0}, "cbc(aes-generic)": {16: 0.5, 4096: 9.8}}
    (finding,) = crossover_findings(qemu_measurements(always), QEMU_INVENTORY)
    assert finding.detail.endswith(
        "is >= 1.0x generic cbc(aes-generic) at every measured size (from 16 B)"
    )


def test_findings_ignore_tool_output_without_drivers() -> None:
    tool_output = [
        Measurement("openssl", "aes-128-cbc", None, 128, size, "encrypt", 1e6)
        for size in (16, 64, 8192)
    ]
    assert hw_loses_to_sw_findings(tool_output, QEMU_INVENTORY) == []
    assert crossover_findings(tool_output, QEMU_INVENTORY) == []
    assert winner_not_fastest_findings(tool_output, QEMU_INVENTORY) == []
