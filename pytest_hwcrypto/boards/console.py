# SPDX-License-Identifier: MIT
"""The console of a virtual board: one pexpect wrapper and a scanner for kernel trouble.

Every board (UML, QEMU) prints its console on the host process's stdout. The guest script
frames the user's command with two markers; everything between them is the command's own
output and is streamed live, everything is kept in the console log artifact.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

import pexpect

READY_MARKER = "HWCRYPTO-BOARD-READY"
EXIT_MARKER = "HWCRYPTO-BOARD-EXIT="
_EXIT_PATTERN = re.compile(re.escape(EXIT_MARKER) + r"(\d+)")

# Patterns of kernel log lines that must never be silently lost: an oops or BUG taints
# every measurement after it, and an `alg:` line is the crypto manager reporting a
# driver that failed its self-test at registration.
_KERNEL_TROUBLE = (
    ("oops", re.compile(r"\b(Oops|BUG:|kernel BUG at|Kernel panic|general protection fault)")),
    ("warning", re.compile(r"WARNING: CPU: \d+ PID: \d+")),
    ("selftest-failed", re.compile(r"\balg: .*(failed|error|err=)", re.IGNORECASE)),
)


@dataclass(frozen=True)
class KernelEvent:
    """One line of the board's kernel log that reports trouble."""

    kind: str  # oops | warning | selftest-failed
    line: str


def scan_kernel_log(text: str) -> list[KernelEvent]:
    """Find oopses, warnings and crypto self-test failures in console or dmesg text."""
    events: list[KernelEvent] = []
    seen: set[str] = set()
    for raw_line in text.splitlines():
        line = _strip_timestamp(raw_line.strip())
        for kind, pattern in _KERNEL_TROUBLE:
            if pattern.search(line) and line not in seen:
                seen.add(line)
                events.append(KernelEvent(kind, line))
                break
    return events


def _strip_timestamp(line: str) -> str:
    return re.sub(r"^\[\s*\d+\.\d+\]\s*", "", line)


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _console_text(text: str, keep_returns: bool) -> str:
    """The guest's pty ends lines with CR LF: plain LF here. A lone CR (pytest redrawing its
    "collecting ..." line) is kept for a terminal, which redraws too, and dropped for a
    file or pipe."""
    text = text.replace("\r\n", "\n")
    return text if keep_returns else text.replace("\r", "")


def _die_with_parent() -> None:
    """Run in the board's process before exec: the kernel kills it if we die.

    This is what keeps a board from outliving an outer pytest that was killed with -9.
    """
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


@contextlib.contextmanager
def _sigterm_runs_cleanup() -> Iterator[None]:
    """While a board runs, SIGTERM raises SystemExit instead of ending Python at once.

    Python's default SIGTERM skips every `finally`, so the one that ends the board's
    process group never ran: the kernel's own process died with us (PR_SET_PDEATHSIG),
    but the host processes UML forks for the guest's processes outlived the run. Only
    when nobody else handles SIGTERM, and only in the main thread (where Python runs
    signal handlers).
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@dataclass
class ConsoleOutcome:
    exit_code: int | None  # None: the board ended before the command reported its exit
    boot_seconds: float | None  # start of the process to READY_MARKER
    total_seconds: float
    timed_out: bool


class Console:
    """A board process and its console, driven through pexpect.

    The process is started in its own session (pexpect does setsid), so ending it means
    signalling that process group — only what this object started.
    """

    def __init__(
        self,
        argv: list[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = argv
        self.log_path = log_path
        self._env = env
        self._cwd = cwd
        self._child: pexpect.spawn | None = None

    # How often the console is polled while no line ends (also how often the run's timeout
    # is checked).
    poll_seconds = 5.0

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def run(
        self, timeout: float, stream: TextIO | None, on_ready: Callable[[], None] | None = None
    ) -> ConsoleOutcome:
        """Start the board, stream the command's output, and wait for the exit marker."""
        with _sigterm_runs_cleanup():
            return self._run(timeout, stream, on_ready)

    def _run(
        self, timeout: float, stream: TextIO | None, on_ready: Callable[[], None] | None
    ) -> ConsoleOutcome:
        started = time.monotonic()
        boot_seconds: float | None = None
        exit_code: int | None = None
        timed_out = False
        keep_returns = stream is not None and _is_terminal(stream)
        with open(self.log_path, "w", encoding="utf-8", errors="replace") as log:
            child = self._spawn()
            try:
                streaming = False
                # What was already passed on of the line being written: on a poll timeout
                # pexpect gives the unfinished line again (it stays in its buffer), and only
                # its new part may be passed on -- else pytest's progress line repeats
                # `suites/test_x.py ` once per poll while a slow test runs.
                partial = ""
                while True:
                    remaining = timeout - (time.monotonic() - started)
                    if remaining <= 0:
                        timed_out = True
                        break
                    index = child.expect(
                        ["\n", pexpect.EOF, pexpect.TIMEOUT],
                        timeout=min(remaining, self.poll_seconds),
                    )
                    line = (child.before or "") + ("\n" if index == 0 else "")
                    new = line[len(partial) :] if line.startswith(partial) else line
                    already = partial if line.startswith(partial) else ""
                    partial = line if index == 2 else ""
                    if new:
                        log.write(new.replace("\r", ""))
                    if index == 2:  # an unfinished line: pass its new part on as it comes
                        if streaming and stream is not None and new:
                            stream.write(_console_text(new, keep_returns))
                            stream.flush()
                        continue
                    whole = _console_text(line, keep_returns)
                    if READY_MARKER in whole and not streaming:
                        streaming = True
                        boot_seconds = time.monotonic() - started
                        if on_ready is not None:
                            on_ready()
                        continue
                    text = _console_text(new, keep_returns)
                    match = _EXIT_PATTERN.search(whole)
                    if match:
                        exit_code = int(match.group(1))
                        # Output without a final newline shares the marker's line.
                        before = whole[: match.start()]
                        text = before[len(_console_text(already, keep_returns)) :]
                        text = text + "\n" if before else ""
                    if streaming and stream is not None and text:
                        stream.write(text)
                        stream.flush()
                    if match:
                        streaming = False
                        continue
                    if index == 1:
                        break
                # Let the guest halt by itself for a moment; then end it by its PID.
                self._wait_or_kill(child, grace=10.0 if not timed_out else 0.0)
            finally:
                self.kill()
        return ConsoleOutcome(exit_code, boot_seconds, time.monotonic() - started, timed_out)

    def _spawn(self) -> pexpect.spawn:
        self._child = pexpect.spawn(
            self.argv[0],
            self.argv[1:],
            env=self._env,
            cwd=self._cwd,
            timeout=None,
            encoding="utf-8",
            codec_errors="replace",
            echo=False,
            maxread=65536,
            preexec_fn=_die_with_parent,
        )
        return self._child

    def _wait_or_kill(self, child: pexpect.spawn, grace: float) -> None:
        deadline = time.monotonic() + grace
        while child.isalive() and time.monotonic() < deadline:
            with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
                child.expect(pexpect.EOF, timeout=0.5)
        self.kill()

    def kill(self) -> None:
        """End the board's process group (started by us, known by PID) if still there."""
        child = self._child
        if child is None:
            return
        if child.isalive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                child.wait()
        # The group may hold helpers whose leader already exited (UML forks its userspace).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            child.close(force=True)
