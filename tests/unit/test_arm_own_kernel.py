# SPDX-License-Identifier: MIT
"""A developer's own ARM kernel checked before boot (boards/arm_own_kernel.py): each bad
input one line naming the file, on synthetic image headers and modules directories. The
real cross-built kernel is booted in tests/board_arm/test_own_kernel.py."""

from __future__ import annotations

import gzip
import lzma
import re
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import arm_own_kernel
from pytest_hwcrypto.boards.arm_arch import ARM64, ARMHF
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.qemu_arm import QemuArmBoard

RELEASE = "6.1.192-hwcrypto"
BANNER = f"Linux version {RELEASE} (dev@host) (aarch64-linux-gnu-gcc 12.2.0) #1 SMP".encode()


def arm64_image(banner: bytes = BANNER) -> bytes:
    header = bytearray(64)
    header[0x38:0x3C] = b"ARM\x64"
    return bytes(header) + b"\0" * 100 + banner + b"\0"


def zimage(banner: bytes) -> bytes:
    header = bytearray(64)
    header[0x24:0x28] = (0x016F2818).to_bytes(4, "little")
    return (
        bytes(header) + b"decompressor" + lzma.compress(b"\0" * 50 + banner, format=lzma.FORMAT_XZ)
    )


def bzimage() -> bytes:
    data = bytearray(0x400)
    data[0x202:0x206] = b"HdrS"
    return bytes(data)


def elf(machine: int) -> bytes:
    return b"\x7fELF\x02\x01\x01" + b"\0" * 11 + machine.to_bytes(2, "little") + b"\0" * 44


def test_image_formats_are_told_apart_with_their_release() -> None:
    facts = arm_own_kernel.image_facts(arm64_image())
    assert (facts.arch, facts.release) == ("arm64", RELEASE)
    packed = arm_own_kernel.image_facts(gzip.compress(arm64_image()))
    assert (packed.arch, packed.release, packed.form) == (
        "arm64", RELEASE, "gzip-compressed arm64 Image"
    )  # fmt: skip
    armhf = arm_own_kernel.image_facts(zimage(b"Linux version 6.1.0-57-armmp-lpae (d@e) #1"))
    assert (armhf.arch, armhf.release) == ("arm", "6.1.0-57-armmp-lpae")  # from the xz payload
    assert arm_own_kernel.image_facts(bzimage()).arch == "x86"
    assert arm_own_kernel.image_facts(elf(62)).arch == "x86_64"
    assert arm_own_kernel.image_facts(elf(183)).arch == "arm64"
    assert arm_own_kernel.image_facts(b"something else").arch is None


def own_kernel(
    tmp_path: Path,
    image: bytes | None = None,
    release: str = RELEASE,
    builtin: tuple[str, ...] = ("virtio_pci", "virtio_blk", "ext4", "9pnet_virtio", "9p"),
) -> tuple[Path, Path]:
    """An Image and a modules directory as make modules_install writes them."""
    kernel = tmp_path / "Image"
    kernel.write_bytes(arm64_image() if image is None else image)
    modules = tmp_path / "modules" / "lib" / "modules" / release
    (modules / "kernel" / "crypto").mkdir(parents=True)
    (modules / "kernel" / "crypto" / "algif_skcipher.ko").write_bytes(elf(183))
    (modules / "modules.dep").write_text(
        "kernel/crypto/algif_skcipher.ko: kernel/crypto/af_alg.ko\n"
    )
    paths = {"virtio_pci": "drivers/virtio", "virtio_blk": "drivers/block", "ext4": "fs/ext4"}
    (modules / "modules.builtin").write_text(
        "".join(f"kernel/{paths.get(name, 'net/9p')}/{name}.ko\n" for name in builtin)
    )
    return kernel, modules


def built_tree(tmp_path: Path, release: str = RELEASE, symvers: bool = True) -> Path:
    tree = tmp_path / "linux"
    (tree / "include" / "config").mkdir(parents=True)
    (tree / "Makefile").write_text("# kernel\n")
    (tree / ".config").write_text("CONFIG_ARM64=y\nCONFIG_MODULES=y\n")
    (tree / "include" / "config" / "kernel.release").write_text(release + "\n")
    if symvers:
        (tree / "Module.symvers").write_text("")
    return tree


def check(kernel: Path, modules: Path | None, needs_build: bool = False) -> tuple[str, Path | None]:
    return arm_own_kernel.check_own_kernel(ARM64, kernel, modules, needs_build)


