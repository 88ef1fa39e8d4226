# SPDX-License-Identifier: MIT
"""Which hosts need the UML board's FPU-state shim, and that it builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import uml_xstate
from pytest_hwcrypto.boards.uml import UmlBoard

AVX2_ONLY = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 aes xsave\n"
AVX512_AMX = (
    "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 avx512f avx512bw amx_tile amx_int8 xsave\n"
    "processor\t: 1\nflags\t\t: fpu sse2 avx avx2 avx512f avx512bw amx_tile amx_int8 xsave\n"
)


def test_avx2_host_needs_no_shim() -> None:
    assert uml_xstate.state_beyond_avx(AVX2_ONLY) == []


def test_avx512_and_amx_are_named() -> None:
    assert uml_xstate.state_beyond_avx(AVX512_AMX) == ["avx512f", "amx_tile"]


def test_pkru_counts_only_when_the_os_enabled_it() -> None:
    assert uml_xstate.state_beyond_avx("flags : avx pku\n") == []
    assert uml_xstate.state_beyond_avx("flags : avx pku ospke\n") == ["ospke"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler: apt-get install gcc")
def test_library_is_built_once_and_exports_ptrace(tmp_path: Path) -> None:
    built = uml_xstate.preload_library(tmp_path)
    assert built.parent == tmp_path and built.stat().st_size > 0
    assert b"ptrace" in built.read_bytes()
    mtime = built.stat().st_mtime_ns
    assert uml_xstate.preload_library(tmp_path) == built
    assert built.stat().st_mtime_ns == mtime  # cached, not rebuilt


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler: apt-get install gcc")
def test_a_cache_on_another_file_system_than_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh machine's home is often not on /tmp's file system (tmpfs): the build must
    not be moved across them (os.replace fails with EXDEV there)."""
    import os
    import tempfile

    other = Path("/dev/shm")
    if not other.is_dir() or other.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the test's directory")
    monkeypatch.setattr(tempfile, "tempdir", str(other))
    built = uml_xstate.preload_library(tmp_path / "cache")
    assert built.is_file() and built.parent == tmp_path / "cache"
    assert not [p for p in (tmp_path / "cache").iterdir() if p != built]  # no build left
    assert os.access(built, os.R_OK)


def test_missing_compiler_is_one_line_with_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(uml_xstate.BoardError, match="apt-get install gcc libc6-dev"):
        uml_xstate.preload_library(tmp_path)


def test_board_preloads_the_shim_and_masks_avx512_only_where_needed(tmp_path: Path) -> None:
    board = UmlBoard()
    board.state_beyond_avx = ["avx512f"]
    board._preload = tmp_path / "shim.so"
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    start = argv.index("env")
    assert argv[start : start + 3] == [
        "env",
        f"LD_PRELOAD={tmp_path / 'shim.so'}",
        str(board.kernel),
    ]
    assert "GLIBC_TUNABLES" in board.guest_script("true\n", tmp_path, tmp_path)
    board.state_beyond_avx = []
    board._preload = None
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    assert "env" not in argv and str(board.kernel) in argv
    assert "GLIBC_TUNABLES" not in board.guest_script("true\n", tmp_path, tmp_path)
