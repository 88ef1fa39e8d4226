# SPDX-License-Identifier: MIT
"""The JSON Schemas shipped with the package hold for what the project writes and reads:
recorded board results, `hwcrypto parse --json` of real tool output, `hwcrypto compare
--json`, and a results file with the run's environment."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_hwcrypto import cli
from pytest_hwcrypto.model.results import (
    COMPARE_SCHEMA_FILE,
    Measurement,
    Results,
    Verdict,
    json_schema,
    load_results,
)

DATA = Path(__file__).resolve().parent.parent / "data"
RAW = DATA / "paste" / "raw"
RECORDED_RESULTS = sorted(
    path for path in DATA.glob("*.json") if '"schema"' in path.read_text()[:200]
)


def validator(name: str | None = None) -> jsonschema.Draft202012Validator:
    schema = json_schema(name) if name else json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(document: Any, name: str | None = None) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(document)]


def run_cli(*argv: str) -> Any:
    out = io.StringIO()
    with redirect_stdout(out):
        cli.main(list(argv))
    return json.loads(out.getvalue())


def test_recorded_results_are_there() -> None:
    names = {path.name for path in RECORDED_RESULTS}
    assert {"board_uml_results_1.json", "board_qemu_results.json"} <= names


@pytest.mark.parametrize("path", RECORDED_RESULTS, ids=lambda path: path.name)
def test_recorded_board_results_validate(path: Path) -> None:
    document = json.loads(path.read_text())
    assert errors(document) == []
    # and what the model writes back from them
    assert errors(load_results(path).to_json()) == []


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("cryptsetup-benchmark", "uml_cryptsetup_aes_generic.txt"),
        ("cryptsetup-benchmark", "qemu_cryptsetup.txt"),
        ("openssl-speed", "openssl_evp.txt"),
        ("openssl-speed", "openssl_mr.txt"),
        ("fio", "fio_loop_aes_generic.txt"),
        ("fio", "fio_slow_aes_ti_json.txt"),
        ("tcrypt", "qemu_tcrypt_sha1.txt"),
        ("auto", "openssl_multi.txt"),
    ],
)
def test_parse_output_validates(tool: str, name: str) -> None:
    document = run_cli("parse", tool, str(RAW / name), "--json")
    assert document["measurements"]
    assert errors(document) == []


def test_compare_output_validates_and_takes_a_detectable_drop() -> None:
    document = run_cli(
        "compare", str(DATA / "compare_baseline.json"), str(DATA / "compare_current.json"), "--json"
    )
    assert document["comparisons"]
    assert errors(document, COMPARE_SCHEMA_FILE) == []
    document["comparisons"][0]["detectable_drop"] = 0.23
    assert errors(document, COMPARE_SCHEMA_FILE) == []
    document["comparisons"][0]["detectable_drop"] = -0.1
    assert errors(document, COMPARE_SCHEMA_FILE)


def test_environment_and_detectable_drop_validate_and_bad_values_do_not() -> None:
    results = Results(
        kernel={"release": "6.1.176", "machine": "x86_64", "config_sha256": "ab" * 32},
        measurements=[
            Measurement("afalg", "cbc(aes)", "cbc(aes-generic)", 128, 16, "encrypt", 1.0)
        ],
        verdicts=[Verdict("no-regression cbc(aes)", True, "ok", {"detectable_drop": 0.23})],
        environment={
            "board": {"kind": "uml", "profile": None, "profile_name": None},
            "cpu": {"model": "UML", "flags": ["aes", "avx2"], "cpus": 1},
            "tools": {"cryptsetup": "2.6.1", "openssl": "3.0.19", "fio": "3.33", "lxc": None},
            "plugin_version": "0.1.0",
            "seed": {"value": 12345, "source": "random"},
            "future_key": {"kept": True},
        },
    )
    document = results.to_json()
    assert errors(document) == []
    bad = json.loads(json.dumps(document))
    bad["measurements"][0]["bytes_per_second"] = -1
    bad["environment"]["tools"].pop("lxc")
    bad["kernel"]["config_sha256"] = "not-a-digest"
    found = errors(bad)
    assert len(found) == 3, found
    assert errors({"measurements": []}) == ["[]: 'schema' is a required property"]


def test_hwrng_sources_and_their_measurements_validate() -> None:
    from pytest_hwcrypto.kernel.hwrng import parse_hw_random

    state = parse_hw_random("virtio_rng.0 hwcrypto_test_rng\n", "virtio_rng.0\n", "1000\n")
    results = Results(
        measurements=[Measurement("hwrng", "hwrng", "virtio_rng.0", None, 4096, "read", 5e6)],
        extra={"hwrng": state.to_json()},
    )
    document = results.to_json()
    assert errors(document) == []
    assert Results.from_json(document, "r.json").extra["hwrng"]["current"] == "virtio_rng.0"
    document["hwrng"]["quality"] = 2048  # above the kernel's scale
    document["hwrng"]["available"] = "virtio_rng.0"  # not a list
    assert len(errors(document)) == 2


def test_an_extra_named_like_an_unset_field_is_not_read_back_as_that_field() -> None:
    """An extra key named like a field stood in for it where the field was None: the rng
    suite's extra "unit": "bytes/s" made the session's own results file unreadable
    (units are op/s or B/s)."""
    from pytest_hwcrypto.model.results import Measurement, Results

    measurement = Measurement(
        "hwrng",
        "hwrng",
        "virtio_rng.0",
        None,
        4096,
        "generate",
        1.0,
        extra={"unit": "bytes/s", "reads": 1},
    )
    document = Results(measurements=[measurement]).to_json()
    (read,) = Results.from_json(document, "round trip").measurements
    assert read.unit is None and read.extra == {"reads": 1}
