# SPDX-License-Identifier: MIT
"""history/ingest.py: real results files, real KCIDB output of the project's own writer and
a real LAVA job's cases become runs with their identity and one point per series."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.history.ingest import IngestError, ingest, kind_of
from pytest_hwcrypto.lab import lava_local, lava_results
from pytest_hwcrypto.lab.kcidb import kcidb_data
from pytest_hwcrypto.model.results import Results, load_results
from pytest_hwcrypto.report.lava import Outcomes, case_sets

DATA = Path(__file__).parent.parent / "data"
RECEIVED = "2026-12-07T10:00:00+00:00"
LAVA_LOG = DATA / "lava" / "lava-lab-job-qemu-strict.log"


def raw(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / name).read_text())
    return document


def kcidb_of(results: Results, start_time: str | None = "2026-12-01T08:00:00+00:00") -> Any:
    """The project's own --hwcrypto-kcidb output for a real results file."""
    return kcidb_data(
        results, case_sets(Outcomes(), results), run="20261201T080000-1", start_time=start_time
    )


def lava_cases(with_results_file: bool) -> dict[str, Any]:
    cases = []
    for line in LAVA_LOG.read_text().splitlines():
        level, message = lava_results.parse_log_line(line)
        if level == "results" and isinstance(message, dict):
            cases.append(message)
    outcome = lava_local.RunOutcome(
        finished=True,
        cases=cases,
        results_file=lava_results.results_from_log(LAVA_LOG.read_text())
        if with_results_file
        else None,
        failure_comment=None,
        seconds=1.0,
    )
    return lava_local.cases_document(outcome, "7")


def test_a_results_file_is_one_run_with_a_point_per_measured_cell() -> None:
    [run] = ingest(raw("board_uml_results_main.json"), "main.json", board=None, received=RECEIVED)
    assert run.run.board == "uml"  # the file's own board
    assert run.run.kernel.release == "6.1.176"
    assert (
        run.run.kernel.config_digest
        == raw("board_uml_results_main.json")["kernel"]["config_sha256"]
    )
    assert run.run.plugin_version == "0.1.0"
    assert run.run.started == RECEIVED  # the file has no time of its own
    measurements = load_results(DATA / "board_uml_results_main.json").measurements
    assert len(run.series) == len(
        {
            (m.source, m.algorithm, m.driver, m.key_bits, m.block_size, m.op, m.concurrency)
            for m in measurements
        }
    )
    first = measurements[0]
    series = next(
        s
        for s in run.series
        if s.key.path == first.source
        and s.key.algorithm == first.algorithm
        and s.key.driver == first.driver
        and s.key.key_bits == first.key_bits
        and s.key.op == first.op
        and s.key.block_size == first.block_size
    )
    assert series.points[0].value == first.bytes_per_second
    assert all(len(s.points) == 1 and s.key.board == "uml" for s in run.series)


def test_the_same_content_is_the_same_run_and_another_run_is_another() -> None:
    one = ingest(raw("board_uml_results_1.json"), "a", board="uml", received=RECEIVED)[0].run
    again = ingest(raw("board_uml_results_1.json"), "b", board="uml", received="2027-01-01")[0]
    two = ingest(raw("board_uml_results_2.json"), "c", board="uml", received=RECEIVED)[0].run
    assert again.run.run_id == one.run_id
    assert two.run_id != one.run_id
    # a session's results and the file it wrote are one run (the plugin adds the former)
    session = load_results(DATA / "board_uml_results_1.json")
    from_session = ingest(session.to_json(), "session", board="uml", received=RECEIVED)[0]
    assert from_session.run.run_id == one.run_id


def test_kcidb_output_of_a_real_run_keeps_its_kernel_board_and_cells() -> None:
    results = load_results(DATA / "board_uml_results_main.json")
    [run] = ingest(kcidb_of(results), "uml.kcidb.json", board=None, received=RECEIVED)
    assert run.run.board == "uml"
    assert run.run.kernel.release == "6.1.176"
    assert run.run.kernel.config_digest == results.kernel["config_sha256"]
    assert run.run.started == "2026-12-01T08:00:00+00:00"
    afalg = [s for s in run.series if s.key.path == "afalg"]
    assert afalg and all(s.unit == "bytes/s" for s in afalg)
    cell = next(m for m in results.measurements if m.source == "afalg" and m.block_size)
    spelled = cell.algorithm.replace("(", "_").replace(")", "")
    match = [
        s
        for s in afalg
        if s.key.algorithm == spelled.strip("_")
        and s.key.block_size == cell.block_size
        and s.key.key_bits == cell.key_bits
        and s.key.op == cell.op
    ]
    assert match, f"no series for {cell.algorithm} at {cell.block_size}"
    assert not any(s.key.algorithm.endswith("ratio") for s in run.series)


def test_kcidb_of_two_boards_in_one_file_is_two_runs() -> None:
    uml = kcidb_of(load_results(DATA / "board_uml_results_main.json"))
    qemu_results = load_results(DATA / "board_qemu_results.json")
    qemu_results.environment["board"] = {"kind": "qemu"}
    qemu = kcidb_of(qemu_results)
    merged = {key: uml[key] + qemu[key] for key in ("checkouts", "builds", "tests")}
    runs = ingest({"version": uml["version"], **merged}, "lab.json", board=None, received=RECEIVED)
    assert sorted((r.run.board, r.run.kernel.release) for r in runs) == [
        ("qemu", "6.1.0-57-amd64"),
        ("uml", "6.1.176"),
    ]


