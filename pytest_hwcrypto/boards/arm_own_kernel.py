# SPDX-License-Identifier: MIT
"""A developer's own ARM kernel (`--hwcrypto-kernel` + `--hwcrypto-modules`), checked
before the board boots it.

Everything that can be known from the files is checked here, each problem as one line
naming the file: an image of another architecture (an x86 bzImage, a 32-bit zImage given
to qemu-arm64, ...), a modules directory of another release than the image's, modules
built for another architecture, a `build` link that is missing, dangling, unbuilt or of
another release (the board cross-builds cryptodev-linux and the test drivers against it),
and a kernel that has neither built in nor as a module what the initramfs needs to reach
the root filesystem (virtio-pci, virtio-blk, ext4, 9p over virtio). A kernel of
Debian's builds those as modules; a developer's kernel often builds them in
(`modules.builtin`, which `make modules_install` writes, says so) -- both work.

Pure file work: headers are read, compressed images inflated in memory (gzip, xz), no
QEMU runs. Unit-tested on synthetic headers.
"""

from __future__ import annotations

import gzip
import lzma
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.boards.arm_arch import ArmArch
from pytest_hwcrypto.boards.base import BoardError

# Image headers (Documentation/arch/*/booting.rst, the boot protocols)
ARM64_IMAGE_MAGIC = b"ARM\x64"  # at 0x38 of an arm64 Image
ARM64_IMAGE_MAGIC_OFFSET = 0x38
ZIMAGE_MAGIC = 0x016F2818  # little-endian word at 0x24 of a 32-bit ARM zImage
ZIMAGE_MAGIC_OFFSET = 0x24
BZIMAGE_MAGIC = b"HdrS"  # at 0x202 of an x86 bzImage
BZIMAGE_MAGIC_OFFSET = 0x202
ELF_MACHINES = {183: "arm64", 40: "arm", 62: "x86_64", 3: "x86"}
GZIP_MAGIC = b"\x1f\x8b\x08"
XZ_MAGIC = b"\xfd7zXZ\x00"
# The kernel's debian_arch words for the messages and the comparison.
ARCH_WORD = {"arm64": "arm64", "armhf": "arm"}
_BANNER = re.compile(rb"Linux version (\S+) \(")

# What the initramfs loads to reach the root filesystem and the run directory, with the
# option that builds it: each must be a module or built in.
BOOT_NEEDS = {
    "virtio_pci": "CONFIG_VIRTIO_PCI",
    "virtio_blk": "CONFIG_VIRTIO_BLK",
    "ext4": "CONFIG_EXT4_FS",
    "9pnet_virtio": "CONFIG_NET_9P_VIRTIO",
    "9p": "CONFIG_9P_FS",
}


@dataclass(frozen=True)
class ImageFacts:
    arch: str | None  # arm64, arm, x86_64, x86; None when the format is not recognised
    release: str | None  # from the "Linux version" banner, when it could be read
    form: str  # what the file is, for messages: "arm64 Image", "gzip-compressed arm64 Image"


def image_facts(data: bytes) -> ImageFacts:
    """Architecture and release of a kernel image's bytes (Image, Image.gz, zImage, vmlinux,
    bzImage)."""
    if data.startswith(GZIP_MAGIC):
        try:
            inner = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return ImageFacts(None, None, "a damaged gzip file")
        facts = image_facts(inner)
        return ImageFacts(facts.arch, facts.release, f"gzip-compressed {facts.form}")
    if data.startswith(b"\x7fELF") and len(data) >= 20:
        field = data[18:20]
        machine = int.from_bytes(field, "little" if data[5] == 1 else "big")
        arch = ELF_MACHINES.get(machine)
        return ImageFacts(arch, _banner_release(data), f"{arch or 'unknown'} ELF vmlinux")
    end = ARM64_IMAGE_MAGIC_OFFSET + len(ARM64_IMAGE_MAGIC)
    if data[ARM64_IMAGE_MAGIC_OFFSET:end] == ARM64_IMAGE_MAGIC:
        return ImageFacts("arm64", _banner_release(data), "arm64 Image")
    word = data[ZIMAGE_MAGIC_OFFSET : ZIMAGE_MAGIC_OFFSET + 4]
    if len(word) == 4 and int.from_bytes(word, "little") == ZIMAGE_MAGIC:
        return ImageFacts("arm", _compressed_release(data), "32-bit ARM zImage")
    end = BZIMAGE_MAGIC_OFFSET + len(BZIMAGE_MAGIC)
    if data[BZIMAGE_MAGIC_OFFSET:end] == BZIMAGE_MAGIC:
        return ImageFacts("x86", None, "x86 bzImage")
    return ImageFacts(None, _banner_release(data), "not a kernel image this board knows")


def _banner_release(data: bytes) -> str | None:
    found = _BANNER.search(data)
    return found.group(1).decode("ascii", "replace") if found else None


def _compressed_release(data: bytes) -> str | None:
    """The banner of a self-decompressing image (zImage): its payload inflated in memory."""
    for magic, inflate in ((XZ_MAGIC, _unxz), (GZIP_MAGIC, _gunzip)):
        start = data.find(magic)
        while start >= 0:
            payload = inflate(data[start:])
            if payload is not None:
                release = _banner_release(payload)
                if release is not None:
                    return release
            start = data.find(magic, start + 1)
    return None


