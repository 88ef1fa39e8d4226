"""Board tier: these tests need a real kernel crypto API, so they run inside a virtual board
(`pytest --hwcrypto-vm=uml tests/board`) or on a real board; elsewhere they skip."""

from __future__ import annotations

import os
from collections.abc import Iterator
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
