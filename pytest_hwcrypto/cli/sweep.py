# SPDX-License-Identifier: MIT
"""`hwcrypto sweep`: undo what a killed run recorded doing."""

from __future__ import annotations

import argparse

from pytest_hwcrypto.cli.exits import EXIT_FAIL, EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "sweep",
        help="undo what a killed run left behind (only what it recorded doing)",
        description="Restore what runs killed before their cleanup recorded in their "
        "ledger: driver priorities they changed. Nothing else is touched.",
    )
    parser.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    """Undo what killed runs recorded in their ledgers (re-ranked priorities, ...)."""
    from pytest_hwcrypto.ledger import state_dir
    from pytest_hwcrypto.run import sweep_leftovers

    done = sweep_leftovers()
    for line in done:
        print(f"hwcrypto sweep: {line}")
    if not done:
        print(f"hwcrypto sweep: nothing left by a killed run (ledgers in {state_dir()})")
    return EXIT_FAIL if any(line.startswith(("could not", "kept")) for line in done) else EXIT_OK
