# SPDX-License-Identifier: MIT
"""Every `hwcrypto` command that prints ends quietly when its reader has gone (`| head -1`):
no BrokenPipeError traceback, and exit status 141, what a shell reports for a tool that
SIGPIPE ended.

The reader is gone before the command starts (the pipe's read end is closed), so every
write fails: the outcome does not depend on how fast `head` is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import EXIT_CLOSED_PIPE

DATA = Path(__file__).resolve().parent.parent / "data"
PASTE = str(DATA / "paste" / "variants" / "post_cryptsetup_two_kernels.txt")
PROC_CRYPTO = str(DATA / "proc_crypto" / "uml-6.1.176.txt")
UML = str(DATA / "board_uml_results_1.json")
UML_SLOW = str(DATA / "board_uml_results_slow.json")

# What each command prints without a board: its own output where it has one offline,
# else its help (argparse writes that to stdout too).
PRINTING = {
    "help": ["--help"],
    "inventory": ["inventory", "--proc-crypto", PROC_CRYPTO],
    "inventory-json": ["inventory", "--proc-crypto", PROC_CRYPTO, "--json"],
    "compare": ["compare", UML, UML],
    "compare-json": ["compare", UML, UML, "--json"],
    "parse": ["parse", "auto", PASTE],
    "parse-json": ["parse", "auto", PASTE, "--json"],
    "lava-definition": ["lava", "definition", "--install", "pypi"],
    "lava-job": ["lava", "job", "--install", "pypi", "--kernel", "k.bin", "--rootfs", "r.cpio"],
    **{
        f"{command}-help": [*command.split(), "--help"]
        for command in (
            "vm",
            "bench",
            "sweep",
            "report",
            "ab",
            "bisect-run",
            "bisect-confirm",
            "lava results",
            "lava guest",
            "lava lab",
            "lava run",
        )
    },
}


def run_into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "pytest_hwcrypto.cli", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", list(PRINTING.values()), ids=list(PRINTING))
def test_a_closed_pipe_ends_the_command_quietly(argv: list[str]) -> None:
    done = run_into_closed_pipe(argv)
    assert done.stderr == ""
    assert done.returncode == EXIT_CLOSED_PIPE == 141


def test_the_same_commands_print_when_read() -> None:
    """The cases above print something: otherwise the pipe would never break."""
    for name, argv in PRINTING.items():
        done = subprocess.run(
            [sys.executable, "-m", "pytest_hwcrypto.cli", *argv],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.stdout.strip(), name
        assert done.returncode == 0, (name, done.stderr)
