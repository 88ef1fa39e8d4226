# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_hwcrypto.model.results import Finding, Measurement, ResultsError, Verdict, load_results
from pytest_hwcrypto.report.recorder import ResultsRecorder

MEASUREMENT = {
    "source": "afalg",
    "algorithm": "cbc(aes)",
    "driver": "cbc(aes-generic)",
    "key_bits": 128,
    "block_size": 4096,
    "op": "encrypt",
    "bytes_per_second": 1.5e7,
}


def test_worker_parts_merge_into_one_file(tmp_path: Path) -> None:
    controller = ResultsRecorder(kernel={"release": "6.1.176", "machine": "x86_64"})
    worker = ResultsRecorder(kernel={"release": "6.1.176", "machine": "x86_64"})
    worker.add_measurement(Measurement.from_json(MEASUREMENT, "test"))
    worker.add_finding(Finding("winner-not-fastest", "aes", "aes-fixed-time is 0.5x aes-generic"))
    worker.add_verdict(Verdict("hw-beats-sw cbc(aes)", True, "ok"))
    controller.add_finding(
        Finding("winner-not-fastest", "aes", "aes-fixed-time is 0.5x aes-generic")
    )
    controller.merge(worker.to_json())
    path = tmp_path / "out" / "results.json"
    controller.write(path)
    results = load_results(path)
    assert results.kernel["release"] == "6.1.176"
    assert [m.driver for m in results.measurements] == ["cbc(aes-generic)"]
    assert len(results.findings) == 1, "the same finding from two workers is kept once"
    assert [v.rule for v in results.verdicts] == ["hw-beats-sw cbc(aes)"]
    assert json.loads(path.read_text())["schema"] == "pytest-hwcrypto/1"


def test_an_invalid_measurement_is_refused_at_write(tmp_path: Path) -> None:
    recorder = ResultsRecorder()
    measurement = Measurement.from_json(MEASUREMENT, "test")
    measurement.bytes_per_second = float("nan")  # a bug in a measuring suite
    recorder.add_measurement(measurement)
    with pytest.raises(ResultsError, match="bytes_per_second"):
        recorder.write(tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def _entry(driver: str, winner: bool) -> dict[str, object]:
    return {"name": "cbc(aes)", "driver": driver, "type": "skcipher", "winner": winner}


def test_a_later_inventory_adds_instances_created_while_measuring() -> None:
    recorder = ResultsRecorder(inventory=[_entry("cbc(aes-fixed-time)", True)])
    recorder.update_inventory(
        [_entry("cbc(aes-fixed-time)", True), _entry("cbc(aes-generic)", False)]
    )
    assert [e["driver"] for e in recorder.inventory] == ["cbc(aes-fixed-time)", "cbc(aes-generic)"]


def test_merged_inventories_are_the_union_with_the_newer_reading_winning() -> None:
    controller = ResultsRecorder(inventory=[_entry("cbc(aes-fixed-time)", True)])
    worker = ResultsRecorder(
        inventory=[_entry("cbc(aes-fixed-time)", False), _entry("cbc-aes-aesni", True)]
    )
    controller.merge(worker.to_json())
    assert {e["driver"]: e["winner"] for e in controller.inventory} == {
        "cbc(aes-fixed-time)": False,
        "cbc-aes-aesni": True,
    }
