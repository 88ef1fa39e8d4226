# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.model.results import (
    SCHEMA,
    Finding,
    Measurement,
    Results,
    ResultsError,
    Verdict,
    load_results,
    read_json_object,
    save_results,
)


def full_results() -> Results:
    return Results(
        kernel={"release": "6.1.0-27-amd64", "machine": "x86_64"},
        inventory=[
            {
                "name": "cbc(aes)",
                "driver": "virtio_crypto_aes_cbc",
                "module": "virtio_crypto",
                "priority": 150,
                "type": "skcipher",
                "class": "offload",
                "selftest": "passed",
                "winner": True,
            }
        ],
        measurements=[
            Measurement(
                source="afalg",
                algorithm="cbc(aes)",
                driver="virtio_crypto_aes_cbc",
                key_bits=128,
                block_size=65536,
                op="encrypt",
                bytes_per_second=41838182.4,
                samples=[41000000.0, 41838182.4, 42500000.0],
                ci_low=41000000.0,
                ci_high=42500000.0,
                cov=0.018,
                cpu_seconds=0.4,
                bytes_per_cpu_second=1.2e8,
                driver_class="offload",
                extra={"seconds": 0.5},
            ),
            Measurement("cryptsetup", "aes-xts", None, 256, None, "encrypt", 1350.0 * 1048576),
        ],
        findings=[
            Finding("crossover", "cbc(aes)", "offload wins from 65536 B", {"crossover": 65536}),
        ],
        verdicts=[
            Verdict("hw-beats-sw cbc(aes)", False, "cbc(aes): offload ... 0.45x", {"waived": False})
        ],
    )


def minimal_document(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "kernel": {"release": "6.1.0", "machine": "x86_64"},
        "inventory": [],
        "measurements": [
            {
                "source": "openssl",
                "algorithm": "aes-128-cbc",
                "driver": None,
                "key_bits": 128,
                "block_size": 16,
                "op": "encrypt",
                "bytes_per_second": 1234.5,
            }
        ],
        "findings": [],
        "verdicts": [],
    }
    document.update(overrides)
    return document


def test_json_round_trip_keeps_everything() -> None:
    results = full_results()
    document = results.to_json()
    assert document["schema"] == SCHEMA
    again = Results.from_json(json.loads(json.dumps(document)), "x.json")
    assert again == results
    assert again.to_json() == document


def test_unset_optional_fields_are_left_out() -> None:
    document = full_results().to_json()["measurements"][1]
    assert document == {
        "source": "cryptsetup",
        "algorithm": "aes-xts",
        "driver": None,
        "key_bits": 256,
        "block_size": None,
        "op": "encrypt",
        "bytes_per_second": 1350.0 * 1048576,
    }


def test_unknown_keys_are_preserved_on_load_and_written_back() -> None:
    document = minimal_document(produced_by="newer-tool 2.0")
    document["measurements"][0]["engine"] = "devcrypto"
    document["kernel"]["cmdline"] = "quiet"
    document["findings"] = [
        {"kind": "afalg-masked", "algorithm": "cbc(aes)", "detail": "d", "x": 1}
    ]
    document["verdicts"] = [{"rule": "r", "passed": True, "message": "m", "waiver": "known"}]
    results = Results.from_json(document, "new.json")
    assert results.extra == {"produced_by": "newer-tool 2.0"}
    assert results.measurements[0].extra == {"engine": "devcrypto"}
    assert results.findings[0].extra == {"x": 1}
    assert results.verdicts[0].extra == {"waiver": "known"}
    assert results.to_json() == document


def test_known_keys_come_first_and_extra_cannot_shadow_them() -> None:
    measurement = Measurement("afalg", "cbc(aes)", "d", 128, 16, "encrypt", 5.0, extra={"z": 1})
    document = measurement.to_json()
    assert document["op"] == "encrypt" and document["z"] == 1
    assert list(document)[:3] == ["source", "algorithm", "driver"]
    shadowing = Measurement("afalg", "cbc(aes)", "d", 128, 16, "encrypt", 5.0, extra={"op": "x"})
    assert shadowing.to_json()["op"] == "encrypt"


