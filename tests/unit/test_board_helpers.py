# SPDX-License-Identifier: MIT
"""Board helpers come from the running interpreter's environment, activated or not."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_hwcrypto.boards.helpers import (
    environment_scripts_dir,
    find_program,
    path_with_environment,
)


def test_program_beside_the_interpreter_wins_over_path(tmp_path: Path) -> None:
    # pytest is running from this environment, so its console script is in the scripts dir.
    ours = environment_scripts_dir() / "pytest"
    assert ours.is_file(), f"pytest not installed in {environment_scripts_dir()}"
    decoy = tmp_path / "pytest"
    decoy.write_text("#!/bin/sh\n")
    decoy.chmod(0o755)
    assert find_program("pytest", {"PATH": str(tmp_path)}) == str(ours)


def test_program_only_on_path_is_found_there(tmp_path: Path) -> None:
    tool = tmp_path / "hwcrypto-helper-only-on-path"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert find_program(tool.name, {"PATH": str(tmp_path)}) == str(tool)
    assert find_program(tool.name, {"PATH": "/nonexistent"}) is None


def test_path_gets_the_scripts_dir_in_front_once() -> None:
    scripts = str(environment_scripts_dir())
    path = path_with_environment({"PATH": os.pathsep.join(["/usr/bin", scripts, "/bin"])})
    assert path.split(os.pathsep) == [scripts, "/usr/bin", "/bin"]
