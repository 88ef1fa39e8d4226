# SPDX-License-Identifier: MIT
"""hw_random's sysfs state, switching the current source under the ledger, rngtest's
summary and the judgements of a source's health."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.hwrng import (
    LEDGER_KIND,
    CurrentSource,
    HwrngError,
    parse_hw_random,
    read_hw_random,
    restore_current,
)
from pytest_hwcrypto.ledger import Ledger, sweep
from pytest_hwcrypto.parsers.rngtest import RngtestParseError, parse_rngtest
from pytest_hwcrypto.profile import ProfileError, parse_profile
from pytest_hwcrypto.verdict import rng_health
from pytest_hwcrypto.vocabulary import FindingKind

DATA = Path(__file__).parent.parent / "data" / "rngtest"


def fair_bytes(count: int, seed: int = 47) -> bytes:
    return random.Random(seed).randbytes(count)


def test_parse_as_the_kernel_writes_it() -> None:
    state = parse_hw_random("virtio_rng.0 hwcrypto_test_rng \n", "virtio_rng.0\n", "1000\n")
    assert state.available == ("virtio_rng.0", "hwcrypto_test_rng")
    assert state.current == "virtio_rng.0"
    assert state.quality == 1000
    assert state.describe() == "virtio_rng.0 (current, quality 1000), hwcrypto_test_rng"
    assert state.to_json() == {
        "available": ["virtio_rng.0", "hwcrypto_test_rng"],
        "current": "virtio_rng.0",
        "quality": 1000,
    }


def test_no_source_and_no_quality() -> None:
    state = parse_hw_random("\n", "none\n", None)
    assert (state.available, state.current, state.quality) == ((), None, None)
    assert state.describe() == "no hw_random source"


def fake_sysfs(tmp_path: Path, current: str = "a", selected: str = "0") -> Path:
    directory = tmp_path / "hw_random"
    directory.mkdir()
    (directory / "rng_available").write_text("a b\n")
    (directory / "rng_current").write_text(current + "\n")
    (directory / "rng_quality").write_text("1024\n")
    (directory / "rng_selected").write_text(selected + "\n")
    return directory


def test_missing_directory_is_no_source(tmp_path: Path) -> None:
    assert read_hw_random(tmp_path / "absent").available == ()


def test_switch_is_recorded_and_given_back_to_the_kernel(tmp_path: Path) -> None:
    directory = fake_sysfs(tmp_path)
    ledger = Ledger(tmp_path / "state")
    with CurrentSource(ledger, directory).switched_to("b") as state:
        assert state.current == "b"
        assert [e.kind for e in ledger.entries()] == [LEDGER_KIND]
    # The kernel had chosen "a": the kernel's choice ("" written) is restored.
    assert (directory / "rng_current").read_text() == "\n"
    assert ledger.entries() == []


def test_a_users_choice_is_restored_by_name(tmp_path: Path) -> None:
    directory = fake_sysfs(tmp_path, selected="1")
    with CurrentSource(Ledger(tmp_path / "state"), directory).switched_to("b"):
        pass
    assert (directory / "rng_current").read_text() == "a\n"


def test_unknown_source_names_those_available(tmp_path: Path) -> None:
    directory = fake_sysfs(tmp_path)
    switch = CurrentSource(Ledger(tmp_path / "state"), directory)
    with pytest.raises(HwrngError, match=r"available: a \(current, quality 1024\), b"):
        switch.switched_to("c").__enter__()


def test_a_killed_runs_switch_is_swept(tmp_path: Path) -> None:
    directory = fake_sysfs(tmp_path, selected="1")
    state = tmp_path / "state"
    state.mkdir()
    # What a run killed inside switched_to leaves: the journal of a process that is gone.
    (state / "run-999999999-x.json").write_text(
        '{"pid": 999999999, "started": "1", "boot": "'
        + Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        + '", "entries": [{"kind": "hwrng-current", "key": "k", "undo": '
        + f'{{"current": "a", "directory": "{directory}"}}}}]}}'
    )
    (directory / "rng_current").write_text("b\n")
    done = sweep({LEDGER_KIND: restore_current}, state)
    assert done == ["restored hw_random's current source to a"]
    assert (directory / "rng_current").read_text() == "a\n"


def test_rngtest_summary_of_a_real_run() -> None:
    summary = parse_rngtest((DATA / "host-virtio_rng-200-blocks.txt").read_text())
    assert (summary.successes, summary.failures, summary.blocks) == (200, 0, 200)
    assert summary.bits_received == 4000032
    assert list(summary.failed_by_test) == [
        "Monobit",
        "Poker",
        "Runs",
        "Long run",
        "Continuous run",
    ]


def test_rngtest_without_summary() -> None:
    with pytest.raises(RngtestParseError, match="no rngtest summary"):
        parse_rngtest("rngtest 5\nrngtest: starting FIPS tests...\n")


def test_a_few_failed_blocks_of_good_input_pass() -> None:
    summary = parse_rngtest((DATA / "urandom-2000-blocks.txt").read_text())
    assert summary.failures == 3
    assert rng_health.fips_judgement("urandom", summary).passed


def test_stuck_input_fails_naming_source_and_tests() -> None:
    summary = parse_rngtest((DATA / "zeros-100-blocks.txt").read_text())
    judged = rng_health.fips_judgement("virtio_rng.0", summary)
    assert not judged.passed
    assert judged.message.startswith("virtio_rng.0: rngtest FIPS 140-2: 100 of 100 blocks failed")
    assert "Monobit, Poker, Runs, Long run, Continuous run" in judged.message


def test_fair_bytes_pass_the_output_checks() -> None:
    judged = rng_health.output_judgement("s", fair_bytes(1 << 20))
    assert judged.passed, judged.message


@pytest.mark.parametrize("period", [1, 7, 64, 4096, 100_003])
def test_repeating_output_is_caught_with_its_period(period: int) -> None:
    data = (fair_bytes(period) * (300_000 // period + 2))[:300_000]
    judged = rng_health.output_judgement("src", data)
    assert not judged.passed
    assert f"come again {period} bytes later" in judged.message
    assert judged.message.startswith("src: ")


def test_repeats_that_start_late_are_caught() -> None:
    data = fair_bytes(100_000) + fair_bytes(1000, seed=1) * 200
    assert rng_health.repeat_period(data) is not None


def test_stuck_bits_are_named() -> None:
    data = bytearray(fair_bytes(1 << 16))
    for index in range(0, len(data), 4):
        data[index] |= 0x01  # bit 0 of every word stuck at 1
        data[index + 3] &= 0x7F  # bit 31 stuck at 0
    assert rng_health.stuck_bits(bytes(data)) == [(0, 1), (31, 0)]
    assert "bit 0=1, bit 31=0" in rng_health.output_judgement("s", bytes(data)).message


def test_uncredited_source_is_a_failure() -> None:
    assert not rng_health.credit_judgement("s", 0).passed
    assert rng_health.credit_judgement("s", 1000).passed
    assert rng_health.credit_judgement("s", None).passed


def test_expected_source() -> None:
    assert rng_health.expected_source_judgement("virtio_rng.*", "b.toml", ["virtio_rng.0"]).passed
    missing = rng_health.expected_source_judgement("virtio_rng.*", "b.toml:3", ["hw_random"])
    assert not missing.passed
    assert missing.message == "b.toml:3: expected a hw_random source virtio_rng.*, found: hw_random"


def test_each_judgement_says_its_finding_kind() -> None:
    stuck = parse_rngtest((DATA / "zeros-100-blocks.txt").read_text())
    assert rng_health.fips_judgement("s", stuck).kind is FindingKind.HWRNG_UNHEALTHY
    repeating = fair_bytes(1000) * 300
    assert rng_health.output_judgement("s", repeating).kind is FindingKind.HWRNG_UNHEALTHY
    assert rng_health.credit_judgement("s", 0).kind is FindingKind.HWRNG_NOT_CREDITED
    missing = rng_health.expected_source_judgement("virtio_rng.*", "b.toml", [])
    assert missing.kind is FindingKind.HWRNG_MISSING


def test_profile_hwrng_expectation(tmp_path: Path) -> None:
    text = (
        '[board]\nname = "b"\n[[expect]]\nhwrng = "virtio_rng.*"\n'
        '[[expect]]\nalgorithm = "x"\ndriver = "y"\n'
    )
    profile = parse_profile(text, tmp_path / "b.toml")
    assert [e.pattern for e in profile.hwrngs] == ["virtio_rng.*"]
    assert profile.hwrngs[0].matches("virtio_rng.0")
    assert [e.algorithm for e in profile.expectations] == ["x"]


def test_profile_hwrng_with_an_algorithm_key_is_refused(tmp_path: Path) -> None:
    text = '[board]\nname = "b"\n[[expect]]\nhwrng = "a"\nalgorithm = "x"\n'
    with pytest.raises(ProfileError, match=r"b.toml:5: \[expect #1\] algorithm: unknown key"):
        parse_profile(text, tmp_path / "b.toml")
