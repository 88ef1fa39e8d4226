# SPDX-License-Identifier: MIT
"""`git bisect run hwcrypto bisect-run` and `hwcrypto bisect-confirm` end to end on the UML
board, in a history CI can afford.

The "kernel tree" is a git repository whose build writes a launcher for Debian's UML
kernel with the command line its `cmdline` file holds. The good commit boots with
`module_blacklist=aes_ti`, so cbc(aes) is served by aes-generic; the culprit drops that
line, and the higher-priority, slower aes-fixed-time (a module of Debian's UML kernel)
serves cbc(aes) again -- ~1.9x slower at 64 KiB on this board, a regression the by-name
series shows, of the kind a new driver with a higher priority brings. The worked example
on a real 6.1 tree, a driver slowed in its C source, is benchmarks/ab_bisect_example.sh.
~4 min on two cores.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_hwcrypto.boards.uml import UmlBoard

BUILD = """#!/bin/sh
# the build: a launcher for the board's UML kernel with this commit's command line
printf '#!/bin/sh\\nexec %s %s "$@"\\n' "$UML" "$(cat cmdline)" > linux
chmod +x linux
"""
FAST = "module_blacklist=aes_ti\n"
# --alpha 0.05, as the worked example (benchmarks/ab_bisect_example.sh) runs: the steps
# take their level from this A/B, and this test is about the plumbing of git bisect run
# and bisect-confirm, kept to the few pairs CI can afford (test_ab_uml.py and the unit
# tests check the default 0.01).
# Ten pairs, not six: some boots run twice as fast as their neighbours on a lightly loaded
# host (fresh-clone CI, 2026-12-07, load 2.3: aes-generic 175 or 350 MB/s), and six pairs
# decide only when all six go one way; ten tolerate one or two pairs near 0.
PAIRS = ["--pairs", "10", "--alpha", "0.05"]
# Two looks (7, then 14 pairs) judge at 0.05 / 2: six pairs cannot reach that level at
# all (p >= 1/32), seven can; a step is judged against the midpoint of the known drop.
STEP_PAIRS = ["--first-pairs", "7", "--max-pairs", "14"]


def _git(tree: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=hwcrypto", "-c", "user.email=hwcrypto@localhost", *argv],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _history(tree: Path) -> list[str]:
    """Five commits: base (fast), a harmless one, the culprit, two harmless ones."""
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    (tree / "build.sh").write_text(BUILD)
    (tree / "cmdline").write_text(FAST)
    (tree / "notes").write_text("")
    commits = []
    for index, change in enumerate(["base", "notes", "culprit", "notes", "notes"]):
        if change == "culprit":
            (tree / "cmdline").write_text("\n")
        elif change == "notes":
            with open(tree / "notes", "a") as notes:
                notes.write(f"change {index}\n")
        _git(tree, "add", "build.sh", "cmdline", "notes")
        _git(tree, "commit", "-q", "-m", f"{change} {index}")
        commits.append(_git(tree, "rev-parse", "HEAD"))
    return commits


def _hwcrypto(tree: Path, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_hwcrypto.cli", *argv],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_bisect_finds_and_confirms_the_commit_that_slowed_cbc_aes(
    uml_board: UmlBoard, tmp_path: Path
) -> None:
    modules = uml_board.modules_dir()
    assert modules is not None, "Debian's UML kernel ships its modules"
    env = {**os.environ, "UML": str(uml_board.kernel)}
    tree = tmp_path / "tree"
    base, _, culprit, _, last = _history(tree)
    build = ["sh", "build.sh"]

    _git(tree, "checkout", "-q", base)
    subprocess.run(build, cwd=tree, env=env, check=True)
    good_image = tmp_path / "good.img"
    (tree / "linux").rename(good_image)
    _git(tree, "checkout", "-q", last)
    subprocess.run(build, cwd=tree, env=env, check=True)
    # the copied-images workflow of issue 48: both images kept as copies outside the tree
    slow_image = tmp_path / "slow.img"
    shutil.copy2(tree / "linux", slow_image)
    good = tmp_path / "ab-good-slow.json"
    ab = _hwcrypto(
        tree, "ab", "--kernel", str(good_image), "--kernel", str(slow_image),
        "--modules", str(modules), "--modules", str(modules), "--algorithm", "cbc(aes)",
        "--block-sizes", "65536", "--slice-seconds", "0.5", "--by-name", *PAIRS,
        "--out", str(good), env=env,
    )  # fmt: skip
    assert ab.returncode == 1, ab.stdout + ab.stderr[-2000:]  # regressed
    series = json.loads(good.read_text())["verdict"]["series"]
    assert [s["verdict"] for s in series if s["driver"] == "(by name)"] == ["regressed"]

    _git(tree, "bisect", "start", "--term-old", "fast", "--term-new", "slow", last, base)
    started = _git(tree, "bisect", "log")
    # booting the copy that is side B of --good would measure slow.img at every step: refused
    # with 128, which stops `git bisect run` before any commit is marked
    copy = subprocess.run(
        ["git", "bisect", "run", sys.executable, "-m", "pytest_hwcrypto.cli", "bisect-run",
         "--good", str(good), "--kernel", str(slow_image), "--", *build],
        cwd=tree, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert copy.returncode != 0, copy.stdout + copy.stderr
    assert "is side B of --good, kept outside the tree" in copy.stderr, copy.stderr
    assert _git(tree, "bisect", "log") == started  # no commit marked
    # an image the build did not rewrite (here: a build that writes nothing) is refused too
    os.utime(tree / "linux", (1_000_000_000, 1_000_000_000))
    stale = _hwcrypto(tree, "bisect-run", "--good", str(good), "--", "true", env=env)
    assert stale.returncode == 128, stale.stderr
    assert "before the build step began" in stale.stderr, stale.stderr

    # without --kernel each step boots the image its build wrote in the tree, ./linux
    run = subprocess.run(
        ["git", "bisect", "run", sys.executable, "-m", "pytest_hwcrypto.cli", "bisect-run",
         "--good", str(good), *STEP_PAIRS, "--workdir", str(tmp_path / "steps"), "--", *build],
        cwd=tree, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    (tmp_path / "bisect.log").write_text(run.stdout + run.stderr)
    if f"{culprit} is the first slow commit" not in run.stdout:
        # a step that could not tell (the twice-as-fast boots above) is skipped, and git is
        # left with candidates: the culprit must be among them, and bisect-confirm below,
        # measuring each against its parent, must name it
        assert "The first slow commit could be any of:" in run.stdout, run.stdout[-3000:]
        assert culprit in run.stdout.split("could be any of:")[1], run.stdout[-3000:]

    left_at = _git(tree, "rev-parse", "HEAD")  # the last commit the bisection tested
    confirm = _hwcrypto(
        tree, "bisect-confirm", "--good", str(good), *STEP_PAIRS,
        "--workdir", str(tmp_path / "steps"), "--", *build, env=env,
    )  # fmt: skip
    assert confirm.returncode == 0, confirm.stdout + confirm.stderr[-2000:]
    assert f"bisect-confirm: {culprit[:12]}: confirmed" in confirm.stderr
    named_by_git = f"{culprit} is the first slow commit" in run.stdout
    assert named_by_git or f"{culprit} is the culprit" in confirm.stderr, confirm.stderr
    # the culprit's parent and the culprit were built; the checkout is back where it was
    assert _git(tree, "rev-parse", "HEAD") == left_at
    parent = _git(tree, "rev-parse", culprit + "^")
    for built in (parent, culprit):
        assert (tmp_path / "steps" / f"build-{built[:12]}.img").is_file()
    _git(tree, "bisect", "reset")