def _unxz(data: bytes) -> bytes | None:
    try:
        return lzma.LZMADecompressor().decompress(data)
    except lzma.LZMAError:
        return None


def _gunzip(data: bytes) -> bytes | None:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    except zlib.error:
        return None


def module_names(listing: str) -> set[str]:
    """Module names (underscores) of a modules.dep or modules.builtin text."""
    names = set()
    for line in listing.splitlines():
        path = line.partition(":")[0].strip()
        if path:
            names.add(Path(path).name.split(".ko")[0].replace("-", "_"))
    return names


def missing_boot_support(modules_dir: Path) -> list[str]:
    """What the initramfs needs that the kernel has neither as a module nor built in
    ("virtio_blk (CONFIG_VIRTIO_BLK)"); empty when modules.builtin is absent (unknowable)."""
    builtin_file = modules_dir / "modules.builtin"
    if not builtin_file.is_file():
        return []
    present = module_names((modules_dir / "modules.dep").read_text())
    present |= module_names(builtin_file.read_text())
    return [f"{name} ({option})" for name, option in BOOT_NEEDS.items() if name not in present]


def _first_module(modules_dir: Path) -> Path | None:
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        path = line.partition(":")[0].strip()
        if path.endswith(".ko"):
            return modules_dir / path
    return None


def check_own_kernel(
    arch: ArmArch, image: Path, modules_dir: Path | None, needs_build: bool
) -> tuple[str, Path | None]:
    """(release, kernel build directory or None) of a developer's kernel for `arch`;
    BoardError with one line naming the file when it cannot be booted as given.
    `needs_build`: modules are to be cross-built against it (cryptodev, test drivers)."""
    board, wanted = arch.board, ARCH_WORD[arch.debian_arch]
    if not image.is_file():
        raise BoardError(f"{board}: kernel {image} not found: check --hwcrypto-kernel")
    facts = image_facts(image.read_bytes())
    if facts.arch is not None and facts.arch != wanted:
        raise BoardError(
            f"{board}: --hwcrypto-kernel {image} is not an {wanted} kernel ({facts.form}): "
            f"build it with ARCH={arch.kernel_arch} CROSS_COMPILE={arch.cross_compile}"
        )
    if modules_dir is None:
        raise BoardError(
            f"{board} needs the modules of --hwcrypto-kernel {image}: pass "
            "--hwcrypto-modules .../lib/modules/<release> (make modules_install "
            "INSTALL_MOD_PATH=DIR writes it, with modules.dep)"
        )
    if not (modules_dir / "modules.dep").is_file():
        raise BoardError(
            f"{board}: modules directory {modules_dir} has no modules.dep: run depmod -b "
            "<root> <release> (or make modules_install) first"
        )
    release = modules_dir.name
    if facts.release is not None and facts.release != release:
        raise BoardError(
            f"{board}: --hwcrypto-modules {modules_dir} is for release {release}, but "
            f"--hwcrypto-kernel {image} is {facts.release}: give that kernel's "
            f"lib/modules/{facts.release}"
        )
    module = _first_module(modules_dir)
    if module is not None and module.is_file():
        with open(module, "rb") as handle:
            machine = image_facts(handle.read(64)).arch
        if machine is not None and machine != wanted:
            raise BoardError(
                f"{board}: {module} is an {machine} module, not {wanted}: "
                "--hwcrypto-modules names another architecture's modules"
            )
    missing = missing_boot_support(modules_dir)
    if missing:
        raise BoardError(
            f"{board}: kernel {release} has neither as a module nor built in what the "
            f"board boots through: {', '.join(missing)} (modules.builtin in {modules_dir}); "
            "set them to y or m and rebuild"
        )
    return release, _build_dir(arch, modules_dir, release, needs_build)


def _build_dir(arch: ArmArch, modules_dir: Path, release: str, needs_build: bool) -> Path | None:
    """The kernel tree modules are cross-built against (`build` in the modules directory)."""
    build = modules_dir / "build"
    if not needs_build:
        return build if (build / "Makefile").is_file() else None
    where = f"{arch.board}: building cryptodev/the test drivers for {release} needs"
    if build.is_symlink() and not build.exists():
        raise BoardError(
            f"{where} the kernel tree, but {build} points at {build.readlink()}, which does "
            "not exist: point it at the built kernel tree (make modules_install writes the link)"
        )
    if not (build / "Makefile").is_file():
        raise BoardError(
            f"{where} the kernel tree as {build} (a link to it, which make modules_install "
            "writes): none is there"
        )
    built_release = build / "include" / "config" / "kernel.release"
    if built_release.is_file() and built_release.read_text().strip() != release:
        raise BoardError(
            f"{where} its own tree, but {build} was last built as "
            f"{built_release.read_text().strip()}"
        )
    if not (build / "Module.symvers").is_file():
        raise BoardError(
            f"{where} a built tree, and {build} has no Module.symvers: run make "
            f"ARCH={arch.kernel_arch} CROSS_COMPILE={arch.cross_compile} modules in it"
        )
    config = build / ".config"
    arch_option = {"arm64": "CONFIG_ARM64=y", "arm": "CONFIG_ARM=y"}[ARCH_WORD[arch.debian_arch]]
    if config.is_file() and arch_option not in config.read_text().splitlines():
        raise BoardError(f"{where} an {arch.kernel_arch} tree, and {config} has no {arch_option}")
    return build
