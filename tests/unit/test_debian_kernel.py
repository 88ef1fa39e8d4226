# SPDX-License-Identifier: MIT
"""Kernels given by Debian package or as an unpacked split layout: the path logic."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.boards import debian_kernel
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.private_apt import sources_list

VERSION = "7.3.4+deb13-amd64"


def split_tree(root: Path) -> Path:
    modules = root / "usr" / "lib" / "modules" / VERSION
    (modules / "kernel").mkdir(parents=True)
    (modules / "vmlinuz.unsigned").write_bytes(b"image")
    return modules


def test_the_split_modules_directory_alone_gives_image_and_modules(tmp_path: Path) -> None:
    modules = split_tree(tmp_path)
    assert debian_kernel.resolve(str(modules), None) == (
        str(modules / "vmlinuz.unsigned"),
        str(modules),
    )


def test_the_split_image_alone_finds_its_modules_beside_it(tmp_path: Path) -> None:
    modules = split_tree(tmp_path)
    image = str(modules / "vmlinuz.unsigned")
    assert debian_kernel.resolve(image, None) == (image, str(modules))


def test_other_kernels_pass_unchanged(tmp_path: Path) -> None:
    assert debian_kernel.resolve("/boot/vmlinuz-6.1.0-57-amd64", None) == (
        "/boot/vmlinuz-6.1.0-57-amd64",
        None,
    )
    assert debian_kernel.resolve(None, None) == (None, None)


def test_locate_finds_both_layouts(tmp_path: Path) -> None:
    modules = split_tree(tmp_path / "split")
    assert debian_kernel.locate(tmp_path / "split", VERSION) == (
        modules / "vmlinuz.unsigned",
        modules,
    )
    old = tmp_path / "old"
    (old / "lib" / "modules" / "6.1.0-57-amd64").mkdir(parents=True)
    (old / "boot").mkdir()
    (old / "boot" / "vmlinuz-6.1.0-57-amd64").write_bytes(b"image")
    assert debian_kernel.locate(old, "6.1.0-57-amd64") == (
        old / "boot" / "vmlinuz-6.1.0-57-amd64",
        old / "lib" / "modules" / "6.1.0-57-amd64",
    )
    assert debian_kernel.locate(old, VERSION) is None


def test_a_cached_unpack_is_used_without_apt(tmp_path: Path) -> None:
    target = tmp_path / "cache" / VERSION
    modules = split_tree(target / "tree")
    (target / ".unpacked").touch()
    said: list[str] = []
    found = debian_kernel.fetch(VERSION, tmp_path / "cache", said.append)
    assert found == (modules / "vmlinuz.unsigned", modules)
    assert said == []


def test_a_malformed_version_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(BoardError) as raised:
        debian_kernel.resolve("debian:latest", None, environ={"HOME": str(tmp_path)})
    assert "debian:latest" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_private_apt_lists_the_suites_it_is_given() -> None:
    text = sources_list("amd64", "http://m/debian", ("trixie", "trixie-backports"))
    assert text.count("\n") == 2
    assert " trixie-backports main" in text and "bookworm" not in text
    assert "bookworm-security" in sources_list("amd64", "http://m/debian")
