# SPDX-License-Identifier: MIT
"""A board boots from a venv nobody activated, with only the system directories on PATH.

That is how a newcomer runs `.venv/bin/pytest` or `.venv/bin/hwcrypto` on a fresh machine
(and how `.ci/run` runs them): virtme-ng lives only in the venv, and `vng` starts
`virtme-run` through PATH. A machine with virtme-ng installed outside the venv hides the
failure, so the test refuses to count there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto.boards.helpers import environment_scripts_dir
from pytest_hwcrypto.boards.qemu import VIRTME_PROGRAMS
from pytest_hwcrypto.run import inside_board

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
BOOT_TIMEOUT = 300.0


@pytest.mark.qemu
def test_qemu_board_boots_with_only_system_directories_on_path(tmp_path: Path) -> None:
    if inside_board():
        pytest.skip("inside a virtual board: this test boots one, run it on the host")
    hwcrypto = environment_scripts_dir() / "hwcrypto"
    if not hwcrypto.is_file():
        pytest.skip(f"{hwcrypto} is not installed: pip install -e . in this environment")
    for program in VIRTME_PROGRAMS:
        if not (environment_scripts_dir() / program).is_file():
            pytest.skip("virtme-ng is not in this environment: pip install virtme-ng")
        outside = shutil.which(program, path=SYSTEM_PATH)
        if outside is not None:
            pytest.skip(
                f"{outside} is installed outside the venv, so this machine cannot show "
                "whether the board finds the venv's own copy; uninstall it to run this test"
            )
    # What `env -i HOME=$HOME PATH=/usr/sbin:/usr/bin:/sbin:/bin` leaves a command.
    environ = {"HOME": os.environ.get("HOME", "/root"), "PATH": SYSTEM_PATH}
    done = subprocess.run(
        [str(hwcrypto), "vm", "qemu", "--exec", "echo guest-ran; command -v hwcrypto"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=BOOT_TIMEOUT,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "guest-ran" in output
    # The command inside finds this environment's programs as the board's helpers did.
    assert str(hwcrypto) in output
