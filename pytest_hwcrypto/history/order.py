# SPDX-License-Identifier: MIT
"""Kernel order: the order a series' points are judged in.

A change point is only meaningful along the kernels' own history, never along the time
runs arrived (a lab re-runs an old kernel, CI runs a branch late). Where the runs know
their git commits and a repository is given, the order is git's topological order;
otherwise it is the order of the kernel release strings, read as versions
(6.12.0-rc3 < 6.12.0 < 6.12.1, 6.1.0-47-amd64 < 6.1.0-57-amd64). Runs of one kernel stay
together, however far apart they arrived.

Pure apart from ``read_topo_order``, which asks git.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from pytest_hwcrypto.history.model import KernelIdentity, Point
from pytest_hwcrypto.usage import UsageError

# One token of a version's tail: numbers compare as numbers, words as words, and a number
# and a word compare by kind (a number first) so the key is a total order.
VersionToken = tuple[int, Union[int, str]]
VersionKey = tuple[int, tuple[int, ...], int, tuple[VersionToken, ...], str]

_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(.*)$")
_PRERELEASE = re.compile(r"^-rc(\d+)", re.IGNORECASE)
_TOKEN = re.compile(r"\d+|[A-Za-z]+")


def _tokens(text: str) -> tuple[VersionToken, ...]:
    return tuple((0, int(t)) if t.isdigit() else (1, t.lower()) for t in _TOKEN.findall(text))


def version_key(release: str) -> VersionKey:
    """A sort key for a kernel release string (`uname -r`), oldest first.

    Major, minor and patch compare as numbers; a release candidate (``-rcN``) comes before
    the release it leads to, and commits after a tag (``-rc3-00012-gabcdef``) after the
    tag; the rest (Debian's ABI number and ``+debNN``, a local version) compares token by
    token. A string that is not a version at all sorts after every version, by its text,
    so the key is total and deterministic.
    """
    match = _RELEASE.match(release.strip())
    if match is None:
        return (1, (), 0, (), release)
    major, minor, patch, tail = match.groups()
    numbers = (int(major), int(minor), int(patch or 0))
    pre = _PRERELEASE.match(tail)
    if pre is not None:
        # rc N of a release: before the release itself (rank 0 with N, released rank 1)
        return (0, numbers, 0, ((0, int(pre.group(1))), *_tokens(tail[pre.end() :])), release)
    return (0, numbers, 1, _tokens(tail), release)


def kernel_group(kernel: KernelIdentity) -> tuple[str, str, str]:
    """What makes two runs' kernels one kernel here: the commit where known, else the
    release; the config digest either way (one commit built two ways is two kernels)."""
    return (
        kernel.commit or "",
        kernel.release if not kernel.commit else "",
        kernel.config_digest or "",
    )


@dataclass(frozen=True)
class OrderedPoints:
    """A series' points in kernel order, and those git could not place."""

    points: list[Point]
    # runs whose commit the repository does not hold (or that name no commit) when a
    # repository was given: left out of the order, named to the user in one line
    left_out: list[Point]


def order_points(points: Sequence[Point], topo_order: Sequence[str] | None = None) -> OrderedPoints:
    """``points`` in kernel order.

    ``topo_order`` is the repository's commits, oldest first (``read_topo_order``); when
    given, it alone orders the kernels, and points whose commit it lacks are left out.
    Without it, the release strings order the kernels (``version_key``). Within one
    kernel the runs keep the order they came in: their arrival decides nothing between
    kernels.
    """
    if topo_order is not None:
        position = {commit: index for index, commit in enumerate(topo_order)}
        placed = [p for p in points if p.run.kernel.commit in position]
        left_out = [p for p in points if p.run.kernel.commit not in position]

        def git_key(point: Point) -> tuple[int, str]:
            return (position[point.run.kernel.commit or ""], point.run.kernel.config_digest or "")

        return OrderedPoints(sorted(placed, key=git_key), left_out)

    def release_key(point: Point) -> tuple[VersionKey, tuple[str, str, str]]:
        return (version_key(point.run.kernel.release), kernel_group(point.run.kernel))

    return OrderedPoints(sorted(points, key=release_key), [])


def kernel_runs(points: Sequence[Point]) -> list[list[Point]]:
    """Points in kernel order cut into runs of one kernel each (consecutive points whose
    kernels are one kernel, ``kernel_group``)."""
    groups: list[list[Point]] = []
    for point in points:
        if groups and kernel_group(groups[-1][-1].run.kernel) == kernel_group(point.run.kernel):
            groups[-1].append(point)
        else:
            groups.append([point])
    return groups


def left_out_line(left_out: Sequence[Point], repo: Path) -> str | None:
    """The one line naming the kernels ``--repo`` could not place, or None."""
    if not left_out:
        return None
    names = sorted({p.run.kernel.label() for p in left_out})
    return f"{repo}: not in the repository, left out: {', '.join(names)}"


def read_topo_order(repo: Path) -> list[str]:
    """Every commit of ``repo`` (all refs), oldest first, in git's topological order."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "rev-list", "--topo-order", "--reverse", "--all"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as error:
        raise UsageError(f"--repo {repo}: cannot run git: {error.strerror}") from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise UsageError(
            f"--repo {repo}: not a git repository ({detail[-1] if detail else 'git failed'})"
        )
    return done.stdout.split()
