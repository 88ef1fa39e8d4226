# SPDX-License-Identifier: MIT
"""Which board class boots each board kind: one mapping from the vocabulary's BoardKind,
used by the plugin (--hwcrypto-vm, boards/runner.py) and the command line (hwcrypto vm,
hwcrypto ab) alike. A new board is one entry here and one word in BoardKind."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from pytest_hwcrypto.boards.base import Board, BoardError
from pytest_hwcrypto.boards.kmod_build import THIRD_PARTY_ENV
from pytest_hwcrypto.boards.uml import UmlBoard
from pytest_hwcrypto.vocabulary import BoardKind


@dataclass(frozen=True)
class BoardRequest:
    """What the caller asks of a board, whatever its kind.

    `cryptodev`: give the board /dev/crypto (cryptodev-linux, built for its kernel);
    `test_drivers`: load the test-only drivers of pytest_hwcrypto/kmod (built for its kernel);
    `third_party`: where cryptodev-linux's source is (else $HWCRYPTO_THIRD_PARTY, else
    shared/third_party beside a source checkout).
    """

    kind: BoardKind
    kernel: Path | None
    modules_dir: Path | None
    cryptodev: bool = False
    test_drivers: bool = False
    third_party: str | None = None

    def environ(self) -> dict[str, str]:
        environ = dict(os.environ)
        if self.third_party:
            environ[THIRD_PARTY_ENV] = self.third_party
        return environ


def _uml(request: BoardRequest) -> Board:
    if request.cryptodev:
        raise BoardError(UML_CANNOT_LOAD_CRYPTODEV)
    if request.test_drivers:
        raise BoardError(UML_CANNOT_LOAD_TEST_DRIVERS)
    return UmlBoard(kernel=request.kernel, modules_dir=request.modules_dir)


def _qemu(request: BoardRequest) -> Board:
    # Imported here: the QEMU board pulls in more than a UML-only user needs.
    from pytest_hwcrypto.boards.qemu import QemuBoard

    return QemuBoard(
        kernel=request.kernel,
        modules_dir=request.modules_dir,
        environ=request.environ(),
        cryptodev=request.cryptodev,
        test_drivers=request.test_drivers,
    )


def _qemu_arm(request: BoardRequest) -> Board:
    from pytest_hwcrypto.boards.arm_arch import ARCHES
    from pytest_hwcrypto.boards.qemu_arm import QemuArmBoard

    return QemuArmBoard(
        ARCHES[request.kind.value],
        kernel=request.kernel,
        modules_dir=request.modules_dir,
        environ=request.environ(),
        cryptodev=request.cryptodev,
        test_drivers=request.test_drivers,
    )


BOARDS: Mapping[BoardKind, Callable[[BoardRequest], Board]] = MappingProxyType(
    {
        BoardKind.UML: _uml,
        BoardKind.QEMU: _qemu,
        BoardKind.QEMU_ARM64: _qemu_arm,
        BoardKind.QEMU_ARMHF: _qemu_arm,
    }
)


def make_board(
    kind: str,
    kernel: str | None,
    modules: str | None,
    cryptodev: bool = False,
    test_drivers: bool = False,
    third_party: str | None = None,
) -> Board:
    """The board of this kind (a BoardKind, or the same word from the command line); the
    options are BoardRequest's."""
    try:
        board_kind = BoardKind(kind)
    except ValueError:
        *others, last = BoardKind.values()
        known = f"{', '.join(others)} or {last}"
        raise BoardError(f"unknown virtual board {kind!r} (choose {known})") from None
    from pytest_hwcrypto.boards import debian_kernel

    kernel, modules = debian_kernel.resolve(kernel, modules)
    request = BoardRequest(
        board_kind,
        kernel=Path(kernel) if kernel else None,
        modules_dir=Path(modules) if modules else None,
        cryptodev=cryptodev,
        test_drivers=test_drivers,
        third_party=third_party,
    )
    return BOARDS[board_kind](request)


UML_CANNOT_LOAD_CRYPTODEV = (
    "the UML board cannot have /dev/crypto: cryptodev-linux is built against Debian's "
    "amd64 kernel headers, and a module built for that kernel does not load into the UML "
    "kernel (another architecture, um, with no headers package to build against); use "
    "--hwcrypto-vm=qemu (hwcrypto vm qemu --cryptodev)"
)

UML_CANNOT_LOAD_TEST_DRIVERS = (
    "the UML board cannot load the test-only drivers (pytest_hwcrypto/kmod): they are built "
    "against Debian's amd64 kernel headers, and the UML kernel has none to build against; use "
    "--hwcrypto-vm=qemu (hwcrypto vm qemu --test-drivers)"
)
