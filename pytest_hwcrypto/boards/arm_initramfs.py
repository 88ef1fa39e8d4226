# SPDX-License-Identifier: MIT
"""The ARM boards' initramfs: busybox, the few modules that reach the root filesystem, and
an /init that mounts it and hands over to the board's guest script.

Debian's ARM kernels build virtio-pci, virtio-blk, ext4 and 9p as modules, so something
must load them before the root filesystem (boards/arm_rootfs.py, on virtio-blk) and the
run directory (9p) can be mounted. The archive is written here (newc cpio, uncompressed:
TCG would spend seconds inflating it) from the image's own static busybox and the modules
of the kernel being booted, in dependency order from its modules.dep.
"""

from __future__ import annotations

import lzma
import os
import stat
from collections.abc import Iterable
from pathlib import Path

# What /init loads: the PCI transport, the disk, ext4, 9p (run directory, working
# directory and kernel modules come from the host over 9p).
BOOT_MODULES = ("virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "9pnet_virtio", "9p")
RUN_TAG = "hwcrypto-run"
# Where /init mounts the run directory inside the new root, before the guest script
# (which lives there) puts it at its host path.
RUN_MOUNT = "/run/hwcrypto-board"
GUEST_SCRIPT = "guest.sh"
NINEP_OPTIONS = "trans=virtio,version=9p2000.L,msize=262144"

INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
if ! mount -t devtmpfs devtmpfs /dev; then
    echo "hwcrypto initramfs: no devtmpfs in this kernel (CONFIG_DEVTMPFS)"
    poweroff -f
fi
for module in $(cat /modules.order); do
    insmod "/modules/$module" 2>/dev/null || echo "hwcrypto initramfs: insmod $module failed"
done
tries=0
while [ ! -b /dev/vda ] && [ $tries -lt 200 ]; do sleep 0.1; tries=$((tries + 1)); done
if [ ! -b /dev/vda ]; then
    echo "hwcrypto initramfs: no /dev/vda after 20 s: the kernel sees no virtio disk on PCI" \
        "(CONFIG_PCI_HOST_GENERIC, CONFIG_VIRTIO_PCI, CONFIG_VIRTIO_BLK)"
    poweroff -f
fi
if ! mount -t ext4 /dev/vda /newroot; then
    echo "hwcrypto initramfs: cannot mount the root filesystem (/dev/vda, ext4: CONFIG_EXT4_FS)"
    poweroff -f
fi
mkdir -p /newroot{RUN_MOUNT}
if ! mount -t 9p -o {NINEP_OPTIONS} {RUN_TAG} /newroot{RUN_MOUNT}; then
    echo "hwcrypto initramfs: cannot mount the run directory ({RUN_TAG} over 9p:" \
        "CONFIG_NET_9P_VIRTIO, CONFIG_9P_FS)"
    poweroff -f
fi
for fs in proc sys dev; do mount --move /$fs /newroot/$fs; done
exec switch_root /newroot /bin/sh {RUN_MOUNT}/{GUEST_SCRIPT}
"""


def module_closure(modules_dir: Path, wanted: Iterable[str]) -> list[str]:
    """Paths (relative to modules_dir) of `wanted` modules and what they depend on,
    dependencies first; names the kernel builds in (or lacks) are left out."""
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
        name = Path(path).name.split(".ko")[0].replace("-", "_")
        by_name[name] = path
    ordered: list[str] = []

    def visit(path: str) -> None:
        if path in ordered:
            return
        for dependency in deps.get(path, []):
            visit(dependency)
        ordered.append(path)

    for name in wanted:
        found = by_name.get(name.replace("-", "_"))
        if found is not None:
            visit(found)
    return ordered


def _module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


class _Cpio:
    """A newc ("070701") cpio archive, as the kernel unpacks an initramfs."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.inode = 1

    def add(self, name: str, mode: int, data: bytes = b"") -> None:
        encoded = name.encode() + b"\0"
        fields = (self.inode, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0)
        header = b"070701" + b"".join(b"%08X" % value for value in fields)
        self.inode += 1
        self.parts.append(header + encoded + b"\0" * (-(110 + len(encoded)) % 4))
        self.parts.append(data + b"\0" * (-len(data) % 4))

    def directory(self, name: str) -> None:
        self.add(name, stat.S_IFDIR | 0o755)

    def file(self, name: str, data: bytes, executable: bool = False) -> None:
        self.add(name, stat.S_IFREG | (0o755 if executable else 0o644), data)

    def bytes(self) -> bytes:
        self.add("TRAILER!!!", 0)
        return b"".join(self.parts)


def write_initramfs(target: Path, busybox: Path, modules_dir: Path) -> list[str]:
    """Write the initramfs to `target`; the module names it loads, in order."""
    archive = _Cpio()
    for directory in ("bin", "dev", "proc", "sys", "newroot", "modules"):
        archive.directory(directory)
    archive.file("bin/busybox", busybox.read_bytes(), executable=True)
    archive.file("init", INIT.encode(), executable=True)
    order = []
    for relative in module_closure(modules_dir, BOOT_MODULES):
        name = Path(relative).name.removesuffix(".xz")
        archive.file(f"modules/{name}", _module_bytes(modules_dir / relative))
        order.append(name)
    archive.file("modules.order", ("\n".join(order) + "\n").encode())
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(archive.bytes())
    os.replace(partial, target)
    return order
