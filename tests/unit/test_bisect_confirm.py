"""cli_bisect_confirm.py: which commits a finished bisection leaves, read from a real git
repository's refs/bisect/*, and the order in which they are confirmed (the board's pairs
are faked here; tests/board_layer/test_bisect_uml.py measures them on the UML board)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto import cli_bisect_confirm
from pytest_hwcrypto.ab.document import AbDocument, Side, save_document
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.cli_ab import AbUsageError


def _git(tree: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *argv],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Eight commits in a repository that is the working directory."""
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    commits = []
    for index in range(8):
        (tree / "f").write_text(f"{index}\n")
        _git(tree, "add", "f")
        _git(tree, "commit", "-q", "-m", f"change {index}")
        commits.append(_git(tree, "rev-parse", "HEAD"))
    monkeypatch.chdir(tree)
    _git(
        tree, "bisect", "start", "--term-old", "fast", "--term-new", "slow", commits[-1], commits[0]
    )
    return commits


def _good_file(path: Path) -> Path:
    sides = {"A": Side("A", "/good/linux"), "B": Side("B", "/tree/linux")}
    slice_ = SliceSpec(seconds=1.0, block_sizes=(65536,))
    save_document(AbDocument("uml", sides, slice_, 1, 0.05, 0.05, [10]), path)
    return path


def _mark(term: str, commit: str) -> None:
    # git exits non-zero when only skipped commits are left: that is the state wanted
    subprocess.run(["git", "bisect", term, commit], capture_output=True, check=False)


def test_a_clean_bisection_leaves_its_first_slow_commit(history: list[str]) -> None:
    for commit in history[1:4]:
        _mark("fast", commit)
    for commit in history[5:7]:
        _mark("slow", commit)
    _mark("slow", history[4])
    assert cli_bisect_confirm.bisection_candidates() == [history[4]]


def test_a_skipped_step_next_to_the_first_slow_commit_leaves_both_oldest_first(
    history: list[str],
) -> None:
    # the trial-5 case: the culprit (3) could not be told and was skipped, 4 was slow
    for commit in history[1:3]:
        _mark("fast", commit)
    _mark("skip", history[3])
    _mark("slow", history[4])
    assert cli_bisect_confirm.bisection_candidates() == [history[3], history[4]]


def test_an_unfinished_bisection_is_refused_naming_a_commit_left(history: list[str]) -> None:
    _mark("fast", history[2])
    with pytest.raises(AbUsageError, match=r"has not finished: 4 commit\(s\).*e\.g\. [0-9a-f]{12}"):
        cli_bisect_confirm.bisection_candidates()


def test_no_bisection_says_how_to_go_on(history: list[str]) -> None:
    _git(Path.cwd(), "bisect", "reset")
    with pytest.raises(AbUsageError, match=r"refs/bisect/bad is missing.*give --commit"):
        cli_bisect_confirm.bisection_candidates()


def test_candidates_are_confirmed_oldest_first_and_the_first_confirmed_is_named(
    history: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for commit in history[1:3]:
        _mark("fast", commit)
    _mark("skip", history[3])
    _mark("skip", history[4])
    _mark("slow", history[5])
    built: list[list[str]] = []
    measured: list[str] = []

    def build_images(commits: list[str], *_: object) -> dict[str, Path]:
        built.append(commits)
        return {c: tmp_path / f"build-{c[:12]}.img" for c in commits}

    def confirm_candidate(good: object, parent: Path, image: Path, commit: str, *_: object):  # type: ignore[no-untyped-def]
        measured.append(commit)
        assert parent.name == f"build-{_git(Path.cwd(), 'rev-parse', commit + '^')[:12]}.img"
        return (commit == history[4], "confirmed" if commit == history[4] else "not confirmed")

    monkeypatch.setattr(cli_bisect_confirm, "build_images", build_images)
    monkeypatch.setattr(cli_bisect_confirm, "confirm_candidate", confirm_candidate)
    args = argparse.Namespace(
        good=str(_good_file(tmp_path / "good.json")),
        kernel=None,
        commit=None,
        pytest_args=["make"],
        workdir=str(tmp_path / "steps"),
    )
    assert cli_bisect_confirm.bisect_confirm(args) == 0
    assert measured == [history[3], history[4]]  # stopped at the first confirmed
    assert built == [history[2:6]]  # parents and candidates, each built once
    err = capsys.readouterr().err
    assert "left 3 candidates" in err and f"{history[4]} is the culprit" in err
