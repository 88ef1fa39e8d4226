"""Board tier: these tests need a real kernel crypto API, so they run inside a virtual board
(`pytest --hwcrypto-vm=uml tests/board`) or on a real board; elsewhere they skip."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def board_kind() -> str:
    """uml or qemu inside a virtual board (set by its guest script); 'host' elsewhere."""
    return os.environ.get("HWCRYPTO_BOARD_KIND", "host")
