# SPDX-License-Identifier: MIT
"""Operations per second as a unit of measurement: carried by the results file and its
schema, refused when unknown, and shown as op/s (not MiB/s) by the summary."""

from __future__ import annotations

import jsonschema
import pytest

from pytest_hwcrypto.model.results import Measurement, Results, ResultsError, json_schema
from pytest_hwcrypto.report.summary import Context, summary_lines
from pytest_hwcrypto.report.throughput_table import throughput_tables
from tests.factories import measurement


def signatures(driver: str, rate: float) -> Measurement:
    return measurement(
        driver,
        rate,
        source="keyctl",
        algorithm="pkcs1pad(rsa,sha256)",
        key_bits=2048,
        block_size=None,
        op="sign",
        unit="op/s",
    )


def test_the_unit_survives_the_results_file_and_fits_its_schema() -> None:
    document = Results(measurements=[signatures("rsa-generic", 412.5)]).to_json()
    jsonschema.validate(document, json_schema())
    (item,) = document["measurements"]
    assert item["unit"] == "op/s"
    assert Measurement.from_json(item, "m[0]").unit == "op/s"
    # A byte rate says nothing about its unit, as every file before units did.
    assert "unit" not in measurement("cbc(aes-generic)", 1.0).to_json()


def test_an_unknown_unit_is_one_error_naming_the_place() -> None:
    bad = {**signatures("rsa-generic", 1.0).to_json(), "unit": "ops"}
    with pytest.raises(ResultsError, match=r"m\[3\]: 'unit' must be one of B/s, op/s"):
        Measurement.from_json(bad, "m[3]")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "pytest-hwcrypto/1", "measurements": [bad]}, json_schema())


def test_the_summary_shows_operations_per_second_as_they_are() -> None:
    results = Results(
        measurements=[signatures("rsa-generic", 412.5), signatures("virtio-crypto-rsa", 38.04)]
    )
    (table,) = throughput_tables(results)
    assert table.shown_unit == "op/s"
    text = "\n".join(line.text for line in summary_lines(results, Context(width=None)))
    assert "keyctl pkcs1pad(rsa,sha256) 2048-bit sign: op/s by block size" in text
    assert "412" in text and "38" in text
    assert "MiB/s" not in text
