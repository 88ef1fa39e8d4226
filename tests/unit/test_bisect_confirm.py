# SPDX-License-Identifier: MIT
"""cli/bisect_confirm.py: which commits a finished bisection leaves, read from a real git
repository's refs/bisect/*, and the order in which they are confirmed (the board's pairs
are faked here; tests/board_layer/test_bisect_uml.py measures them on the UML board)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto.ab.document import AbDocument, PairRecord, Side, SliceRecord, save_document
from pytest_hwcrypto.ab.engine import AbOutcome
from pytest_hwcrypto.ab.series import SeriesVerdict
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.cli import bisect_confirm as cli_bisect_confirm
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.paired import PairedComparison, PairedVerdict


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
    document = AbDocument("uml", sides, slice_, 1, 0.05, 0.05, [10])
    document.verdict = {"series": [{"verdict": "same"}]}  # something was measured
    save_document(document, path)
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
    with pytest.raises(UsageError, match=r"has not finished: 4 commit\(s\).*e\.g\. [0-9a-f]{12}"):
        cli_bisect_confirm.bisection_candidates()


def test_no_bisection_says_how_to_go_on(history: list[str]) -> None:
    _git(Path.cwd(), "bisect", "reset")
    with pytest.raises(UsageError, match=r"refs/bisect/bad is missing.*give --commit"):
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
        if commit == history[4]:
            return cli_bisect_confirm.CONFIRMED, "confirmed"
        return cli_bisect_confirm.ALIKE, "not confirmed"

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


KEY = ("afalg", "cbc(aes)", 128, 65536, "encrypt", "cbc(aes-generic)")


def _judged(word: PairedVerdict, change: float = -0.049, low: float = -0.073) -> SeriesVerdict:
    comparison = PairedComparison(40, change, low, -0.024, low - 0.01, 0.001, 0.02, word, 0.05)
    return SeriesVerdict(KEY, 100.0, 95.0, comparison)


def test_a_good_file_in_which_nothing_was_measured_is_refused(
    history: list[str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.json"
    sides = {"A": Side("A", "/good/linux"), "B": Side("B", "/tree/linux")}
    save_document(AbDocument("uml", sides, SliceSpec(1.0, (65536,)), 1, 0.05, 0.05, [10]), empty)
    args = argparse.Namespace(good=str(empty), kernel=None, commit=None, pytest_args=["make"])
    with pytest.raises(UsageError, match="nothing was measured"):
        cli_bisect_confirm.bisect_confirm(args)


def test_an_image_the_build_did_not_rewrite_is_refused_with_128(
    history: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a tree whose build writes nothing: its ./linux is the one left by an earlier build
    import os

    image = Path.cwd() / "linux"
    image.write_text("an earlier build")
    os.utime(image, (1_000_000_000, 1_000_000_000))
    args = argparse.Namespace(
        good=str(_good_file(tmp_path / "good.json")),
        kernel=None,
        commit=history[4],
        pytest_args=["true"],
        workdir=str(tmp_path / "steps"),
    )
    before = _git(Path.cwd(), "rev-parse", "HEAD")
    assert cli_bisect_confirm.bisect_confirm(args) == 128
    assert "before the build step began" in capsys.readouterr().err
    assert _git(Path.cwd(), "rev-parse", "HEAD") == before  # the checkout put back


def test_pairs_that_could_not_tell_are_never_called_alike() -> None:
    # the issue-48 case: the planted commit against its parent, -4.9 % [-7.3, -2.4]
    measured, line = cli_bisect_confirm.confirm_word(
        [_judged(PairedVerdict.UNKNOWN)], {KEY: -0.055}
    )
    assert measured == cli_bisect_confirm.UNTOLD
    assert "could not tell" in line and "alike" not in line
    assert "-4.9% [-7.3, -2.4] in 40 pairs" in line


@pytest.mark.parametrize(
    ("word", "measured", "said"),
    [
        (PairedVerdict.REGRESSED, cli_bisect_confirm.CONFIRMED, "confirmed: different"),
        (PairedVerdict.SAME, cli_bisect_confirm.ALIKE, "measured alike"),
        (PairedVerdict.IMPROVED, cli_bisect_confirm.ALIKE, "measured alike"),
    ],
)
def test_confirm_says_what_it_measured_with_the_change_and_interval(
    word: PairedVerdict, measured: str, said: str
) -> None:
    got, line = cli_bisect_confirm.confirm_word([_judged(word)], {KEY: -0.055})
    assert got == measured and said in line and "[-7.3, -2.4]" in line


def test_a_series_of_good_left_unmeasured_is_not_alike() -> None:
    other = SeriesVerdict(
        (*KEY[:5], "cbc(aes-fixed-time)"), 1.0, 1.0, _judged(PairedVerdict.SAME).comparison
    )
    got, _ = cli_bisect_confirm.confirm_word([other], {KEY: -0.055, other.key: -0.05})
    assert got == cli_bisect_confirm.UNTOLD


def test_could_not_tell_says_what_more_pairs_would_cost() -> None:
    line = cli_bisect_confirm.more_pairs_line(40, 9.0, None)
    assert line == (
        "40 more pairs would take about 6 min (9 s a pair): rerun with --max-pairs 80 "
        "or --budget 720"
    )


def _fake_pairs(document: AbDocument, count: int, seconds: float) -> None:
    def slice_(side: str) -> SliceRecord:
        return SliceRecord(side, {"measurements": []}, 1.0, seconds / 2, 0.0, None)

    document.pairs = [PairRecord(i, "AB", {s: slice_(s) for s in "AB"}) for i in range(count)]


@pytest.mark.parametrize(
    ("budget", "pairs"), [(None, [12, 24]), (400.0, [12, 24, 48]), (200.0, [12, 24])]
)
def test_within_budget_more_pairs_are_taken_when_they_could_not_tell(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    budget: float | None,
    pairs: list[int],
) -> None:
    looks: list[list[int]] = []

    def measure_pairs(document: AbDocument, *_: object, **__: object) -> AbOutcome:
        looks.append(list(document.steps))
        count = document.steps[-1]
        _fake_pairs(document, count, 5.0)  # 5 s a pair
        word = PairedVerdict.REGRESSED if count >= 48 else PairedVerdict.UNKNOWN
        return AbOutcome([_judged(word)], count, "decided" if count >= 48 else "pairs")

    monkeypatch.setattr(cli_bisect_confirm, "measure_pairs", measure_pairs)
    monkeypatch.setattr(cli_bisect_confirm, "report", lambda *_: 0)
    args = argparse.Namespace(pairs=None, first_pairs=12, max_pairs=24, budget=budget, timeout=60.0)
    good = AbDocument(
        "uml", {"A": Side("A"), "B": Side("B")}, SliceSpec(1.0, (65536,)), 1, 0.05, 0.05, [12]
    )
    measured, line = cli_bisect_confirm.confirm_candidate(
        good, tmp_path / "p.img", tmp_path / "c.img", "c" * 40, tmp_path, args, {KEY: -0.055}
    )
    assert looks[-1] == pairs
    if pairs[-1] == 48:
        assert measured == cli_bisect_confirm.CONFIRMED
        assert "24 more (about 2 min) fit in --budget: taking them" in capsys.readouterr().err
    else:
        assert measured == cli_bisect_confirm.UNTOLD
        assert "24 more pairs would take about 2 min (5 s a pair)" in line