def test_missing_optional_sections_and_nullable_keys_are_accepted() -> None:
    document = {
        "schema": SCHEMA,
        "measurements": [
            {"source": "tcrypt", "algorithm": "sha256", "op": "digest", "bytes_per_second": 3}
        ],
    }
    results = Results.from_json(document, "small.json")
    measurement = results.measurements[0]
    assert (measurement.driver, measurement.key_bits, measurement.block_size) == (None, None, None)
    assert measurement.bytes_per_second == 3.0 and isinstance(measurement.bytes_per_second, float)
    assert results.kernel == {} and results.inventory == []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["measurements"][0].pop("op"), "bad.json: measurements[0]: missing key 'op'"),
        (
            lambda d: d["measurements"][0].update(bytes_per_second="fast"),
            "bad.json: measurements[0]: key 'bytes_per_second' must be a finite number >= 0, "
            "got string 'fast'",
        ),
        (
            lambda d: d["measurements"][0].update(bytes_per_second=-1),
            "key 'bytes_per_second' must be a finite number >= 0",
        ),
        (
            lambda d: d["measurements"][0].update(key_bits=True),
            "key 'key_bits' must be an integer or null",
        ),
        (
            lambda d: d["measurements"][0].update(block_size=16.5),
            "key 'block_size' must be an integer or null",
        ),
        (lambda d: d["measurements"][0].update(samples=[1, "x"]), "key 'samples' must be a list"),
        (lambda d: d.update(measurements={}), "bad.json: key 'measurements' must be a list"),
        (
            lambda d: d.update(measurements=[3]),
            "bad.json: measurements[0]: expected an object, got number",
        ),
        (lambda d: d.update(inventory=["x"]), "bad.json: inventory[0]: expected an object"),
        (lambda d: d.update(schema="pytest-hwcrypto/2"), "unsupported schema 'pytest-hwcrypto/2'"),
        (
            lambda d: d.pop("schema"),
            "bad.json: not a pytest-hwcrypto results file (no 'schema' key)",
        ),
        (
            lambda d: d.update(findings=[{"kind": "slow", "algorithm": "a", "detail": "d"}]),
            "bad.json: findings[0]: unknown finding kind 'slow'",
        ),
        (
            lambda d: d.update(verdicts=[{"rule": "r", "passed": "yes", "message": "m"}]),
            "bad.json: verdicts[0]: key 'passed' must be true or false",
        ),
    ],
)
def test_bad_documents_give_one_line_naming_file_and_place(mutate: Any, expected: str) -> None:
    document = minimal_document()
    mutate(document)
    with pytest.raises(ResultsError) as error:
        Results.from_json(document, "bad.json")
    message = str(error.value)
    assert expected in message
    assert message.startswith("bad.json")
    assert "\n" not in message


def test_long_bad_values_are_shortened_in_messages() -> None:
    document = minimal_document()
    document["measurements"][0]["samples"] = ["x" * 500]
    with pytest.raises(ResultsError) as error:
        Results.from_json(document, "bad.json")
    assert len(str(error.value)) < 200


def test_finding_kind_is_checked_on_construction() -> None:
    with pytest.raises(ValueError, match="unknown finding kind 'fast'"):
        Finding("fast", "cbc(aes)", "detail")


def test_save_then_load(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    save_results(full_results(), path)
    assert load_results(path) == full_results()
    assert path.read_text().endswith("\n")
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary left


def test_save_refuses_non_finite_numbers(tmp_path: Path) -> None:
    results = Results(
        measurements=[Measurement("afalg", "a", None, None, 16, "encrypt", float("inf"))]
    )
    with pytest.raises(ValueError):
        save_results(results, tmp_path / "r.json")
    assert list(tmp_path.iterdir()) == []


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "schema": "pytest-hwcrypto/1",\n  "kernel": {,}\n}\n')
    with pytest.raises(ResultsError) as error:
        load_results(path)
    message = str(error.value)
    assert message.startswith(str(path))
    assert "line 3 column 14" in message
    assert "\n" not in message


def test_missing_file_and_wrong_top_level(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=r"nothere\.json: cannot read"):
        load_results(tmp_path / "nothere.json")
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(
        ResultsError, match=r"list\.json: expected a JSON object at the top level, got list"
    ):
        read_json_object(path)


def test_bad_content_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    document = minimal_document()
    del document["measurements"][0]["algorithm"]
    path.write_text(json.dumps(document))
    with pytest.raises(
        ResultsError, match=r"old\.json: measurements\[0\]: missing key 'algorithm'"
    ):
        load_results(path)


def test_sample_stats_of_a_measurement() -> None:
    sampled = Measurement("afalg", "a", "d", 128, 16, "encrypt", 2.0, samples=[1.0, 2.0, 3.0])
    assert sampled.sample_stats().median == 2.0
    assert (sampled.sample_stats().ci_low, sampled.sample_stats().ci_high) == (1.0, 3.0)
    framed = Measurement("afalg", "a", "d", 128, 16, "encrypt", 2.0, ci_low=1.5, ci_high=2.5)
    assert (framed.sample_stats().ci_low, framed.sample_stats().ci_high) == (1.5, 2.5)
    bare = Measurement("openssl", "a", None, 128, 16, "encrypt", 2.0)
    assert bare.sample_stats().ci_low == bare.sample_stats().ci_high == 2.0
