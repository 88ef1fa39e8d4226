# SPDX-License-Identifier: MIT
"""Framing a command on a console, so its output and exit status can be found (pure).

A serial console echoes what is typed and carries the kernel's messages too. Each command
is sent as one line that prints a start marker, runs the command, and prints an end marker
with the exit status. The markers are written in the command line in two quoted halves
('HWC''X...'), so the console's echo of the line never contains them whole: only the
shell's own output does. A random token per connection keeps an earlier run's leftovers,
or a file that happens to hold a marker, from matching.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

_PREFIX = "HWC"


@dataclass(frozen=True)
class Framing:
    token: str

    @classmethod
    def new(cls) -> Framing:
        return cls(secrets.token_hex(6))

    @property
    def start(self) -> str:
        return f"{_PREFIX}S{self.token}"

    @property
    def end(self) -> str:
        return f"{_PREFIX}E{self.token}"

    def _split(self, marker: str) -> str:
        """The marker as sh sees it, in two quoted halves that the echo shows apart."""
        return f"'{marker[:2]}''{marker[2:]}'"

    def command_line(self, command: str, console_input: bool = False) -> str:
        """One line for the console. The command runs in a subshell (`exit` in it ends only
        that), stderr merged, stdin from /dev/null (nothing typed later is eaten) unless
        `console_input`: then it reads the lines sent after this one."""
        quoted = "'" + command.replace("'", "'\\''") + "'"
        stdin = "" if console_input else " </dev/null"
        return (
            f"printf '\\n%s\\n' {self._split(self.start)}; "
            f"sh -c {quoted}{stdin} 2>&1; "
            f"printf '\\n%s %d\\n' {self._split(self.end)} $?"
        )

    def end_pattern(self) -> str:
        """A regex that matches the end marker line with its status."""
        return re.escape(self.end) + r" (\d+)\r?\n"

    def output_between(self, text: str) -> str | None:
        """What the command printed, given everything the console showed up to the end
        marker; None when no start marker precedes it (the frame was torn)."""
        start = text.rfind(self.start)
        if start < 0:
            return None
        body = text[start + len(self.start) :]
        end = body.find(self.end)
        if end >= 0:
            body = body[:end]
        body = body.replace("\r\n", "\n").replace("\r", "")
        # The framing printf adds a newline after the start marker and before the end one.
        body = body.removeprefix("\n")
        return body.removesuffix("\n")
