# SPDX-License-Identifier: MIT
"""The LXC configuration of a container, written the way a user passes a device through.

Pure: a `ContainerSpec` in, the config text and the autodev hook script out. The recipe
(Turris Omnia's, for Marvell CESA behind /dev/crypto) is three parts per device:

* the device cgroup allows it: `lxc.cgroup2.devices.allow = c MAJ:MIN rwm` (and the v1
  key `lxc.cgroup.devices.allow` where a v1 devices hierarchy is mounted), after a
  `deny = a` and the standard allows of LXC's common.conf;
* a bind mount of the host's node: `lxc.mount.entry = /dev/X dev/X none bind,create=file`
  (without `create=file` the mount fails: mount entries run before autodev fills /dev);
* `lxc.autodev = 1` and an `lxc.hook.autodev` script that mknods the node with the host's
  numbers and mode, so a restart brings it back -- and skips a node that is already there,
  because an unconditional mknod beside the bind aborts the start.

Devices listed as `refused` get their node (hook and bind) but no allow line: the cgroup
must then refuse them. `device_policy=False` writes no device lines at all, as LXC's
busybox template does without common.conf: such a container gets every device.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

# LXC's common.conf device allows: null, zero, full, random, urandom, tty, console, ptmx,
# the pty slaves and fuse; plus mknod (`m`) of nothing else. /dev/full (1:7) is left out
# on purpose: a standard node that autodev makes but that the cgroup refuses.
STANDARD_ALLOWS = (
    "c 1:3 rwm",
    "c 1:5 rwm",
    "c 1:8 rwm",
    "c 1:9 rwm",
    "c 5:0 rwm",
    "c 5:1 rwm",
    "c 5:2 rwm",
    "c 136:* rwm",
)
CGROUP2_KEY = "lxc.cgroup2.devices"
CGROUP1_KEY = "lxc.cgroup.devices"
HOOK_NAME = "autodev-hook"


@dataclass(frozen=True)
class DeviceNode:
    """A device node as the host has it (read by container.nodes.read_node, never assumed)."""

    path: str  # absolute, under /dev
    kind: str  # "c" or "b"
    major: int
    minor: int
    mode: int  # permission bits, e.g. 0o666

    def __post_init__(self) -> None:
        if self.kind not in ("c", "b"):
            raise ValueError(f"{self.path}: a device kind is 'c' or 'b', not {self.kind!r}")
        if not self.path.startswith("/dev/") or ".." in PurePosixPath(self.path).parts:
            raise ValueError(f"{self.path}: only nodes under /dev are passed through")

    @property
    def inside(self) -> str:
        """The node's path relative to the container's root (`dev/crypto`)."""
        return self.path.lstrip("/")

    @property
    def numbers(self) -> str:
        return f"{self.major}:{self.minor}"

    def allow_line(self) -> str:
        return f"{self.kind} {self.numbers} rwm"


@dataclass(frozen=True)
class ReadOnlyBind:
    """A host directory shown read-only at the same path inside (python3, the venv)."""

    path: str

    def entry(self) -> str:
        inside = self.path.lstrip("/")
        return f"lxc.mount.entry = {self.path} {inside} none ro,rbind,create=dir 0 0"


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    rootfs: str  # the rootfs directory on the host
    hook_path: str  # where the autodev hook script is written
    devices: tuple[DeviceNode, ...] = ()  # passed through and allowed
    refused: tuple[DeviceNode, ...] = ()  # node made, not allowed
    binds: tuple[ReadOnlyBind, ...] = ()
    device_policy: bool = True
    cgroup_v1_devices: bool = False  # a v1 devices hierarchy is mounted: write its key too
    apparmor_unconfined: bool = True  # AppArmor on without apparmor_parser (QEMU board)
    idmap: tuple[str, ...] = field(default=())  # e.g. ("u 0 100000 65536", "g 0 100000 65536")
    init_command: str = "/bin/busybox sleep 2147483647"


def render_config(spec: ContainerSpec) -> str:
    """The container's `config` file."""
    lines = [
        "# Written by pytest-hwcrypto for one test run; removed with the container.",
        f"lxc.uts.name = {spec.name}",
        f"lxc.rootfs.path = dir:{spec.rootfs}",
        "lxc.net.0.type = empty",
        "lxc.mount.auto = proc:mixed sys:mixed cgroup:mixed",
        "lxc.tty.max = 0",
        "lxc.pty.max = 16",
        f"lxc.init.cmd = {spec.init_command}",
    ]
    if spec.apparmor_unconfined:
        lines.append("lxc.apparmor.profile = unconfined")
    lines += [f"lxc.idmap = {line}" for line in spec.idmap]
    if spec.device_policy:
        lines += _device_policy(spec)
    lines += [bind.entry() for bind in spec.binds]
    for node in (*spec.devices, *spec.refused):
        lines.append(f"lxc.mount.entry = {node.path} {node.inside} none bind,create=file 0 0")
    lines += ["lxc.autodev = 1", f"lxc.hook.autodev = {spec.hook_path}"]
    return "\n".join(lines) + "\n"


def _device_policy(spec: ContainerSpec) -> list[str]:
    keys = [CGROUP2_KEY] + ([CGROUP1_KEY] if spec.cgroup_v1_devices else [])
    lines: list[str] = []
    for key in keys:
        lines.append(f"{key}.deny = a")
        lines += [f"{key}.allow = {allow}" for allow in STANDARD_ALLOWS]
        lines += [f"{key}.allow = {node.allow_line()}" for node in spec.devices]
    return lines


def render_autodev_hook(nodes: Sequence[DeviceNode]) -> str:
    """The hook: mknod each node with the host's numbers and mode unless it already exists."""
    lines = [
        "#!/bin/sh",
        "# lxc.hook.autodev: runs with LXC_ROOTFS_MOUNT set, before init.",
        "set -e",
    ]
    for node in nodes:
        target = shlex.quote(node.inside)
        lines += [
            f'node="$LXC_ROOTFS_MOUNT"/{target}',
            'mkdir -p "$(dirname "$node")"',
            f'[ -e "$node" ] || mknod -m {node.mode:o} "$node" {node.kind} '
            f"{node.major} {node.minor}",
        ]
    return "\n".join(lines) + "\n"


def has_device_policy(config_text: str) -> bool:
    """Does a container config restrict devices (a `devices.deny = a` in either key)?"""
    for raw in config_text.splitlines():
        line = raw.split("#", 1)[0].strip()
        key, _, value = line.partition("=")
        if key.strip() in (f"{CGROUP2_KEY}.deny", f"{CGROUP1_KEY}.deny") and value.strip() == "a":
            return True
    return False


def includes(config_text: str) -> list[str]:
    """The files and directories a config pulls in with `lxc.include`, in order."""
    found = []
    for raw in config_text.splitlines():
        key, _, value = raw.split("#", 1)[0].partition("=")
        if key.strip() == "lxc.include" and value.strip():
            found.append(value.strip())
    return found
