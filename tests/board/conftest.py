# SPDX-License-Identifier: MIT
"""Board tier: these tests need a real kernel crypto API, so they run inside a virtual board
(`pytest --hwcrypto-vm=uml tests/board`) or on a real board; elsewhere they skip."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto import ledger
from pytest_hwcrypto.block import tools


@pytest.fixture(scope="session")
def board_kind() -> str:
    """uml or qemu inside a virtual board (set by its guest script); 'host' elsewhere."""
    return os.environ.get("HWCRYPTO_BOARD_KIND", "host")


@pytest.fixture
def block_state_dir(
    board_kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A private ledger state directory for tests that make loop and dm devices: skips off a
    board, or where losetup/dmsetup/device-mapper are missing (with how to fix it)."""
    if board_kind == "host":
        pytest.skip("needs a board: pytest --hwcrypto-vm=uml tests/board")
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path))
    yield tmp_path


@pytest.fixture
def hwcrypto_sweep() -> Callable[[], subprocess.CompletedProcess[str]]:
    """Run `hwcrypto sweep` as a user would, in a process of its own (the state directory
    comes from the environment the test set); output and exit code come back."""

    def sweep() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_hwcrypto.cli", "sweep"],
            capture_output=True,
            text=True,
            check=False,
        )

    return sweep
