# SPDX-License-Identifier: MIT
"""Superseded ARM board builds leave the cache on their own.

Each architecture's cache directory (`~/.cache/pytest-hwcrypto/arm/<arch>/`) holds what
the plugin built there: base trees (`base-<recipe key>`), root filesystem images
(`rootfs-<recipe key>-<plugin digest>.ext4`), Debian kernels (`kernel-<release>`) and the
half-built leftovers of killed builds. A new base recipe or a new Debian kernel release
supersedes the old ones, which were never removed: 2 GB an architecture accumulated here.

What a CI engineer expects of a cache: it holds what the next run boots and nothing else,
without a cleaning step to remember. So whenever a board prepares (the image and kernel
it boots are known), everything else of that architecture that the plugin made is
removed: another recipe's base tree and images (an image of another plugin version on
the same recipe is already replaced when its successor is built, boards/arm_rootfs.py)
and other kernel releases. Only names the plugin gives are touched (exact patterns
below); anything else in the directory is left as it is. Pruning runs under the
directory's build lock, taken without waiting: while another process builds there
(possibly from another recipe), nothing is removed and the next board prunes instead.

`plan` is pure (names in, names out) and unit-tested; `prune` acts on it.
"""

from __future__ import annotations

import fcntl
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

_KEY = "[0-9a-f]{12}"
BASE = re.compile(rf"^base-({_KEY})(\.partial.*)?$")
IMAGE = re.compile(rf"^rootfs-({_KEY})-({_KEY})\.ext4$")
KERNEL = re.compile(r"^kernel-(\d[\w.+~-]*?)(\.partial)?$")


def plan(names: Iterable[str], base_key: str, kernel_release: str | None) -> list[str]:
    """Which entries of an architecture's cache directory are superseded: another recipe's
    base trees and images, other kernel releases (when the kernel in use is Debian's:
    `kernel_release`; None leaves the kernels alone), and partial base trees (pruning
    holds the build lock, so no build of one is running)."""
    superseded = []
    for name in sorted(names):
        if match := BASE.match(name):
            if match.group(1) != base_key or match.group(2):
                superseded.append(name)
        elif match := IMAGE.match(name):
            if match.group(1) != base_key:
                superseded.append(name)
        elif (match := KERNEL.match(name)) and kernel_release not in (None, match.group(1)):
            # (the release in use, even half-fetched: another process may be fetching it)
            superseded.append(name)
    return superseded


def prune(directory: Path, base_key: str, kernel_release: str | None) -> list[tuple[str, int]]:
    """Remove the superseded entries of `directory`; (name, bytes freed) of each. Nothing
    when another process holds the directory's build lock."""
    if not directory.is_dir():
        return []
    with open(directory / ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []  # a build is running here: it may be using what looks superseded
        try:
            removed = []
            names = [entry.name for entry in directory.iterdir()]
            for name in plan(names, base_key, kernel_release):
                path = directory / name
                size = _size(path)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                removed.append((name, size))
            return removed
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _size(path: Path) -> int:
    """Bytes on disk (sparse images count what they use)."""
    if not path.is_dir() or path.is_symlink():
        return path.lstat().st_blocks * 512
    return sum(entry.lstat().st_blocks * 512 for entry in path.rglob("*"))
