# SPDX-License-Identifier: MIT
"""Host programs a board starts, found in the Python environment that runs the plugin.

virtme-ng is a Python package: `pip install` puts `vng` and `virtme-run` in the
environment's scripts directory (`.venv/bin`), and `vng` starts `virtme-run` through PATH.
A venv that nobody activated is not on PATH, so a board looks in that directory first and
hands it on, in front of the caller's PATH, to everything it starts. Nothing has to be
installed globally or activated for a board to boot.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path


def environment_scripts_dir() -> Path:
    """Where this interpreter's environment installs console scripts (`<venv>/bin`)."""
    scripts = sysconfig.get_path("scripts")
    return Path(scripts) if scripts else Path(sys.executable).parent


def find_program(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`name` from this Python environment's scripts directory, else from PATH, else None."""
    beside_python = environment_scripts_dir() / name
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    path = (os.environ if environ is None else environ).get("PATH", os.defpath)
    return shutil.which(name, path=path)


def path_with_environment(environ: Mapping[str, str] | None = None) -> str:
    """The caller's PATH with this environment's scripts directory in front of it."""
    path = (os.environ if environ is None else environ).get("PATH", os.defpath)
    scripts = str(environment_scripts_dir())
    parts = [part for part in path.split(os.pathsep) if part and part != scripts]
    return os.pathsep.join([scripts, *parts])


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where built helpers are kept between runs: $XDG_CACHE_HOME/pytest-hwcrypto."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "/root")) / ".cache")
    return Path(base) / "pytest-hwcrypto"
