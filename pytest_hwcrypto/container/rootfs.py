# SPDX-License-Identifier: MIT
"""A container's root filesystem: busybox-static for the shell and init, the host's own
directories (read-only binds, container.nodes.python_inside) for python3 and the plugin.

Nothing is copied from the host but the busybox binary; the directory is a few hundred
symlinks and empty mount points, made in ~0.1 s on a tmpfs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# Mount points LXC and the binds need, and the scratch directory commands write to.
_DIRECTORIES = ("bin", "dev", "proc", "sys", "tmp", "run", "root", "etc", "usr")
# Top-level names a merged-/usr host keeps as symlinks into /usr (bin is busybox's here).
_USR_LINKS = ("lib", "lib32", "lib64", "libx32", "sbin")


def busybox_path() -> str | None:
    return shutil.which("busybox")


def build_rootfs(rootfs: Path, busybox: str) -> list[str]:
    """Make `rootfs`; returns host directories that must be bound because they are not
    symlinks into /usr on this host (a split-/usr system's /lib, /sbin)."""
    rootfs.mkdir(parents=True, mode=0o755)
    for name in _DIRECTORIES:
        (rootfs / name).mkdir(mode=0o755, exist_ok=True)
    (rootfs / "tmp").chmod(0o1777)
    extra_binds: list[str] = []
    for name in _USR_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            os.symlink(os.readlink(host), rootfs / name)
        elif host.is_dir():
            (rootfs / name).mkdir(mode=0o755)
            extra_binds.append(str(host))
    shutil.copy2(busybox, rootfs / "bin" / "busybox")
    applets = subprocess.run(
        [busybox, "--list"], capture_output=True, text=True, check=False
    ).stdout.split()
    for applet in applets or ["sh"]:
        if applet != "busybox":
            (rootfs / "bin" / applet).symlink_to("busybox")
    return extra_binds


def chown_tree(rootfs: Path, uid: int, gid: int) -> None:
    """Give an unprivileged container's root (mapped to `uid`) its own rootfs."""
    for directory, names, files in os.walk(rootfs):
        os.lchown(directory, uid, gid)
        for name in (*names, *files):
            os.lchown(os.path.join(directory, name), uid, gid)
