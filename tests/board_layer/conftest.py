# SPDX-License-Identifier: MIT
"""Board layer: tests that boot a board from the host."""

from __future__ import annotations

import os

import pytest

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.uml import UmlBoard


@pytest.fixture
def uml_board() -> UmlBoard:
    """The UML board, or a skip that says why it cannot boot here (also inside a board:
    boards are booted from the host)."""
    board = UmlBoard()
    try:
        board.check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    if "HWCRYPTO_BOARD_RUN_DIR" in os.environ:
        pytest.skip("already inside a virtual board: boards are booted from the host")
    return board
