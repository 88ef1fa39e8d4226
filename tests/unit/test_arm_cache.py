# SPDX-License-Identifier: MIT
"""Superseded ARM builds leave the cache (boards/arm_cache.py): what is superseded, that
nothing the plugin did not make is touched, and that a running build blocks pruning."""

from __future__ import annotations

import fcntl
from pathlib import Path

from pytest_hwcrypto.boards import arm_cache

KEY, OLD = "491c1c2b0034", "25a7125c019a"
NAMES = [
    f"base-{KEY}",
    f"base-{OLD}",
    f"base-{KEY}.partial",
    f"rootfs-{KEY}-31038ea5cdbc.ext4",
    f"rootfs-{OLD}-7b6173f4a50f.ext4",
    "kernel-6.1.0-57-arm64",
    "kernel-6.1.0-56-arm64",
    "kernel-6.1.0-58-arm64.partial",
    "kernel-6.1.0-57-arm64.partial",
    ".lock",
    "my-notes",
    "base-backup",
    f"rootfs-{OLD}-7b6173f4a50f.ext4.bak",
]


def test_another_recipe_and_other_kernel_releases_are_superseded() -> None:
    assert arm_cache.plan(NAMES, KEY, "6.1.0-57-arm64") == sorted(
        [
            f"base-{OLD}",
            f"base-{KEY}.partial",
            f"rootfs-{OLD}-7b6173f4a50f.ext4",
            "kernel-6.1.0-56-arm64",
            "kernel-6.1.0-58-arm64.partial",
        ]
    )


def test_kernels_are_left_alone_when_the_board_boots_an_own_kernel() -> None:
    assert not [name for name in arm_cache.plan(NAMES, KEY, None) if name.startswith("kernel-")]


def test_prune_removes_them_and_says_how_much(tmp_path: Path) -> None:
    for name in NAMES:
        if name.startswith(("base-", "kernel-")) and not name.endswith(".bak"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "file").write_bytes(b"x" * 8192)
        else:
            (tmp_path / name).write_bytes(b"y" * 4096)
    removed = dict(arm_cache.prune(tmp_path, KEY, "6.1.0-57-arm64"))
    assert set(removed) == set(arm_cache.plan(NAMES, KEY, "6.1.0-57-arm64"))
    assert removed[f"base-{OLD}"] >= 8192
    left = {entry.name for entry in tmp_path.iterdir()}
    assert left == set(NAMES) - set(removed)
    assert {"my-notes", "base-backup", f"rootfs-{OLD}-7b6173f4a50f.ext4.bak"} <= left


def test_nothing_is_removed_while_a_build_holds_the_lock(tmp_path: Path) -> None:
    (tmp_path / f"base-{OLD}").mkdir()
    with open(tmp_path / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert arm_cache.prune(tmp_path, KEY, None) == []
    assert (tmp_path / f"base-{OLD}").is_dir()
    assert [name for name, _ in arm_cache.prune(tmp_path, KEY, None)] == [f"base-{OLD}"]
