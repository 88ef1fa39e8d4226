"""What the host has: a device node's numbers and mode (from stat, never assumed), which
cgroup hierarchies hold the devices controller, and the directories python needs inside."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from pytest_hwcrypto.container.config import DeviceNode, ReadOnlyBind

PROC_MOUNTS = Path("/proc/self/mounts")


def read_node(path: str) -> DeviceNode:
    """The host's node at `path`; ValueError (naming it) when it is not a device node."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise ValueError(f"{path}: {error.strerror}") from None
    if stat.S_ISCHR(info.st_mode):
        kind = "c"
    elif stat.S_ISBLK(info.st_mode):
        kind = "b"
    else:
        raise ValueError(f"{path}: not a device node")
    return DeviceNode(
        path=path,
        kind=kind,
        major=os.major(info.st_rdev),
        minor=os.minor(info.st_rdev),
        mode=stat.S_IMODE(info.st_mode),
    )


def cgroup_v1_devices_mounted(mounts: Path = PROC_MOUNTS) -> bool:
    """Is a cgroup v1 hierarchy with the devices controller mounted (then the v1 key counts)?"""
    try:
        text = mounts.read_text()
    except OSError:
        return False
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup" and "devices" in fields[3].split(","):
            return True
    return False


def cgroup2_mounted(mounts: Path = PROC_MOUNTS) -> bool:
    try:
        return any(line.split()[2:3] == ["cgroup2"] for line in mounts.read_text().splitlines())
    except OSError:
        return False


def python_binds(package_dir: Path) -> tuple[ReadOnlyBind, ...]:
    """Directories to show read-only at the same paths so this interpreter and the plugin
    run inside: /usr (libc, busybox-less tools, Debian's python3), /etc (openssl.cnf,
    ld.so.cache), the venv, the interpreter it was made from, and the plugin's source tree
    (an editable install points there)."""
    wanted = [Path("/usr"), Path("/etc"), Path(sys.prefix), Path(sys.base_prefix)]
    wanted.append(package_dir.parent)
    binds: list[str] = []
    for path in wanted:
        resolved = str(path.resolve())
        if resolved == "/" or not Path(resolved).is_dir():
            continue
        # A directory already shown through a parent bind needs no bind of its own.
        if any(resolved == b or resolved.startswith(b + "/") for b in binds):
            continue
        binds = [b for b in binds if not b.startswith(resolved + "/")] + [resolved]
    return tuple(ReadOnlyBind(path) for path in binds)
