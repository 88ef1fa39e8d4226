# SPDX-License-Identifier: MIT
"""Kernel images the QEMU board boots: which Debian kernel is the default, the release a
bzImage carries, and the uncompressed PVH vmlinux that saves TCG the decompression.

Pure file work (no QEMU, no guest): reading headers and unpacking, so it is tested on the
host against the installed Debian kernel.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

DEBIAN_KERNEL_DIR = Path("/boot")
DEBIAN_KERNEL_GLOB = "vmlinuz-*-amd64"
HOST_MODULES_ROOT = Path("/lib/modules")
_XZ_MAGIC = b"\xfd7zXZ\x00"
# The version string lives in the real-mode setup code, which is at most 64 KiB + a sector.
_SETUP_HEADER_REACH = 0x10000 + 0x200


def bzimage_release(kernel: Path) -> str | None:
    """The release string an x86 bzImage carries in its setup header, if it has one.

    Boot protocol: "HdrS" at 0x202; the 16-bit field at 0x20e points (relative to 0x200)
    at a NUL-terminated "6.1.0-57-amd64 (debian-kernel@...) #1 SMP ..." string.
    """
    try:
        with open(kernel, "rb") as image:
            header = image.read(_SETUP_HEADER_REACH)
    except OSError:
        return None
    if header[0x202:0x206] != b"HdrS" or len(header) < 0x210:
        return None
    offset = int.from_bytes(header[0x20E:0x210], "little") + 0x200
    text = header[offset : offset + 256].split(b"\0", 1)[0].decode("ascii", "replace")
    words = text.split()
    return words[0] if words else None


def uncompressed_pvh_kernel(bzimage: Path, release: str, target_dir: Path) -> Path | None:
    """The bzImage's vmlinux (an ELF QEMU boots directly through PVH), or None.

    Under TCG the bzImage's own decompressor needs ~5-6 s to unpack Debian's xz payload;
    Python's lzma does it in ~1 s and QEMU then enters the kernel at its PVH entry point,
    skipping BIOS real-mode setup too. Only for kernels whose config (beside the image,
    as Debian installs it) says CONFIG_PVH=y, since QEMU refuses an ELF kernel without the
    PVH note, and only for xz payloads (Debian's CONFIG_KERNEL_XZ); otherwise None and the
    bzImage is booted as it is.
    """
    # /boot/config-<release>, or `config` beside a split package's vmlinuz.unsigned
    configs = [bzimage.parent / f"config-{release}", bzimage.parent / "config"]
    config = next((path for path in configs if path.is_file()), configs[0])
    try:
        if "CONFIG_PVH=y" not in config.read_text(errors="replace").splitlines():
            return None
        image = bzimage.read_bytes()
    except OSError:
        return None
    start = image.find(_XZ_MAGIC)
    if start < 0:
        return None
    try:
        vmlinux = lzma.LZMADecompressor().decompress(image[start:])
    except lzma.LZMAError:
        return None
    if not vmlinux.startswith(b"\x7fELF"):
        return None
    target = target_dir / f"vmlinux-{release}"
    target.write_bytes(vmlinux)
    return target


def _release_sort_key(release: str) -> list[tuple[int, str]]:
    """Natural order: 6.1.0-57 after 6.1.0-9."""
    return [
        (int(part), "") if part.isdigit() else (-1, part)
        for part in re.split(r"(\d+)", release)
        if part
    ]


def newest_debian_kernel(
    boot_dir: Path = DEBIAN_KERNEL_DIR, modules_root: Path = HOST_MODULES_ROOT
) -> Path | None:
    """The newest /boot/vmlinuz-*-amd64 whose modules are installed, or None."""
    candidates = [
        image
        for image in boot_dir.glob(DEBIAN_KERNEL_GLOB)
        if (modules_root / image.name[len("vmlinuz-") :]).is_dir()
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda image: _release_sort_key(image.name[len("vmlinuz-") :]))
