# SPDX-License-Identifier: MIT
"""bisect-run boots the image the build just made, never a copy or a leftover (issue 48).

The copied-images workflow: `hwcrypto ab --kernel good.uml --kernel slow.uml`, then `git
bisect run hwcrypto bisect-run --good ab.json -- make ...` in the tree. The board is faked
(what would be booted is recorded); test_bisect_uml.py runs the real command on UML.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto import bisect_image, cli
from pytest_hwcrypto.ab.document import AbDocument, Side, save_document
from pytest_hwcrypto.ab.engine import AbOutcome
from pytest_hwcrypto.ab.series import SeriesVerdict
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.cli import bisect_run, exits
from pytest_hwcrypto.verdict.paired import PairedComparison, PairedVerdict

KEY = ("afalg", "cbc(aes)", 128, 65536, "encrypt", "cbc(aes-generic)")
BUILD = ["sh", "-c", "echo built > linux"]


def _good_file(path: Path, a: Path, b: Path, *, measured: bool = True) -> Path:
    document = AbDocument(
        board="uml",
        sides={"A": Side("A", str(a)), "B": Side("B", str(b))},
        slice=SliceSpec(seconds=1.0, block_sizes=(65536,)),
        seed=1,
        max_drop=0.05,
        alpha=0.05,
        steps=[10],
    )
    if measured:
        source, algorithm, key_bits, block_size, op, driver = KEY
        document.verdict = {
            "series": [
                {
                    "source": source,
                    "algorithm": algorithm,
                    "key_bits": key_bits,
                    "block_size": block_size,
                    "op": op,
                    "driver": driver,
                    "change": -0.2,
                    "verdict": "regressed",
                }
            ]
        }
    else:
        document.verdict = {"pairs": 3, "series": [], "failed": False}
    save_document(document, path)
    return path


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A tree (a git repository, the working directory) and good.uml / slow.uml copied
    outside it, with an A/B file comparing the two copies."""
    tree = tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    images = tmp_path / "images"
    images.mkdir()
    for name in ("good.uml", "slow.uml"):
        (images / name).write_text(name)
    monkeypatch.chdir(tree)
    good = _good_file(tmp_path / "ab.json", images / "good.uml", images / "slow.uml")
    return {"tree": tree, "good": good, "slow": images / "slow.uml", "work": tmp_path / "w"}


@pytest.fixture
def booted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fake board: records side B's kernel of every step, measures it "fast"."""
    kernels: list[str] = []

    def measure_pairs(document: AbDocument, *_: object, **__: object) -> AbOutcome:
        kernels.append(str(document.sides["B"].kernel))
        comparison = PairedComparison(
            12, 0.0, -0.01, 0.01, -0.02, 0.02, 0.9, PairedVerdict.SAME, 0.05
        )
        return AbOutcome([SeriesVerdict(KEY, 100.0, 100.0, comparison)], 12, "decided")

    monkeypatch.setattr(bisect_run, "measure_pairs", measure_pairs)
    return kernels


def _bisect_run(copied: dict[str, Path], *extra: str, build: list[str] = BUILD) -> int:
    argv = ["bisect-run", "--good", str(copied["good"]), "--workdir", str(copied["work"])]
    return cli.main([*argv, *extra, "--", *build])


def test_without_kernel_the_step_boots_the_image_the_build_wrote_in_the_tree(
    copied: dict[str, Path], booted: list[str]
) -> None:
    assert _bisect_run(copied) == exits.BISECT_GOOD
    assert booted == [str(copied["tree"] / "linux")]  # not slow.uml, side B of --good


def test_the_copy_that_is_side_b_of_good_is_refused_and_stops_the_bisection(
    copied: dict[str, Path], booted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = _bisect_run(copied, "--kernel", str(copied["slow"]))
    assert code == exits.BISECT_ABORT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is side B of --good, kept outside the tree" in err[0], err
    assert booted == []


def test_the_good_kernel_of_side_a_is_never_booted_as_the_step(
    copied: dict[str, Path], booted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    good_uml = copied["slow"].parent / "good.uml"
    assert _bisect_run(copied, "--kernel", str(good_uml)) == exits.BISECT_ABORT
    assert "is side A of --good" in capsys.readouterr().err
    assert booted == []


def test_an_image_older_than_the_build_step_is_refused(
    copied: dict[str, Path], booted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    image = copied["tree"] / "linux"
    image.write_text("the previous step's build")
    os.utime(image, (1_000_000_000, 1_000_000_000))
    code = _bisect_run(copied, build=["true"])  # a build that wrote nothing
    assert code == exits.BISECT_ABORT
    assert "before the build step began" in capsys.readouterr().err
    assert booted == []


def test_with_kernel_an_image_the_build_rewrote_is_booted(
    copied: dict[str, Path], booted: list[str]
) -> None:
    build = ["sh", "-c", "mkdir -p out && echo built > out/linux"]
    code = _bisect_run(copied, "--kernel", "out/linux", build=build)
    assert code == exits.BISECT_GOOD
    assert booted == ["out/linux"]


@pytest.mark.parametrize(
    ("present", "word"),
    [([], "no kernel image"), (["linux", "arch/x86/boot/bzImage"], "several kernel images")],
)
def test_no_image_or_several_in_the_tree_ask_for_kernel(
    copied: dict[str, Path],
    booted: list[str],
    capsys: pytest.CaptureFixture[str],
    present: list[str],
    word: str,
) -> None:
    build = ["sh", "-c", "; ".join(f"mkdir -p $(dirname {p}) && touch {p}" for p in present)]
    assert _bisect_run(copied, build=[*build] if present else ["true"]) == 128
    err = capsys.readouterr().err
    assert word in err and "give --kernel" in err
    assert booted == []


def test_a_good_file_in_which_nothing_was_measured_stops_the_bisection(
    copied: dict[str, Path], booted: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    empty = _good_file(
        copied["work"].parent / "empty.json", copied["slow"], copied["slow"], measured=False
    )
    copied = {**copied, "good": empty}
    assert _bisect_run(copied) == exits.BISECT_ABORT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing was measured" in err[0], err
    assert booted == []


def test_tree_image_finds_each_architecture(tmp_path: Path) -> None:
    for relative in bisect_image.TREE_IMAGES:
        tree = tmp_path / relative.replace("/", "_")
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text("")
        assert bisect_image.tree_image(tree) == tree / relative
