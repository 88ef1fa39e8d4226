# SPDX-License-Identifier: MIT
"""What the host has: a device node's numbers and mode (from stat, never assumed), which
cgroup hierarchies hold the devices controller, and the directories python needs inside."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
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


def unreachable_ancestor(path: Path) -> Path | None:
    """The first directory above `path` that others cannot search: an unprivileged
    container's root (an unmapped uid on the host) cannot pass it."""
    for ancestor in reversed(path.resolve().parents):
        try:
            if not os.stat(ancestor).st_mode & 0o001:
                return ancestor
        except FileNotFoundError:
            return None
    return None


@dataclass(frozen=True)
class PythonInside:
    """How python runs inside: the read-only binds, the interpreter, its PYTHONPATH."""

    binds: tuple[ReadOnlyBind, ...]
    interpreter: str
    pythonpath: str | None  # None: the interpreter's own environment finds the plugin


def python_inside(package_dir: Path, unprivileged: bool = False) -> PythonInside:
    """Directories to show read-only at the same paths so this interpreter and the plugin
    run inside: /usr (libc, Debian's python3, openssl), /etc (openssl.cnf, ld.so.cache),
    the venv, the interpreter it was made from, and the plugin's source tree (an editable
    install points there). An unprivileged container cannot bind what sits below a
    directory others cannot search (e.g. an interpreter under /root): it then runs
    Debian's /usr/bin/python3 with the source tree on PYTHONPATH."""
    source = package_dir.parent
    wanted = [Path("/usr"), Path("/etc"), Path(sys.prefix), Path(sys.base_prefix), source]
    interpreter, pythonpath = sys.executable, None
    if unprivileged:
        reachable = [p for p in wanted if unreachable_ancestor(p / "x") is None]
        if len(reachable) < len(wanted) or unreachable_ancestor(Path(sys.executable)):
            interpreter, pythonpath = "/usr/bin/python3", str(source.resolve())
        wanted = reachable
    binds: list[str] = []
    for path in wanted:
        resolved = str(path.resolve())
        if resolved == "/" or not Path(resolved).is_dir():
            continue
        # A directory already shown through a parent bind needs no bind of its own.
        if any(resolved == b or resolved.startswith(b + "/") for b in binds):
            continue
        binds = [b for b in binds if not b.startswith(resolved + "/")] + [resolved]
    return PythonInside(tuple(ReadOnlyBind(path) for path in binds), interpreter, pythonpath)
