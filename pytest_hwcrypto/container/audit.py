# SPDX-License-Identifier: MIT
"""Container configs on this system that restrict no devices.

A container whose config (with everything it includes) has no `devices.deny = a` gets
every device of the host: mknod and open succeed inside (seen on both boards with LXC's
busybox template without common.conf). The lxc suite audits the plugin's own configs and
those a board profile names (`[containers] configs`), by default every config under LXC's
default path.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pytest_hwcrypto.container.config import has_device_policy, includes

DEFAULT_LXC_PATH = "/var/lib/lxc"
_MAX_INCLUDE_DEPTH = 8


def config_has_device_policy(path: Path, depth: int = 0) -> bool:
    """Does `path`, or a file it includes (a directory: its *.conf), deny devices?"""
    text = path.read_text(errors="replace")
    if has_device_policy(text):
        return True
    if depth >= _MAX_INCLUDE_DEPTH:
        return False
    for included in includes(text):
        target = Path(included)
        files = sorted(target.glob("*.conf")) if target.is_dir() else [target]
        for file in files:
            if file.is_file() and config_has_device_policy(file, depth + 1):
                return True
    return False


def default_patterns() -> list[str]:
    """Every container config under LXC's system path (`lxc-config lxc.lxcpath`)."""
    lxc_path = DEFAULT_LXC_PATH
    if shutil.which("lxc-config"):
        done = subprocess.run(
            ["lxc-config", "lxc.lxcpath"], capture_output=True, text=True, check=False
        )
        lxc_path = done.stdout.strip() or DEFAULT_LXC_PATH
    return [f"{lxc_path}/*/config"]


def unrestricted_configs(patterns: Sequence[str]) -> list[Path]:
    """The configs matching `patterns` that restrict no devices."""
    found: list[Path] = []
    for pattern in patterns:
        for name in sorted(glob.glob(pattern)):
            path = Path(name)
            try:
                if not config_has_device_policy(path):
                    found.append(path)
            except OSError:
                continue  # unreadable or vanished: not ours to judge
    return found