def test_a_kernel_with_its_boot_path_built_in_is_accepted(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path)
    (modules / "build").symlink_to(built_tree(tmp_path))
    release, build = check(kernel, modules, needs_build=True)
    assert release == RELEASE and build == modules / "build"


def test_an_x86_or_32_bit_kernel_given_to_the_arm64_board_is_refused(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path, image=bzimage())
    with pytest.raises(BoardError, match=r"Image is not an arm64 kernel \(x86 bzImage\): build it"):
        check(kernel, modules)
    kernel.write_bytes(zimage(BANNER))
    with pytest.raises(BoardError, match=r"not an arm64 kernel \(32-bit ARM zImage\)"):
        check(kernel, modules)
    kernel.write_bytes(arm64_image())
    wrong = r"not an arm kernel \(arm64 Image\): build it with ARCH=arm "
    with pytest.raises(BoardError, match=wrong):
        arm_own_kernel.check_own_kernel(ARMHF, kernel, modules, False)


def test_modules_of_another_release_are_refused_before_boot(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path, release="6.1.0-57-arm64")
    with pytest.raises(BoardError) as raised:
        check(kernel, modules)
    message = str(raised.value)
    assert "\n" not in message
    assert f"is for release 6.1.0-57-arm64, but --hwcrypto-kernel {kernel} is {RELEASE}" in message


def test_modules_of_another_architecture_are_refused(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path)
    (modules / "kernel" / "crypto" / "algif_skcipher.ko").write_bytes(elf(62))
    with pytest.raises(
        BoardError, match=re.escape("algif_skcipher.ko is an x86_64 module, not arm64")
    ):
        check(kernel, modules)


def test_missing_modules_or_modules_dep_say_what_to_run(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path)
    with pytest.raises(BoardError, match="pass --hwcrypto-modules"):
        check(kernel, None)
    (modules / "modules.dep").unlink()
    with pytest.raises(BoardError, match=re.escape("has no modules.dep: run depmod")):
        check(kernel, modules)
    with pytest.raises(BoardError, match="not found: check --hwcrypto-kernel"):
        check(tmp_path / "nothing", modules)


def test_what_the_boot_path_lacks_is_named_with_its_option(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path, builtin=("virtio_pci", "ext4", "9pnet_virtio"))
    with pytest.raises(BoardError) as raised:
        check(kernel, modules)
    assert "virtio_blk (CONFIG_VIRTIO_BLK), 9p (CONFIG_9P_FS)" in str(raised.value)
    # as modules (Debian's way) they are there too
    dep = modules / "modules.dep"
    dep.write_text(
        dep.read_text()
        + "kernel/drivers/block/virtio_blk.ko:\nkernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko\n"
    )
    assert check(kernel, modules)[0] == RELEASE


def test_the_build_link_is_checked_only_when_modules_are_to_be_built(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path)
    assert check(kernel, modules) == (RELEASE, None)
    with pytest.raises(BoardError, match=r"needs the kernel tree as .*/build .*: none is there"):
        check(kernel, modules, needs_build=True)
    (modules / "build").symlink_to(tmp_path / "moved-away")
    with pytest.raises(BoardError, match="moved-away, which does not exist"):
        check(kernel, modules, needs_build=True)
    (modules / "build").unlink()
    (modules / "build").symlink_to(built_tree(tmp_path, symvers=False))
    with pytest.raises(BoardError, match=re.escape("has no Module.symvers: run make ARCH=arm64")):
        check(kernel, modules, needs_build=True)
    (tmp_path / "linux" / "Module.symvers").write_text("")
    (tmp_path / "linux" / "include" / "config" / "kernel.release").write_text("6.1.193-other\n")
    with pytest.raises(BoardError, match=re.escape("was last built as 6.1.193-other")):
        check(kernel, modules, needs_build=True)


def test_the_board_checks_its_kernel_in_its_prerequisites(tmp_path: Path) -> None:
    kernel, modules = own_kernel(tmp_path, image=bzimage())
    board = QemuArmBoard(ARM64, kernel=kernel, modules_dir=modules, cache=tmp_path, environ={})
    with pytest.raises(BoardError, match="not an arm64 kernel"):
        board.kernel()
    kernel.write_bytes(arm64_image())
    board = QemuArmBoard(
        ARM64, kernel=kernel, modules_dir=modules, cache=tmp_path, environ={}, test_drivers=True
    )
    with pytest.raises(BoardError, match="building cryptodev/the test drivers"):
        board.kernel()
