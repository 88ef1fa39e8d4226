# SPDX-License-Identifier: MIT
"""--hwcrypto-history-gate: after the session's run is added, its board's history is
judged as `hwcrypto history detect` judges it; a drop beyond --hwcrypto-max-drop that the
newest kernel makes a change point fails the session, naming the series and the range.

The history is real: one UML run (tests/data/board_uml_results_1.json) per kernel, its
cbc(aes-generic) 64 KiB figure replaced by one boot's from the real A/B extract
(tests/data/history/README.md); the session adds the next boot's figure as its own run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto import run_output
from pytest_hwcrypto.history.ingest import from_results
from pytest_hwcrypto.history.store import Store
from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.run import build_run

pytest_plugins = ["pytester"]
pytest.importorskip("otava", reason="the history extra (apache-otava) is not installed")
# Imported here, once: pytester's in-process sessions drop the modules they imported when
# they end, and numpy (under Otava and scipy) cannot be imported a second time in a process.
pytest.importorskip("otava.analysis")
pytest.importorskip("scipy.stats")

DATA = Path(__file__).resolve().parent.parent / "data"
TRIALS: dict[str, Any] = json.loads((DATA / "history" / "uml_ab_pairs_extract.json").read_text())
ALL_SLOWER = TRIALS["round5/all10/1"]["series"]["cbc(aes-generic)"]

SUITE = """
import pytest
from pytest_hwcrypto.model.results import Measurement

pytestmark = pytest.mark.hwcrypto_throughput


def test_measures(hwcrypto_results):
    hwcrypto_results.add_measurement(Measurement(
        "afalg", "cbc(aes)", "cbc(aes-generic)", 128, 65536, "encrypt", {value},
        driver_class="generic"))
"""


def run_document(release: str, value: float, board: str | None = None) -> dict[str, Any]:
    """The real UML run with only its cbc(aes-generic) 64 KiB figure, set to ``value``."""
    template = json.loads((DATA / "board_uml_results_1.json").read_text())
    [measurement] = [
        m
        for m in template["measurements"]
        if m["driver"] == "cbc(aes-generic)" and m["block_size"] == 65536
    ]
    document = dict(template)
    document["kernel"] = {**template["kernel"], "release": release}
    document["measurements"] = [{**measurement, "bytes_per_second": value}]
    if board is not None:  # as a board session's results file names its board
        document["environment"] = {"board": {"kind": board}}
    return document


def build_history(db: Path, values: list[int], board: str = "host") -> None:
    """One run per kernel of ``board`` (the file names none), in release order older
    than any host kernel (5.10.x)."""
    with Store(db) as store:
        for n, value in enumerate(values):
            results = Results.from_json(run_document(f"5.10.{100 + n}", value), f"run{n}")
            store.add(from_results(results, f"run{n}", board=board, received="2026-12-07T00:00Z"))


def run_gated(pytester: pytest.Pytester, db: Path, value: int) -> pytest.RunResult:
    pytester.makepyfile(test_suite=SUITE.format(value=value))
    return pytester.runpytest(
        "--hwcrypto",
        "test_suite.py",
        f"--hwcrypto-history={db}",
        "--hwcrypto-history-gate",
        "--hwcrypto-max-drop=5%",
        "-p",
        "no:xdist",
    )


def test_a_drop_at_the_newest_kernel_fails_the_session(pytester: pytest.Pytester) -> None:
    # 16 kernels at the old level, two at the new: the third run of the new level is where
    # the detector names the change (as `hwcrypto history detect`'s own test shows)
    db = pytester.path / "history.sqlite"
    build_history(db, ALL_SLOWER["a"] + ALL_SLOWER["b"][:2])
    result = run_gated(pytester, db, ALL_SLOWER["b"][2])
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "hwcrypto: history gate (board host, max-drop 5%): FAILED, 1 series dropped *",
            "  afalg cbc(aes) cbc(aes-generic) 128-bit 65536 B encrypt*: -*% *, "
            "5.10.115 (last good) -> 5.10.116 (first bad)",
        ]
    )


def test_a_newest_kernel_at_the_old_level_passes(pytester: pytest.Pytester) -> None:
    db = pytester.path / "history.sqlite"
    build_history(db, ALL_SLOWER["a"][:-1])
    result = run_gated(pytester, db, ALL_SLOWER["a"][-1])
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["hwcrypto: history gate (board host, max-drop 5%): passed, 1 series judged, no new drop"]
    )


def test_a_history_too_short_says_how_many_more_runs_and_passes(
    pytester: pytest.Pytester,
) -> None:
    db = pytester.path / "history.sqlite"
    build_history(db, ALL_SLOWER["a"][:1])
    result = run_gated(pytester, db, ALL_SLOWER["a"][1])
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["hwcrypto: history gate (board host, max-drop 5%): history too short, needs 2 more runs *"]
    )


@pytest.mark.parametrize(
    ("newest", "fails"), [(ALL_SLOWER["b"][2], True), (ALL_SLOWER["a"][0], False)]
)
def test_under_a_board_the_host_judges_the_boards_run(
    tmp_path: Path, newest: int, fails: bool
) -> None:
    """--hwcrypto-vm: the host session adds the board's results file (plugin.py's
    pytest_cmdline_main) and judges the gate there; True fails the session."""
    db = tmp_path / "history.sqlite"
    build_history(db, ALL_SLOWER["a"] + ALL_SLOWER["b"][:2], board="uml")
    results = tmp_path / "board-results.json"
    results.write_text(json.dumps(run_document("5.10.200", float(newest), board="uml")))
    run = build_run(
        enabled=True,
        cli_values={"history": str(db), "history_gate": True, "max_drop": "5%"},
        environ={},
        ini_values={},
    )
    out = io.StringIO()
    assert run_output.add_board_run_to_history(run, results, out) is fails
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("hwcrypto: run ") and "(board uml, kernel 5.10.200" in lines[0]
    if fails:
        assert lines[1].startswith("hwcrypto: history gate (board uml, max-drop 5%): FAILED")
        assert lines[2].endswith("5.10.115 (last good) -> 5.10.116 (first bad)")
    else:
        assert lines[1:] == [
            "hwcrypto: history gate (board uml, max-drop 5%): passed, 1 series judged, no new drop"
        ]


def test_a_gate_without_a_history_is_one_usage_line(pytester: pytest.Pytester) -> None:
    """A gate with nothing to judge would pass every session without a word."""
    result = pytester.runpytest_subprocess("--hwcrypto", "--hwcrypto-history-gate")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--hwcrypto-history-gate (command line): needs --hwcrypto-history=DB*"]
    )
