# SPDX-License-Identifier: MIT
"""The ARM boards from the host: the same contract as the other boards (exit code and
output of `hwcrypto vm BOARD --exec`, a pytest session's result files back on the host,
the console log kept). `pytest tests/board_arm` (about a minute per boot under TCG); they
skip until the board's root filesystem is built (1-2 min once, kernel included, at load
~6): `hwcrypto vm qemu-arm64 --exec true`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import arm_rootfs
from pytest_hwcrypto.boards.arm_arch import ARCHES
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.helpers import cache_dir
from pytest_hwcrypto.boards.qemu_arm import QemuArmBoard


@pytest.fixture(params=sorted(ARCHES))
def board(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if "HWCRYPTO_BOARD_RUN_DIR" in os.environ:
        pytest.skip("already inside a virtual board: boards are booted from the host")
    try:
        QemuArmBoard(ARCHES[name]).check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    if not arm_rootfs.image_path(ARCHES[name], cache_dir()).is_file():
        pytest.skip(f"{name}: no root filesystem built yet: hwcrypto vm {name} --exec true")
    return name


def _hwcrypto(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from pytest_hwcrypto.cli import main; "
         "sys.exit(main())", *args],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


def test_exec_gives_the_commands_output_and_exit_code(board: str, tmp_path: Path) -> None:
    done = _hwcrypto(
        tmp_path, "vm", board, "--exec", "uname -m; echo in=$(pwd); command -v hwcrypto; exit 7"
    )
    assert done.returncode == 7, done.stdout + done.stderr
    machine = {"qemu-arm64": "aarch64", "qemu-armhf": "armv7l"}[board]
    assert f"\n{machine}\n" in done.stdout
    assert f"in={tmp_path}" in done.stdout  # the caller's directory, over 9p
    assert f"{arm_rootfs.GUEST_VENV}/bin/hwcrypto" in done.stdout  # installed from the wheel
    assert list((tmp_path / "hwcrypto-artifacts").glob(f"{board}-*-console.log"))


def test_pytest_session_inside_writes_its_result_files_on_the_host(
    board: str, tmp_path: Path
) -> None:
    (tmp_path / "test_inside.py").write_text(
        "import platform\n"
        "def test_machine():\n    assert platform.machine() in ('aarch64', 'armv7l')\n"
        "def test_fails():\n    assert False\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--hwcrypto-vm={board}",
         "--junitxml=out/junit.xml", "test_inside.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # one test failed inside
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert 'tests="2"' in junit and 'failures="1"' in junit
