# SPDX-License-Identifier: MIT
"""boards/registry.py: every board kind of the vocabulary has one board, found the same way
by the plugin (--hwcrypto-vm) and by the command line (hwcrypto vm, hwcrypto ab)."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.registry import BOARDS, make_board
from pytest_hwcrypto.boards.uml import UmlBoard
from pytest_hwcrypto.cli import build_parser
from pytest_hwcrypto.vocabulary import BoardKind


def test_every_board_kind_has_a_board() -> None:
    assert set(BOARDS) == set(BoardKind)


@pytest.mark.parametrize("kind", BoardKind.values())
def test_hwcrypto_vm_offers_every_board_kind(kind: str) -> None:
    args = build_parser().parse_args(["vm", kind])
    assert args.board == kind


def test_hwcrypto_vm_refuses_a_kind_the_registry_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["vm", "kvm"])
    assert "invalid choice: 'kvm'" in capsys.readouterr().err


def test_the_word_and_the_member_give_the_same_board() -> None:
    assert type(make_board("uml", None, None)) is type(make_board(BoardKind.UML, None, None))
    assert isinstance(make_board(BoardKind.UML, None, None), UmlBoard)


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(
        BoardError,
        match=r"unknown virtual board 'kvm' \(choose uml, qemu, qemu-arm64 or qemu-armhf\)",
    ):
        make_board("kvm", None, None)
