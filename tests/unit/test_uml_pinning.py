# SPDX-License-Identifier: MIT
"""The UML board runs on one host CPU: which one, and how the boot command says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.boards import uml
from pytest_hwcrypto.boards.uml import UmlBoard, board_cpu


def test_the_highest_allowed_cpu_is_chosen() -> None:
    assert board_cpu({0, 1}) == 1
    assert board_cpu({0, 2, 5}) == 5


def test_a_caller_already_on_one_cpu_is_left_alone() -> None:
    assert board_cpu({3}) is None


def _argv(tmp_path: Path) -> list[str]:
    board = UmlBoard()
    board.state_beyond_avx = []
    board._preload = None
    return board.boot_argv(tmp_path, tmp_path / "guest.sh")


def test_the_kernel_is_started_under_taskset_on_that_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uml.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(uml.shutil, "which", lambda name: f"/usr/bin/{name}")
    argv = _argv(tmp_path)
    assert argv[:3] == ["/usr/bin/taskset", "--cpu-list", "3"]
    assert argv[3] == str(uml.DEBIAN_UML_KERNEL)


def test_without_taskset_or_a_choice_the_kernel_starts_unpinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uml.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(uml.shutil, "which", lambda name: None)
    assert _argv(tmp_path)[0] == str(uml.DEBIAN_UML_KERNEL)
    monkeypatch.setattr(uml.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(uml.os, "sched_getaffinity", lambda pid: {1})
    assert _argv(tmp_path)[0] == str(uml.DEBIAN_UML_KERNEL)
