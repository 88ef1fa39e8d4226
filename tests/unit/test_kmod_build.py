# SPDX-License-Identifier: MIT
"""The out-of-tree module build path without building anything: a fake make and apt-get."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.boards import kmod_build
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.kmod_build import KmodBuildError, ModuleSource
from pytest_hwcrypto.boards.registry import make_board

RELEASE = "6.1.0-57-amd64"
SPEC = ModuleSource("demo", "demo-*.tar.gz", "demo.ko")


def _tarball(directory: Path, name: str = "demo-1.0.tar.gz") -> Path:
    path = directory / name
    with tarfile.open(path, "w:gz") as archive:
        for member, text in (("demo-1.0/Makefile", b"all:\n"), ("demo-1.0/demo.c", b"int x;\n")):
            info = tarfile.TarInfo(member)
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text))
    return path


class FakeTools:
    """Stands in for make and apt-get; make writes a .ko with the vermagic it is told."""

    def __init__(self, headers: Path, vermagic: str = RELEASE, make_fails: bool = False) -> None:
        self.headers = headers
        self.vermagic = vermagic
        self.make_fails = make_fails
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        if argv[0] == "make":
            if self.make_fails:
                return subprocess.CompletedProcess(argv, 2, "cc: error: demo.c\n", "")
            module = Path(options["cwd"]) / "demo.ko"
            module.write_bytes(b"\x7fELF...vermagic=" + self.vermagic.encode() + b" SMP\0more")
            return subprocess.CompletedProcess(argv, 0, "", "")
        if argv[0] == "apt-get" and "install" in argv:
            (self.headers / f"linux-headers-{RELEASE}").mkdir(parents=True)
            (self.headers / f"linux-headers-{RELEASE}" / "Makefile").write_text("")
        return subprocess.CompletedProcess(argv, 0, "", "")


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Any]:
    third_party = tmp_path / "third_party"
    third_party.mkdir()
    _tarball(third_party)
    headers = tmp_path / "src"
    (headers / f"linux-headers-{RELEASE}").mkdir(parents=True)
    (headers / f"linux-headers-{RELEASE}" / "Makefile").write_text("")
    return {
        "environ": {kmod_build.THIRD_PARTY_ENV: str(third_party)},
        "cache": tmp_path / "cache",
        "headers_root": headers,
        "runner": FakeTools(headers),
        "euid": 0,
    }


def test_builds_once_then_takes_the_cached_module(setup: dict[str, Any]) -> None:
    lines: list[str] = []
    built = kmod_build.build_module(SPEC, RELEASE, lines.append, **setup)
    assert built.read_bytes().startswith(b"\x7fELF")
    assert RELEASE in str(built) and built.name == "demo.ko"
    steps = [line.split(": ", 1)[1].split()[0] for line in lines]
    assert steps == ["headers", "unpacking", "building:", "built", "cached"], lines
    make = next(call for call in setup["runner"].calls if call[0] == "make")
    assert f"KERNEL_DIR={setup['headers_root']}/linux-headers-{RELEASE}" in make
    lines.clear()
    assert kmod_build.build_module(SPEC, RELEASE, lines.append, **setup) == built
    assert len(lines) == 1 and "cached build" in lines[0]


def test_the_cache_key_changes_with_the_source(setup: dict[str, Any], tmp_path: Path) -> None:
    first = kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)
    source = tmp_path / "third_party" / "demo-1.0.tar.gz"
    source.write_bytes(source.read_bytes() + b"\0")
    second = kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)
    assert first != second and first.is_file() and second.is_file()


def test_missing_headers_are_installed_as_root(setup: dict[str, Any]) -> None:
    headers_dir = setup["headers_root"] / f"linux-headers-{RELEASE}"
    (headers_dir / "Makefile").unlink()
    headers_dir.rmdir()
    lines: list[str] = []
    kmod_build.build_module(SPEC, RELEASE, lines.append, **setup)
    apt = [call for call in setup["runner"].calls if call[0] == "apt-get"]
    assert apt and apt[0][-1] == f"linux-headers-{RELEASE}"
    assert any(f"installing linux-headers-{RELEASE} (apt-get)" in line for line in lines)


def test_missing_headers_without_root_name_the_package(setup: dict[str, Any]) -> None:
    (setup["headers_root"] / f"linux-headers-{RELEASE}" / "Makefile").unlink()
    setup["euid"] = 1000
    with pytest.raises(KmodBuildError, match=f"sudo apt-get install linux-headers-{RELEASE}"):
        kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)


def test_a_failed_build_shows_the_compiler(setup: dict[str, Any]) -> None:
    setup["runner"].make_fails = True
    with pytest.raises(KmodBuildError, match=r"make exit 2\):\ncc: error: demo.c"):
        kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)


def test_a_module_for_another_kernel_is_refused(setup: dict[str, Any]) -> None:
    setup["runner"].vermagic = "6.12.0-1-amd64"
    with pytest.raises(KmodBuildError, match=r"built for 6\.12\.0-1-amd64 SMP, not 6\.1\.0-57"):
        kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)


def test_the_source_must_be_there_once(setup: dict[str, Any], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    setup["environ"] = {kmod_build.THIRD_PARTY_ENV: str(empty)}
    with pytest.raises(
        KmodBuildError, match=r"point --hwcrypto-third-party \(or HWCRYPTO_THIRD_PARTY"
    ):
        kmod_build.build_module(SPEC, RELEASE, lambda line: None, **setup)
    _tarball(tmp_path / "third_party", "demo-2.0.tar.gz")
    with pytest.raises(KmodBuildError, match="several demo-"):
        kmod_build.find_source(SPEC, tmp_path / "third_party")


def test_third_party_is_beside_the_checkout_unless_overridden() -> None:
    default = kmod_build.third_party_dir({})
    assert default is not None and default.parts[-2:] == ("shared", "third_party")
    assert kmod_build.third_party_dir({kmod_build.THIRD_PARTY_ENV: "/x"}) == Path("/x")


def test_an_installed_package_has_no_third_party_default_and_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Installed from a wheel, site-packages is no checkout: nothing beside it is looked at,
    and the error names the option and the variable instead of a path in site-packages."""
    site = tmp_path / "site-packages"
    (site / "pytest_hwcrypto").mkdir(parents=True)
    monkeypatch.setattr(kmod_build.pytest_hwcrypto, "__file__", str(site / "pytest_hwcrypto" / "x"))
    assert kmod_build.third_party_dir({}) is None
    with pytest.raises(KmodBuildError) as error:
        kmod_build.find_source(kmod_build.CRYPTODEV, kmod_build.third_party_dir({}))
    message = str(error.value)
    assert "--hwcrypto-third-party" in message and "HWCRYPTO_THIRD_PARTY" in message
    assert "site-packages" not in message


