# SPDX-License-Identifier: MIT
"""`hwcrypto history detect` (cli/history/detect.py) on series built from real boots.

Until the store lands, the series come through ``run``'s reader seam; the values are
real UML boots (tests/data/history/README.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.cli.exits import EXIT_FAIL, EXIT_OK
from pytest_hwcrypto.cli.history import detect
from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity, Series, SeriesKey
from pytest_hwcrypto.usage import UsageError

pytest.importorskip("otava", reason="the history extra (apache-otava) is not installed")

EXTRACT = Path(__file__).resolve().parent.parent / "data" / "history" / "uml_ab_pairs_extract.json"
TRIALS: dict[str, Any] = json.loads(EXTRACT.read_text())


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    detect.add_parser(parser.add_subparsers())
    return parser.parse_args(["detect", *argv])


def series(
    trial: str,
    name: str,
    board: str = "uml",
    b_runs: int | None = None,
    commits: list[str] | None = None,
) -> Series:
    values = TRIALS[trial]["series"][name]
    flat = values["a"] + values["b"][:b_runs]
    driver = name[len("cbc(") : -1]
    points = []
    for n, value in enumerate(flat):
        commit = commits[n] if commits else None
        kernel = KernelIdentity(release=f"6.1.{100 + n}", commit=commit)
        run = RunIdentity(f"{board}{n}", board, kernel, "0.1.0", f"2026-12-07T00:{n:02d}:00Z")
        points.append(Point(run=run, value=float(value)))
    key = SeriesKey(board, "afalg", "cbc(aes)", driver, 128, 65536, "encrypt", None)
    return Series(key, points=points)


def reader(*made: Series) -> detect.SeriesReader:
    def read(history_db: str | None, board: str | None) -> list[Series]:
        return list(made)

    return read


def test_a_drop_at_the_newest_kernel_fails(capsys: pytest.CaptureFixture[str]) -> None:
    # round5/all10/1's aes-generic: the detector names the drop after 3 runs of the new level
    newest = series("round5/all10/1", "cbc(aes-generic)", b_runs=3)
    assert detect.run(parse("--max-drop", "5%"), reader(newest)) == EXIT_FAIL
    out = capsys.readouterr().out
    assert out.startswith("board uml: 1 series, 1 change points\n")
    assert "6.1.115 -> 6.1.116" in out and "FAIL" in out and "(new with the newest kernel)" in out


def test_an_older_drop_is_reported_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    older = series("round5/all10/1", "cbc(aes-generic)")
    assert detect.run(parse(), reader(older)) == EXIT_OK
    out = capsys.readouterr().out
    assert "6.1.115 -> 6.1.116" in out and "FAIL" not in out


def test_a_drop_within_max_drop_passes_at_the_newest_kernel(
    capsys: pytest.CaptureFixture[str],
) -> None:
    newest = series("round5/all10/1", "cbc(aes-generic)", b_runs=3)
    assert detect.run(parse("--max-drop", "50%"), reader(newest)) == EXIT_OK
    assert "within max-drop" in capsys.readouterr().out


def test_a_table_per_board_and_short_series_say_what_they_need(
    capsys: pytest.CaptureFixture[str],
) -> None:
    uml = series("round5/aa/2", "cbc(aes-generic)")
    qemu = series("round5/aa/2", "cbc(aes-fixed-time)", board="qemu")
    qemu.points = qemu.points[:2]
    assert detect.run(parse(), reader(uml, qemu)) == EXIT_OK
    out = capsys.readouterr().out
    assert out.index("board qemu:") < out.index("board uml:")
    assert "needs 2 more runs of this series" in out
    assert "board uml: 1 series, 0 change points\n  1 series judged: no change point" in out


def test_board_picks_one_board(capsys: pytest.CaptureFixture[str]) -> None:
    uml = series("round5/aa/2", "cbc(aes-generic)")
    qemu = series("round5/all10/1", "cbc(aes-generic)", board="qemu", b_runs=3)
    assert detect.run(parse("--board", "uml"), reader(uml, qemu)) == EXIT_OK
    assert "qemu" not in capsys.readouterr().out


def test_emit_ab_writes_the_pair_and_the_bisect_range(tmp_path: Path) -> None:
    commits = [f"{n:040x}" for n in range(1, 40)]
    newest = series("round5/all10/1", "cbc(aes-generic)", b_runs=3, commits=commits)
    out = tmp_path / "ab.json"
    assert detect.run(parse("--emit-ab", str(out)), reader(newest)) == EXIT_FAIL
    emitted = json.loads(out.read_text())
    good, bad = commits[15], commits[16]
    assert emitted["good"]["commit"] == good and emitted["bad"]["commit"] == bad
    assert (
        emitted["git_bisect_start"]
        == f"git bisect start --term-old fast --term-new slow {bad} {good}"
    )
    assert emitted["ab"][:2] == ["hwcrypto", "ab"]
    assert "--block-sizes" in emitted["ab"] and "65536" in emitted["ab"]


def test_emit_ab_without_a_drop_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ab.json"
    unchanged = series("round5/aa/2", "cbc(aes-generic)")
    assert detect.run(parse("--emit-ab", str(out)), reader(unchanged)) == EXIT_OK
    assert not out.exists()
    assert f"--emit-ab {out}: no drop beyond max-drop, not written" in capsys.readouterr().out


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def test_repo_orders_by_commits_and_names_what_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(tmp_path, "init", "-q")
    commits = []
    for n in range(19):
        git(tmp_path, "commit", "-q", "--allow-empty", "-m", f"c{n}")
        commits.append(git(tmp_path, "rev-parse", "HEAD"))
    # the releases run backwards: only git's order puts the drop at the newest kernel
    made = series("round5/all10/1", "cbc(aes-generic)", b_runs=4, commits=[*commits, "f" * 40])
    for n, p in enumerate(made.points):
        kernel = KernelIdentity(release=f"6.1.{200 - n}", commit=p.run.kernel.commit)
        made.points[n] = Point(
            RunIdentity(p.run.run_id, "uml", kernel, "0.1.0", p.run.started), p.value
        )
    assert detect.run(parse("--repo", str(tmp_path)), reader(made)) == EXIT_FAIL
    out = capsys.readouterr().out
    assert (
        out.splitlines()[0]
        == f"{tmp_path}: not in the repository, left out: 6.1.181 (ffffffffffff)"
    )
    assert f"6.1.{200 - 15} ({commits[15][:12]}) -> 6.1.{200 - 16} ({commits[16][:12]})" in out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--max-drop", "ten"], "--max-drop: bad fraction 'ten'"),
        (["--board", "arm"], "no series of board arm"),
    ],
)
def test_bad_input_is_one_line(argv: list[str], says: str) -> None:
    made = series("round5/aa/2", "cbc(aes-generic)")
    with pytest.raises(UsageError) as caught:
        detect.run(parse(*argv), reader(made))
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_history_that_does_not_exist_is_one_line_not_a_new_empty_one(tmp_path: Path) -> None:
    missing = tmp_path / "h.sqlite"
    with pytest.raises(UsageError) as caught:
        detect.run(parse("--history-db", str(missing)))
    assert str(caught.value) == f"{missing}: no such history database"
    assert not missing.exists()


def test_detect_reads_the_runs_history_add_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store and the detection meet: a real results file added, then judged (one run
    per series: too short, said once for all of them)."""
    from pytest_hwcrypto.history.ingest import ingest
    from pytest_hwcrypto.history.store import Store

    results = Path(__file__).parent.parent / "data" / "board_uml_results_main.json"
    db = tmp_path / "h.sqlite"
    document = json.loads(results.read_text())
    with Store(db) as store:
        for run in ingest(document, str(results), board=None, received="2026-12-07T00:00:00"):
            store.add(run)
    code = detect.run(parse("--history-db", str(db)))
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "board uml: 175 series, 0 change points"
    assert "175 series need 3 more runs each to be judged" in out
