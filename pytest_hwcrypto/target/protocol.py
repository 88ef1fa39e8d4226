# SPDX-License-Identifier: MIT
"""What every transport to a board offers, whatever carries it (SSH, a serial console).

Run a shell command and get its exit status and output; copy a file there and back. The
suites and the helper ask only this, so a new transport (labgrid's) is one more class.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

DEFAULT_COMMAND_SECONDS = 120.0


class TargetError(RuntimeError):
    """The board cannot be reached or driven; one line that says where and why."""


@dataclass(frozen=True)
class CommandResult:
    status: int
    output: str

    @property
    def ok(self) -> bool:
        return self.status == 0


class Transport(Protocol):
    """A connection to one board's shell (POSIX sh: busybox ash is enough)."""

    def describe(self) -> str:
        """The target as the report header names it."""
        ...

    def run(self, command: str, timeout: float = DEFAULT_COMMAND_SECONDS) -> CommandResult:
        """`command` through the board's sh; stderr is merged into the output."""
        ...

    def put(self, local: Path, remote: str) -> None:
        """Copy `local` to the board's `remote` path (replacing it)."""
        ...

    def get(self, remote: str, local: Path) -> None:
        """Copy the board's `remote` file to `local`."""
        ...

    def close(self) -> None:
        """End the connection; the board is left running."""
        ...


def checked(transport: Transport, command: str, timeout: float = DEFAULT_COMMAND_SECONDS) -> str:
    """The output of `command`, which must succeed; else a TargetError quoting its last line."""
    result = transport.run(command, timeout)
    if not result.ok:
        lines = [line for line in result.output.splitlines() if line.strip()]
        said = lines[-1].strip() if lines else "no output"
        raise TargetError(
            f"{transport.describe()}: `{command}` exited with status {result.status}: {said}"
        )
    return result.output