def test_the_third_party_option_reaches_the_qemu_board_build(tmp_path: Path) -> None:
    board = make_board("qemu", None, None, cryptodev=True, third_party=str(tmp_path))
    spec = kmod_build.CRYPTODEV
    assert kmod_build.source_dir_of(spec, board._environ) == tmp_path  # type: ignore[attr-defined]


def test_vermagic_and_digests(tmp_path: Path) -> None:
    assert kmod_build.vermagic(b"..\0vermagic=6.1.0-57-amd64 SMP mod_unload\0..") == (
        "6.1.0-57-amd64 SMP mod_unload"
    )
    assert kmod_build.vermagic(b"no modinfo") is None
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.c").write_text("1")
    before = kmod_build.source_digest(tree)
    (tree / "a.c").write_text("2")
    assert kmod_build.source_digest(tree) != before


def test_the_uml_board_cannot_load_cryptodev_and_says_so() -> None:
    with pytest.raises(BoardError, match=r"UML board cannot have /dev/crypto.*--hwcrypto-vm=qemu"):
        make_board("uml", None, None, cryptodev=True)


def test_a_module_of_this_repository_builds_from_its_own_directory(
    setup: dict[str, Any], tmp_path: Path
) -> None:
    """A source directory, not a tarball, and not looked up in the third-party directory."""
    own = tmp_path / "repo" / "tests"
    (own / "kmod").mkdir(parents=True)
    (own / "kmod" / "Makefile").write_text("obj-m := demo.o\n")
    spec = ModuleSource("demo", "kmod", "demo.ko", source_dir=own)
    built = kmod_build.build_module(spec, RELEASE, lambda line: None, **setup)
    assert built.read_bytes().startswith(b"\x7fELF")
    make = next(call for call in setup["runner"].calls if call[0] == "make")
    assert f"KERNEL_DIR={setup['headers_root']}/linux-headers-{RELEASE}" in make


def test_the_test_drivers_are_found_in_the_package_and_missing_ones_say_why(
    tmp_path: Path,
) -> None:
    spec = kmod_build.TEST_DRIVERS
    assert kmod_build.find_source(spec, kmod_build.source_dir_of(spec)).name == "kmod"
    assert (kmod_build.source_dir_of(spec) / "kmod" / "hwcrypto_test.c").is_file()
    with pytest.raises(KmodBuildError, match="part of the pytest-hwcrypto package"):
        kmod_build.find_source(spec, tmp_path)


def test_the_uml_board_cannot_load_the_test_drivers_and_says_so() -> None:
    with pytest.raises(BoardError, match=r"UML board cannot load the test-only drivers.*qemu"):
        make_board("uml", None, None, test_drivers=True)
