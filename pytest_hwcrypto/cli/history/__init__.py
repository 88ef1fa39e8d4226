# SPDX-License-Identifier: MIT
"""`hwcrypto history`: a store of CI runs, one per board and kernel (docs/history.md).

One module per subcommand, each with `add_parser`; this package is one command for the
"each hwcrypto command stands alone" contract, its subcommands registered here.
"""

from __future__ import annotations

import argparse
from typing import Callable

from pytest_hwcrypto.cli.history import add, detect, show

_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...] = (
    add.add_parser,
    detect.add_parser,
    show.add_parser,
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "history",
        help="a history of CI runs, one per board and kernel: add runs, detect change points, "
        "show trends",
    )
    history = parser.add_subparsers(dest="history_command", metavar="SUBCOMMAND", required=True)
    for add_subcommand in _SUBCOMMANDS:
        add_subcommand(history)