def test_another_labs_kcidb_tests_are_series_of_their_path() -> None:
    """What the schema allows beyond our output: git identity on the checkout, KernelCI's
    platform in the environment, any test path with a number."""
    data = kcidb_of(load_results(DATA / "board_uml_results_main.json"))
    data["checkouts"][0].update(git_commit_hash="a" * 40, git_commit_name="v6.1-rc1-3-gaaaa")
    del data["builds"][0]["misc"]
    for test in data["tests"]:
        test["environment"] = {"misc": {"platform": "rk3399-rock-pi-4b"}}
    data["tests"].append(
        {
            **data["tests"][0],
            "id": "mylab:x",
            "path": "ltp.crypto.speed",
            "number": {"value": 3.5, "unit": "s"},
        }
    )
    [run] = ingest(data, "other.json", board=None, received=RECEIVED)
    assert run.run.board == "rk3399-rock-pi-4b"
    assert run.run.kernel.commit == "a" * 40
    assert run.run.kernel.release == "v6.1-rc1-3-gaaaa"
    ltp = next(s for s in run.series if s.key.path == "ltp.crypto.speed")
    assert ltp.unit == "s" and ltp.points[0].value == 3.5


def test_a_lava_job_with_its_results_file_is_a_run_of_that_kernel() -> None:
    [run] = ingest(lava_cases(with_results_file=True), "cases.json", board=None, received=RECEIVED)
    assert run.run.board == "lava-qemu-strict"  # the board profile the job ran with
    assert run.run.kernel.release and run.series
    assert any("(" in s.key.algorithm for s in run.series)  # exact names from the file


def test_lava_cases_alone_name_no_kernel_in_one_line() -> None:
    with pytest.raises(IngestError, match=r"^cases.json: no kernel identity") as error:
        ingest(lava_cases(with_results_file=False), "cases.json", board="qemu", received=RECEIVED)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("document", "board", "message"),
    [
        ({"comparisons": []}, None, r"^f.json: not a run this history reads"),
        ([1, 2], None, r"^f.json: not a run this history reads"),
        ({"schema": "other/2"}, "uml", r"^f.json: unsupported schema 'other/2'"),
        ("no-kernel", "uml", r"^f.json: no kernel identity"),
        ("main", "qemu", r"^f.json: the run is of board 'uml', not 'qemu' \(--board\)"),
        ("plain", None, r"^f.json: the file names no board: say which with --board NAME"),
        ("kcidb-no-kernel", "uml", r"^f.json: no kernel identity for build"),
        ("kcidb-v4", "uml", r"^f.json: KCIDB schema v4.0"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    document: Any, board: str | None, message: str
) -> None:
    if document == "no-kernel":
        document = raw("board_uml_results_1.json")
        document["kernel"] = {}
    elif document == "main":
        document = raw("board_uml_results_main.json")
    elif document == "plain":
        document = raw("board_qemu_results.json")
    elif document in ("kcidb-no-kernel", "kcidb-v4"):
        data = kcidb_of(load_results(DATA / "board_uml_results_1.json"))
        if document == "kcidb-v4":
            data["version"] = {"major": 4, "minor": 0}
        else:
            data["builds"][0]["misc"] = {}
        document = copy.deepcopy(data)
    with pytest.raises(IngestError, match=message) as error:
        ingest(document, "f.json", board=board, received=RECEIVED)
    assert "\n" not in str(error.value)


def test_kinds_are_told_by_content() -> None:
    assert kind_of(raw("board_qemu_results.json")) == "results"
    assert kind_of(kcidb_of(load_results(DATA / "board_qemu_results.json"))) == "kcidb"
    assert kind_of(lava_cases(with_results_file=False)) == "lava"
    assert kind_of({"anything": 1}) is None


def test_kcidb_and_results_of_one_run_have_the_same_cells() -> None:
    """Every measured cell of the results file, depth (`.n32`) included, comes back from
    its KCIDB output; only the spelling of kernel names differs."""
    results = load_results(DATA / "board_uml_results_main.json")
    [from_kcidb] = ingest(kcidb_of(results), "k", board=None, received=RECEIVED)
    [from_file] = ingest(results.to_json(), "r", board=None, received=RECEIVED)

    def cells(run: Any) -> list[str]:
        keys = [s.key for s in run.series]
        depth = [k.concurrency if k.concurrency != 1 else None for k in keys]
        return sorted(str((k.path, k.key_bits, k.block_size, k.op, n)) for k, n in zip(keys, depth))

    assert len(from_kcidb.series) == len(from_file.series)
    assert cells(from_kcidb) == cells(from_file)
    assert any(s.key.concurrency == 32 for s in from_kcidb.series)


def test_a_file_older_than_the_concurrency_field_joins_the_newer_runs_series() -> None:
    """A results file from before requests in flight were recorded measured one at a time;
    its cells are the same series as a newer file's concurrency 1, not new ones."""
    older = raw("board_uml_results_1.json")
    newer = raw("board_uml_results_main.json")
    assert all("concurrency" not in m for m in older["measurements"])
    assert any(m.get("concurrency") == 1 for m in newer["measurements"])
    (old_run,) = ingest(older, "old.json", board="uml", received=RECEIVED)
    (new_run,) = ingest(newer, "new.json", board="uml", received=RECEIVED)
    old_keys = {series.key for series in old_run.series}
    new_keys = {series.key for series in new_run.series}
    assert {key.concurrency for key in old_keys} == {1}
    assert old_keys <= new_keys
