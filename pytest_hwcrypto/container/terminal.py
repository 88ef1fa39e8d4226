# SPDX-License-Identifier: MIT
"""Running the lxc-* tools: one pexpect wrapper, every command logged.

lxc-attach wants a terminal (it allocates a pty for the attached process when it has one,
and some LXC versions behave differently without), so every lxc-* command runs on a
pseudo-terminal through pexpect. Each command line, its exit status and its output go to
the container's command log, which a failing check names. Nothing secret passes here:
containers get device nodes and read-only directories, never keys.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pexpect

COMMAND_TIMEOUT = 120.0


class ContainerError(RuntimeError):
    """An LXC operation failed; the message names the command and LXC's last complaint."""


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    exit_code: int  # the command's status, or 128 + the signal that ended it
    output: str
    seconds: float

    def complaint(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"exit status {self.exit_code}"


class Attached:
    """A command left running (a server inside a container); ended by `finish`.

    Not on a pty: an attached command whose lxc-attach holds a pty ended within a second
    on the UML board (a plain `sleep` too); without a terminal lxc-attach allocates none
    and the command lives until it ends by itself.
    """

    def __init__(self, child: subprocess.Popen[bytes], terminal: Terminal, argv: list[str]):
        self._child = child
        self._terminal = terminal
        self._argv = argv
        self._started = time.monotonic()

    def alive(self) -> bool:
        return self._child.poll() is None

    def finish(self, grace: float = 10.0) -> int:
        """Wait up to `grace` seconds for it to end by itself, then kill it; its status."""
        try:
            self._child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
        code = self._child.returncode
        status = code if code >= 0 else 128 - code
        self._terminal._log(self._argv, status, "", time.monotonic() - self._started)
        return status


class Terminal:
    """Runs commands on a pty and appends each to `log_path`."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path

    def run(self, argv: list[str], timeout: float = COMMAND_TIMEOUT) -> Completed:
        started = time.monotonic()
        try:
            child = pexpect.spawn(
                argv[0],
                argv[1:],
                timeout=timeout,
                encoding="utf-8",
                codec_errors="replace",
                echo=False,
                maxread=65536,
            )
        except pexpect.ExceptionPexpect as error:
            raise ContainerError(f"{argv[0]}: {error}") from None
        try:
            child.expect(pexpect.EOF, timeout=timeout)
        except pexpect.TIMEOUT:
            child.kill(signal.SIGKILL)
            self._log(argv, None, child.before or "", time.monotonic() - started)
            raise ContainerError(f"{shlex.join(argv)}: no answer after {timeout:g} s") from None
        finally:
            child.close(force=True)
        output = (child.before or "").replace("\r\n", "\n")
        code = child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)
        done = Completed(tuple(argv), code, output, time.monotonic() - started)
        self._log(argv, code, output, done.seconds)
        return done

    def spawn(self, argv: list[str]) -> Attached:
        """Start `argv` without a terminal and leave it running; logged when it finishes."""
        try:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise ContainerError(f"{argv[0]}: {error.strerror}") from None
        return Attached(child, self, argv)

    def check(self, argv: list[str], timeout: float = COMMAND_TIMEOUT) -> Completed:
        """Run `argv`; ContainerError naming it and its last complaint unless it exits 0."""
        done = self.run(argv, timeout)
        if done.exit_code != 0:
            raise ContainerError(f"{shlex.join(argv)}: {done.complaint()} (log: {self.log_path})")
        return done

    def _log(self, argv: list[str], code: int | None, output: str, seconds: float) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        status = "timed out" if code is None else f"exit {code}"
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(f"$ {shlex.join(argv)}\n{output}")
            if output and not output.endswith("\n"):
                log.write("\n")
            log.write(f"# {status}, {seconds:.2f} s\n")
