# SPDX-License-Identifier: MIT
"""`hwcrypto history add`: real results files and the project's own KCIDB output into a
history database; bad files and databases as one line, and nothing added."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.cli.exits import EXIT_OK, EXIT_USAGE
from pytest_hwcrypto.history.store import DEFAULT_DB, Store
from pytest_hwcrypto.lab.kcidb import kcidb_data
from pytest_hwcrypto.model.results import load_results
from pytest_hwcrypto.report.lava import Outcomes, case_sets

DATA = Path(__file__).parent.parent / "data"


def test_add_results_files_then_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "h.sqlite"
    files = [str(DATA / f"board_uml_results_{n}.json") for n in (1, 2)]
    assert main(["history", "add", "--history-db", str(db), "--board", "uml", *files]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all("(board uml, kernel 6.1.176, " in line for line in lines)
    assert all(line.endswith(f"added to {db}") for line in lines)
    assert main(["history", "add", "--history-db", str(db), "--board", "uml", files[0]]) == 0
    assert capsys.readouterr().out.strip().endswith(f"already in {db}")
    with Store(db) as store:
        assert len(store.runs()) == 2


def test_the_default_database_is_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["history", "add", str(DATA / "board_uml_results_main.json")]) == EXIT_OK
    with Store(tmp_path / DEFAULT_DB, create=False) as store:
        assert [run.board for run in store.runs()] == ["uml"]


def test_add_kcidb_output_of_the_project(tmp_path: Path) -> None:
    results = load_results(DATA / "board_uml_results_main.json")
    kcidb = tmp_path / "run.kcidb.json"
    document = kcidb_data(results, case_sets(Outcomes(), results), run="r1")
    kcidb.write_text(json.dumps(document))
    db = tmp_path / "h.sqlite"
    assert main(["history", "add", "--history-db", str(db), str(kcidb)]) == EXIT_OK
    with Store(db) as store:
        [run] = store.runs()
        assert run.board == "uml" and run.kernel.release == "6.1.176"
        assert store.series("uml")


def test_a_bad_file_among_good_ones_adds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.sqlite"
    other = tmp_path / "compare.json"
    shutil.copy(DATA / "verdicts_golden.json", other)
    good = str(DATA / "board_uml_results_1.json")
    code = main(["history", "add", "--history-db", str(db), "--board", "uml", good, str(other)])
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"hwcrypto: error: {other}: ") and err.count("\n") == 1
    assert not db.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "qemu", "board_uml_results_main.json"], "is of board 'uml', not 'qemu'"),
        (["board_qemu_results.json"], "names no board: say which with --board NAME"),
        (["--board", "uml", "missing.json"], "missing.json: cannot read: No such file"),
        (["--board", "uml", "tcrypt_old_kernel.txt"], "history reads: not JSON ("),
    ],
)
def test_bad_input_is_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a if a.startswith("--") or a in ("uml", "qemu") else str(DATA / a) for a in args]
    code = main(["history", "add", "--history-db", str(tmp_path / "h.sqlite"), *argv])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and message in err and err.count("\n") == 1


def test_an_unusable_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "no-such-dir" / "h.sqlite"
    code = main(
        ["history", "add", "--history-db", str(db), str(DATA / "board_uml_results_main.json")]
    )
    err = capsys.readouterr().err
    assert code == EXIT_USAGE and err.startswith(f"hwcrypto: error: {db}: cannot open")
