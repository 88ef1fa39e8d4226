# SPDX-License-Identifier: MIT
"""A custom kernel's modules are built against its own tree (the `build` link that
`make modules_install` leaves), not a headers package; its config joins the cache key.
A fake make and apt-get: nothing is built."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.boards import kmod_build, qemu
from pytest_hwcrypto.boards.kmod_build import ModuleSource
from pytest_hwcrypto.boards.qemu import QemuBoard

RELEASE = "6.1.192-afalg-masked"


class FakeMake:
    """make writes a .ko for RELEASE; apt-get must not be called for a custom kernel."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        if argv[0] == "make":
            module = Path(options["cwd"]) / "demo.ko"
            module.write_bytes(b"\x7fELF..vermagic=" + RELEASE.encode() + b" SMP\0")
        return subprocess.CompletedProcess(argv, 0, "", "")


def built_tree(root: Path) -> Path:
    """A kernel tree after `make modules`, and a modules directory linking to it."""
    tree = root / "linux-source-6.1"
    tree.mkdir(parents=True)
    (tree / "Makefile").write_text("VERSION = 6\n")
    (tree / ".config").write_text("CONFIG_MODULES=y\n")
    (tree / "Module.symvers").write_text("0x0\tcrypto_register_skcipher\tvmlinux\n")
    modules = root / "install" / "lib" / "modules" / RELEASE
    modules.mkdir(parents=True)
    (modules / "build").symlink_to(tree)
    return modules


def test_the_build_link_names_the_tree_only_when_it_was_built(tmp_path: Path) -> None:
    modules = built_tree(tmp_path)
    assert kmod_build.kernel_build_tree(modules) == (tmp_path / "linux-source-6.1").resolve()
    (tmp_path / "linux-source-6.1" / "Module.symvers").unlink()  # configured, never built
    assert kmod_build.kernel_build_tree(modules) is None
    (modules / "build").unlink()  # a Debian .deb's link to headers that are not installed
    (modules / "build").symlink_to(tmp_path / "usr" / "src" / f"linux-headers-{RELEASE}")
    assert kmod_build.kernel_build_tree(modules) is None


@pytest.fixture
def own_source(tmp_path: Path) -> ModuleSource:
    source = tmp_path / "repo"
    (source / "kmod").mkdir(parents=True)
    (source / "kmod" / "Makefile").write_text("obj-m := demo.o\n")
    return ModuleSource("demo", "kmod", "demo.ko", source_dir=source)


def test_a_module_is_built_against_the_tree_and_rebuilt_when_its_config_changes(
    tmp_path: Path, own_source: ModuleSource
) -> None:
    tree = kmod_build.kernel_build_tree(built_tree(tmp_path))
    assert tree is not None
    runner = FakeMake()
    options: dict[str, Any] = {
        "cache": tmp_path / "cache",
        "runner": runner,
        "headers_root": tmp_path / "no-headers",
        "kernel_dir": tree,
        "own_tree": True,
    }
    lines: list[str] = []
    first = kmod_build.build_module(own_source, RELEASE, lines.append, **options)
    make = next(call for call in runner.calls if call[0] == "make")
    assert f"KERNEL_DIR={tree}" in make
    assert not [call for call in runner.calls if call[0] == "apt-get"]
    assert any("own build tree" in line for line in lines), lines
    assert kmod_build.build_module(own_source, RELEASE, lambda _: None, **options) == first
    (tree / ".config").write_text("CONFIG_MODULES=y\nCONFIG_PREEMPT=y\n")
    second = kmod_build.build_module(own_source, RELEASE, lambda _: None, **options)
    assert second != first and second.is_file()
    assert len([call for call in runner.calls if call[0] == "make"]) == 2


def test_the_qemu_board_hands_a_custom_kernels_tree_to_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = built_tree(tmp_path)
    monkeypatch.setattr(qemu, "HOST_MODULES_ROOT", tmp_path / "host" / "lib" / "modules")
    asked: list[dict[str, Any]] = []

    def fake_build(spec: ModuleSource, release: str, progress: Any, **options: Any) -> Path:
        asked.append(options)
        module = tmp_path / "built.ko"
        module.write_bytes(b"ko")
        return module

    monkeypatch.setattr(kmod_build, "build_module", fake_build)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    kernel = tmp_path / f"vmlinuz-{RELEASE}"
    QemuBoard(kernel=kernel, modules_dir=modules, test_drivers=True).prepare(run_dir, None)
    assert asked[-1]["kernel_dir"] == (tmp_path / "linux-source-6.1").resolve()
    assert asked[-1]["own_tree"] is True
    assert (run_dir / qemu.TEST_DRIVERS_MODULE).read_bytes() == b"ko"
    # the stock kernel (no custom modules directory): its headers package, as before
    QemuBoard(kernel=kernel, test_drivers=True).prepare(run_dir, None)
    assert asked[-1]["kernel_dir"] is None and asked[-1]["own_tree"] is False
