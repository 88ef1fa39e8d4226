# SPDX-License-Identifier: MIT
"""The `hwcrypto` command: inventory, virtual boards, comparisons and measurements.

One module per subcommand, each with `add_parser` (registered in `_SUBCOMMANDS`) and its
`cmd_*` function; no command module imports another (import-linter holds that). Exit
codes are in exits.py. A user's mistake raises UsageError and ends with one line on
stderr and EXIT_USAGE, never a traceback. When the reader of the output goes away
(`hwcrypto parse ... | head -1`), the command ends quietly with exit code 141, as a tool
that SIGPIPE ended does.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Sequence
from typing import Callable

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.cli import (
    ab,
    bench,
    bisect_confirm,
    bisect_run,
    compare,
    history,
    inventory,
    lava,
    parse,
    report,
    sweep,
    vm,
)
from pytest_hwcrypto.cli.exits import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, EXIT_USAGE
from pytest_hwcrypto.profile import ProfileError
from pytest_hwcrypto.settings import SettingError
from pytest_hwcrypto.usage import UsageError

__all__ = ["EXIT_CLOSED_PIPE", "EXIT_USAGE", "build_parser", "main"]

_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...] = (
    inventory.add_parser,
    compare.add_parser,
    vm.add_parser,
    bench.add_parser,
    sweep.add_parser,
    parse.add_parser,
    report.add_parser,
    lava.add_parser,
    ab.add_parsers,
    bisect_run.add_parser,
    bisect_confirm.add_parser,
    history.add_parser,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hwcrypto", description="Check kernel hardware crypto: registered, correct, fast."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:
            # Output left in the buffer would fail at exit, past any handler: flush it here.
            sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # a pipe of our own (a board's, a tool's) broke: that is a real error
        _discard_stdout()
        return EXIT_CLOSED_PIPE
    except SystemExit:
        # argparse's --help swallows a failed write itself; end it as every command ends.
        if _stdout_reader_gone():
            _discard_stdout()
            return EXIT_CLOSED_PIPE
        raise


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" belongs to pytest inside a board (`hwcrypto vm uml -- -k aes`).
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.pytest_args = passthrough
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (UsageError, BoardError, ProfileError, SettingError) as error:
        sys.stderr.write(f"hwcrypto: error: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("hwcrypto: interrupted\n")
        return EXIT_INTERRUPTED


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket nobody reads any more (Linux flags its write end
    with POLLERR once the last reader has closed)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test's capture, or closed
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit cannot fail and
    print "Exception ignored ... BrokenPipeError" after we have ended quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
