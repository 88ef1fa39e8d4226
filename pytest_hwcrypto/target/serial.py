# SPDX-License-Identifier: MIT
"""A board over its serial console: pexpect on the tty, a login, then framed commands.

After the login: `dmesg -n 1` (only emergencies still reach the console) and `stty -echo`
(half the bytes on a slow line). Each command is one framed line (target/framing.py); what
the kernel prints in between lands outside the frame or, rarely, inside one output.

Files go as base64 of gzip: blocks of lines typed into `head -n LINES >> FILE` on the
board (a block stays below the 4 KiB the kernel's tty layer buffers, so nothing overflows
while the board is slow to read), then `base64 -d | gunzip` and a checksum compared with
the host's. Why not XMODEM with busybox `rx`:
`rx` is an optional applet (many busybox builds and every non-busybox system lack it),
it needs the console in raw mode, and it needs one more Python package on the host; base64,
gunzip and md5sum are in every busybox that has a shell worth driving. The gzip step
halves the static helper (about 700 KB to 300 KB), which is what matters at 115200 baud.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import os
import re
import shlex
import termios
import time
import tty
from pathlib import Path

import pexpect
import pexpect.fdpexpect

from pytest_hwcrypto.target.framing import Framing
from pytest_hwcrypto.target.protocol import DEFAULT_COMMAND_SECONDS, CommandResult, TargetError
from pytest_hwcrypto.target.spec import SerialTarget

LOGIN_SECONDS = 60.0
PASSWORD_ENV = "HWCRYPTO_TARGET_PASSWORD"
USER_ENV = "HWCRYPTO_TARGET_USER"
# One base64 line (as base64(1) writes them) and the lines of one block: 48 * 77 bytes is
# below N_TTY's 4096-byte input buffer.
LINE_CHARS = 76
BLOCK_LINES = 48
# A prompt ends the console's output so far; busybox ash's line editor follows its prompt
# with a cursor-position query (ESC [ 6 n), which the patterns allow.
_QUERY = rb"(?:\x1b\[6n)?"
LOGIN_PROMPT = re.compile(rb"login: ?" + _QUERY + rb"$", re.MULTILINE)
PASSWORD_PROMPT = re.compile(rb"[Pp]assword: ?" + _QUERY + rb"$", re.MULTILINE)
SHELL_PROMPT = re.compile(rb"[#$] ?" + _QUERY + rb"$", re.MULTILINE)


def _baud_constant(baud: int) -> int:
    value = getattr(termios, f"B{baud}", None)
    if value is None:
        raise TargetError(f"serial:{baud}: this host's termios has no such rate")
    return int(value)


class SerialTransport:
    def __init__(
        self, target: SerialTarget, user: str | None = None, password: str | None = None
    ) -> None:
        self.target = target
        self.user = user or os.environ.get(USER_ENV, "root")
        self.password = password if password is not None else os.environ.get(PASSWORD_ENV)
        self.framing = Framing.new()
        try:
            self._fd = os.open(target.device, os.O_RDWR | os.O_NOCTTY)
        except OSError as error:
            raise TargetError(
                f"{self.describe()}: cannot open the console: {error.strerror}"
            ) from error
        self._configure_line()
        self._console = pexpect.fdpexpect.fdspawn(self._fd, timeout=LOGIN_SECONDS)
        self._logged_in = False

    def describe(self) -> str:
        return self.target.describe()

    def _configure_line(self) -> None:
        """Raw 8N1 at the target's rate: the host must not echo or translate anything."""
        if not os.isatty(self._fd):
            return
        tty.setraw(self._fd)
        attributes = termios.tcgetattr(self._fd)
        speed = _baud_constant(self.target.baud)
        attributes[4] = attributes[5] = speed
        termios.tcsetattr(self._fd, termios.TCSANOW, attributes)

    def _send_line(self, line: str) -> None:
        self._console.send(line.encode() + b"\r")

    def login(self) -> None:
        """Reach a shell: answer a login and a password prompt if the console shows them."""
        deadline = time.monotonic() + LOGIN_SECONDS
        self._send_line("")
        user_sent = password_sent = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TargetError(
                    f"{self.describe()}: no login or shell prompt in {LOGIN_SECONDS:.0f} s"
                )
            try:
                index = self._console.expect(
                    [LOGIN_PROMPT, PASSWORD_PROMPT, SHELL_PROMPT], timeout=min(left, 5.0)
                )
            except pexpect.TIMEOUT:
                self._send_line("")
                continue
            except pexpect.EOF as eof:
                raise TargetError(f"{self.describe()}: the console closed") from eof
            if index == 0:
                if user_sent and password_sent:
                    raise TargetError(f"{self.describe()}: login as {self.user} refused")
                self._send_line(self.user)
                user_sent = True
            elif index == 1:
                if self.password is None:
                    raise TargetError(
                        f"{self.describe()}: the board asks a password for {self.user}: "
                        f"set {PASSWORD_ENV}"
                    )
                if password_sent:
                    raise TargetError(f"{self.describe()}: password for {self.user} refused")
                self._send_line(self.password)
                password_sent = True
            else:
                break
        self._logged_in = True
        # Quiet the kernel and the echo; the framing copes without either, this saves bytes.
        self._raw_run("dmesg -n 1; stty -echo", 30.0)
        probe = self._raw_run("uname -s", 30.0)
        if probe.output.strip() != "Linux":
            raise TargetError(
                f"{self.describe()}: the board is not Linux (uname -s: {probe.output.strip()!r})"
            )

    def _raw_run(
        self, command: str, timeout: float, console_lines: list[str] | None = None
    ) -> CommandResult:
        # Whatever the console showed before (a prompt, a kernel line) is not this output.
        with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
            self._console.read_nonblocking(1 << 20, timeout=0)
        self._send_line(self.framing.command_line(command, console_lines is not None))
        if console_lines is not None:
            # Typed once the command runs, so the shell cannot take them for commands.
            try:
                self._console.expect_exact(self.framing.start.encode(), timeout=timeout)
            except (pexpect.TIMEOUT, pexpect.EOF) as lost:
                raise TargetError(f"{self.describe()}: `{command}` did not start") from lost
            self._console.send("".join(line + "\n" for line in console_lines).encode())
        try:
            self._console.expect(self.framing.end_pattern().encode(), timeout=timeout)
        except pexpect.TIMEOUT as timed_out:
            raise TargetError(
                f"{self.describe()}: `{command}` gave no end marker in {timeout:.0f} s"
            ) from timed_out
        except pexpect.EOF as eof:
            raise TargetError(f"{self.describe()}: the console closed during `{command}`") from eof
        seen = (self._console.before or b"").decode(errors="replace")
        if console_lines is not None:
            seen = self.framing.start + seen
        match = self._console.match
        status = int(match.group(1)) if match is not None and not isinstance(match, bool) else 255
        output = self.framing.output_between(seen + self.framing.end)
        if output is None:
            raise TargetError(f"{self.describe()}: the output of `{command}` was torn")
        return CommandResult(status, output)

    def run(self, command: str, timeout: float = DEFAULT_COMMAND_SECONDS) -> CommandResult:
        if not self._logged_in:
            self.login()
        return self._raw_run(command, timeout)

    def put(self, local: Path, remote: str) -> None:
        data = local.read_bytes()
        encoded = base64.b64encode(gzip.compress(data, 9)).decode()
        staging = shlex.quote(remote + ".b64")
        self._checked(f": > {staging}")
        lines = [encoded[at : at + LINE_CHARS] for at in range(0, len(encoded), LINE_CHARS)]
        for first in range(0, len(lines), BLOCK_LINES):
            block = lines[first : first + BLOCK_LINES]
            result = self._raw_run(
                f"head -n {len(block)} >> {staging}", DEFAULT_COMMAND_SECONDS, block
            )
            if not result.ok:
                raise TargetError(f"{self.describe()}: writing {remote} failed: {result.output}")
        target = shlex.quote(remote)
        self._checked(f"base64 -d {staging} | gunzip > {target}; rm -f {staging}")
        said = self._checked(f"md5sum {target}").split()
        if not said or said[0] != hashlib.md5(data).hexdigest():
            raise TargetError(f"{self.describe()}: {remote} arrived damaged (md5 differs)")

    def get(self, remote: str, local: Path) -> None:
        text = self._checked(f"gzip -c {shlex.quote(remote)} | base64")
        local.write_bytes(gzip.decompress(base64.b64decode("".join(text.split()))))

    def _checked(self, command: str) -> str:
        result = self.run(command)
        if not result.ok:
            raise TargetError(
                f"{self.describe()}: `{command[:60]}` failed ({result.status}): "
                f"{result.output.strip()[:120]}"
            )
        return result.output

    def close(self) -> None:
        if self._logged_in:
            with contextlib.suppress(OSError):
                self._send_line("stty echo; exit")
        os.close(self._fd)
