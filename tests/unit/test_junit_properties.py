# SPDX-License-Identifier: MIT
"""JUnit property names and values (pure), on the recorded QEMU board run."""

from __future__ import annotations

from pathlib import Path

from pytest_hwcrypto.model.results import Finding, load_results
from pytest_hwcrypto.report.junit_properties import (
    case_properties,
    finding_properties,
    measurements_of_test,
    suite_properties,
)

QEMU = load_results(Path(__file__).resolve().parent.parent / "data" / "board_qemu_results.json")


def test_a_test_with_an_algorithm_is_about_that_algorithm_of_its_suites_sources() -> None:
    about = measurements_of_test(
        QEMU.measurements, len(QEMU.measurements), ["throughput"], "cbc(aes)"
    )
    assert {m.driver for m in about if m.source == "afalg"} == {
        "cbc-aes-aesni",
        "virtio_crypto_aes_cbc",
        "cbc(aes-generic)",
    }
    assert {m.source for m in about} == {"afalg", "tcrypt"}  # both the throughput suite's
    assert measurements_of_test(QEMU.measurements, 0, ["openssl"], "cbc(aes)") == []


def test_a_test_without_one_is_about_what_it_recorded() -> None:
    assert (
        measurements_of_test(QEMU.measurements, 10, ["throughput"], None) == QEMU.measurements[10:]
    )


def test_ratio_against_the_fastest_generic_at_the_same_size() -> None:
    about = [
        m
        for m in QEMU.measurements
        if m.driver == "virtio_crypto_aes_cbc" and m.block_size == 65536
    ]
    props = dict(case_properties(about, QEMU))
    cell = "hwcrypto.afalg.cbc(aes).128.encrypt.virtio_crypto_aes_cbc.65536"
    generic = next(
        m for m in QEMU.measurements if m.driver == "cbc(aes-generic)" and m.block_size == 65536
    )
    assert props[f"{cell}.ratio"] == f"{about[0].bytes_per_second / generic.bytes_per_second:.2f}"
    assert props["hwcrypto.driver"] == "virtio_crypto_aes_cbc"


def test_values_are_plain_strings_even_for_enum_sources() -> None:
    """xdist's channel refuses enum members in a report's user_properties."""
    from pytest_hwcrypto.model.results import Measurement
    from pytest_hwcrypto.vocabulary import Source

    enum_sourced = Measurement(
        Source.AFALG, "cbc(aes)", "cbc(aes-generic)", 128, 16, "encrypt", 1.0
    )
    props = case_properties([enum_sourced], QEMU)
    assert props and all(type(n) is str and type(v) is str for n, v in props)


def test_suite_and_finding_names() -> None:
    assert suite_properties({"kernel": "6.1.176", "board": "uml", "profile": None}) == [
        ("hwcrypto.run.kernel", "6.1.176"),
        ("hwcrypto.run.board", "uml"),
    ]
    findings = [
        Finding("crossover", "cbc(aes)", "aesni from 1 KiB"),
        Finding("crossover", "cbc(aes)", "engine from 16 KiB"),
        Finding("kernel-warning", "", "WARNING: CPU: 1 PID: 153"),
    ]
    assert [name for name, _ in finding_properties(findings)] == [
        "hwcrypto.finding.crossover.cbc(aes)",
        "hwcrypto.finding.crossover.cbc(aes).2",
        "hwcrypto.finding.kernel-warning.kernel",
    ]
