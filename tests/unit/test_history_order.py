# SPDX-License-Identifier: MIT
"""Kernel order of a history (history/order.py): versions, git topology, never arrival."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity
from pytest_hwcrypto.history.order import (
    kernel_group,
    kernel_runs,
    left_out_line,
    order_points,
    read_topo_order,
    version_key,
)
from pytest_hwcrypto.usage import UsageError


def point(
    release: str,
    started: str = "2026-12-07T00:00:00Z",
    commit: str | None = None,
    value: float = 1.0,
) -> Point:
    kernel = KernelIdentity(release=release, commit=commit)
    run = RunIdentity(
        run_id=f"{release}-{commit}-{started}",
        board="uml",
        kernel=kernel,
        plugin_version="0.1.0",
        started=started,
    )
    return Point(run=run, value=value)


@pytest.mark.parametrize(
    "older, newer",
    [
        ("6.1.9", "6.1.10"),  # numbers, not text
        ("6.1.176", "6.12.0"),
        ("6.12.0-rc3", "6.12.0"),  # a release candidate leads to its release
        ("6.12.0-rc2", "6.12.0-rc10"),
        ("6.12.0-rc3", "6.12.0-rc3-00012-gabcdef012345"),  # commits after the tag
        ("6.1.0-47-amd64", "6.1.0-57-amd64"),  # Debian ABI numbers
        ("6.12.117+deb12-amd64", "6.12.117+deb13-amd64"),
        ("7.3.4+deb13-amd64", "7.3.10+deb13-amd64"),
        ("6.1", "6.1.1"),
        ("7.3.4", "not-a-version"),  # no version at all: after every version
    ],
)
def test_version_order(older: str, newer: str) -> None:
    assert version_key(older) < version_key(newer)


releases = st.sampled_from(
    [
        "6.1.176",
        "6.1.9",
        "6.12.0-rc3",
        "6.12.0",
        "7.3.4+deb13-amd64",
        "6.1.0-47-amd64",
        "6.1",
        "weird",
        "6.12.0-rc10",
    ]
)


@given(
    st.lists(st.tuples(releases, st.integers(0, 9)), min_size=1, max_size=30),
    st.randoms(use_true_random=False),
)
def test_version_order_ignores_arrival_and_keeps_runs_of_a_kernel_together(
    runs: list[tuple[str, int]], shuffle: random.Random
) -> None:
    points = [point(release, started=f"2026-12-07T00:00:{second:02d}Z") for release, second in runs]
    ordered = order_points(points).points
    arrived_otherwise = list(points)
    shuffle.shuffle(arrived_otherwise)
    reordered = order_points(arrived_otherwise).points
    # the same kernels in the same order, whatever order the runs arrived in
    assert [p.run.kernel.release for p in ordered] == [p.run.kernel.release for p in reordered]
    groups = kernel_runs(ordered)
    # each kernel's runs form one block
    assert len(groups) == len({kernel_group(p.run.kernel) for p in points})
    keys = [version_key(g[0].run.kernel.release) for g in groups]
    assert keys == sorted(keys)


@given(st.permutations(list(range(8))), st.lists(st.integers(0, 7), min_size=1, max_size=20))
def test_git_order_follows_the_commits_not_the_releases(topo: list[int], picks: list[int]) -> None:
    commits = [f"{n:040x}" for n in topo]
    # releases deliberately disagree with the topology: git decides
    points = [point(f"6.1.{100 - n}", commit=f"{n:040x}") for n in picks]
    ordered = order_points(points, commits)
    assert ordered.left_out == []
    positions = [commits.index(p.run.kernel.commit or "") for p in ordered.points]
    assert positions == sorted(positions)


def test_git_order_leaves_out_and_names_commits_the_repository_lacks() -> None:
    known, unknown = "a" * 40, "b" * 40
    points = [point("6.1.1", commit=known), point("6.1.2", commit=unknown), point("6.1.3")]
    ordered = order_points(points, [known])
    assert [p.run.kernel.commit for p in ordered.points] == [known]
    line = left_out_line(ordered.left_out, Path("linux"))
    assert line is not None and "\n" not in line
    assert "6.1.2 (bbbbbbbbbbbb)" in line and "6.1.3" in line


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def test_read_topo_order_is_oldest_first(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    made = []
    for n in range(3):
        git(tmp_path, "commit", "-q", "--allow-empty", "-m", f"c{n}")
        made.append(git(tmp_path, "rev-parse", "HEAD").strip())
    assert read_topo_order(tmp_path) == made


def test_read_topo_order_of_no_repository_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        read_topo_order(tmp_path / "nowhere")
    assert str(caught.value).startswith(f"--repo {tmp_path / 'nowhere'}: ")
    assert "\n" not in str(caught.value)
