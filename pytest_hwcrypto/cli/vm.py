# SPDX-License-Identifier: MIT
"""`hwcrypto vm`: boot a virtual board and run a command or pytest in it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.vocabulary import BoardKind


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "vm",
        help="boot a virtual board and run a command or pytest in it",
        usage=f"hwcrypto vm {{{','.join(BoardKind.values())}}} [--kernel PATH] [--cryptodev] "
        "[--test-drivers] [--exec CMD | -- PYTEST_ARGS]",
    )
    parser.add_argument("board", choices=BoardKind.values())
    parser.add_argument("--kernel", help="kernel image to boot (default: Debian's)")
    parser.add_argument("--modules", help="modules directory of --kernel")
    parser.add_argument(
        "--cryptodev",
        action="store_true",
        help="give the board /dev/crypto: build cryptodev-linux for its kernel (cached) and "
        "load it (QEMU only)",
    )
    parser.add_argument(
        "--test-drivers",
        action="store_true",
        help="load the test-only drivers of pytest_hwcrypto/kmod (wrong or slow on purpose), "
        "built for its kernel (cached) (QEMU only)",
    )
    parser.add_argument(
        "--third-party",
        metavar="DIR",
        help="directory holding cryptodev-linux's source tarball for --cryptodev "
        "(default: $HWCRYPTO_THIRD_PARTY, else shared/third_party beside a source checkout)",
    )
    parser.add_argument(
        "--busybox",
        action="store_true",
        help="boot a board without Python instead: the kernel with a busybox + dropbear "
        "initramfs, reached over SSH and its serial console (QEMU only; with --serve)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="with --busybox: print the board's --hwcrypto-target values and keep it up "
        "until Ctrl-C",
    )
    parser.add_argument(
        "--exec",
        dest="exec_command",
        metavar="CMD",
        help="shell command to run inside (default: pytest with the rest)",
    )
    parser.add_argument("--timeout", default=None, help="seconds before the board is ended")
    parser.add_argument("--artifacts", default=None, help="directory for the console log")
    parser.set_defaults(func=cmd_vm)


def cmd_vm(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.boards.inner_pytest import pytest_command
    from pytest_hwcrypto.boards.registry import make_board
    from pytest_hwcrypto.boards.runner import run_command_in_board
    from pytest_hwcrypto.run import build_run

    if args.busybox or args.serve:
        return serve_busybox(args)
    cli_values = {"vm_timeout": args.timeout, "artifacts": args.artifacts}
    run = build_run(enabled=False, cli_values=cli_values, environ={}, ini_values={})
    board = make_board(
        args.board,
        args.kernel,
        args.modules,
        cryptodev=args.cryptodev,
        test_drivers=args.test_drivers,
        third_party=args.third_party,
    )
    board.check_prerequisites()
    pytest_args: list[str] = args.pytest_args
    if args.exec_command and pytest_args:
        raise UsageError("give either --exec CMD or pytest arguments after --, not both")
    command = args.exec_command or pytest_command(
        ["-p", "no:cacheprovider", *pytest_args], board.guest_python
    )
    return run_command_in_board(board, command, Path.cwd(), run, sys.stdout)


def serve_busybox(args: argparse.Namespace) -> int:
    """Boot the busybox board, say how to reach it, and keep it up until interrupted."""
    import signal
    import tempfile
    import time

    from pytest_hwcrypto.boards.busybox_board import BusyboxBoard

    if not (args.busybox and args.serve) or args.board != BoardKind.QEMU:
        raise UsageError("--busybox and --serve go together, on the qemu board")
    directory = Path(args.artifacts or tempfile.mkdtemp(prefix="hwcrypto-busybox-"))
    board = BusyboxBoard(directory, Path(args.kernel) if args.kernel else None)
    # SIGTERM ends the board as Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    print(f"hwcrypto: booting the busybox board in {directory} ...", flush=True)
    board.start()
    try:
        print(f"hwcrypto: --hwcrypto-target={board.ssh_target}", flush=True)
        print(f"hwcrypto: --hwcrypto-target-key={board.directory / 'id_ed25519'}", flush=True)
        print(f"hwcrypto: --hwcrypto-target={board.serial_target}", flush=True)
        print("hwcrypto: up; Ctrl-C ends it", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        board.stop()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
