# SPDX-License-Identifier: MIT
"""Background load while measuring: `--hwcrypto-load=cpu:N`, like `stress -c N`.

A user's Kirkwood mv_cesa comparison (dm-crypt with and without the engine) was repeated
under `stress -c 1`:
an offload engine that merely ties with software on an idle CPU can win clearly once the
CPU is busy with something else, because software crypto then has to share the CPU while
the engine does not. `cpu:N` starts N busy-loop child processes before the measurement
and ends them afterwards, each by its own PID (nothing is killed by name, so other
people's processes are never touched).

`parse_load_spec` is pure; `BackgroundLoad` starts and ends the processes.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pytest_hwcrypto.measure.cpu import CpuStatError, clock_ticks_per_second, parse_pid_stat

LOAD_KINDS = ("cpu",)
MAX_WORKERS = 256
# A pure user-space spin, as stress -c does; -S skips site imports so it starts quickly
# even on a board whose root filesystem is slow to read. The byte it writes first says
# "spinning now", so the measurement never starts before the load does.
BUSY_LOOP = (
    sys.executable,
    "-S",
    "-c",
    "import os; os.write(1, b'+'); os.close(1)\nwhile True: pass",
)
_STOP_GRACE_SECONDS = 2.0
_START_TIMEOUT_SECONDS = 10.0


class LoadSpecError(ValueError):
    """A load specification that cannot be used; the message shows the accepted form."""


@dataclass(frozen=True)
class LoadSpec:
    kind: str
    workers: int

    def describe(self) -> str:
        return f"{self.kind}:{self.workers}"


def parse_load_spec(text: str | None) -> LoadSpec | None:
    """'cpu:2' -> LoadSpec('cpu', 2); None, '', 'none' and 'cpu:0' mean no load."""
    if text is None:
        return None
    cleaned = text.strip().lower()
    if cleaned in ("", "none", "off", "0"):
        return None
    kind, separator, count = cleaned.partition(":")
    if kind not in LOAD_KINDS:
        raise LoadSpecError(
            f"unknown load {text!r}: use cpu:N (N busy-loop processes, like stress -c N)"
        )
    if not separator:
        count = "1"
    if not count.isdigit():
        raise LoadSpecError(f"bad load {text!r}: N in cpu:N must be a whole number")
    workers = int(count)
    if workers > MAX_WORKERS:
        raise LoadSpecError(f"bad load {text!r}: at most {MAX_WORKERS} workers")
    return LoadSpec(kind, workers) if workers else None


class BackgroundLoad:
    """N busy-loop children for the duration of a `with` block.

    `start()` returns once every child is running (so the first sample already competes
    with them); `stop()` ends each child by its PID and reaps it, also when the block
    raised. `cpu_seconds()` is the CPU they used, so measurements can leave it out of the
    system-wide figure.
    """

    def __init__(self, spec: LoadSpec | None, command: tuple[str, ...] = BUSY_LOOP) -> None:
        self.spec = spec
        self._command = command
        self._children: list[subprocess.Popen[bytes]] = []
        self._ticks = clock_ticks_per_second()

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(child.pid for child in self._children)

    def describe(self) -> str:
        return self.spec.describe() if self.spec else "none"

    def __enter__(self) -> BackgroundLoad:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        if self.spec is None or self._children:
            return
        try:
            for _ in range(self.spec.workers):
                self._children.append(
                    subprocess.Popen(
                        self._command,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                    )
                )
            self._wait_until_spinning()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        children, self._children = self._children, []
        for child in children:
            _signal(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_GRACE_SECONDS
        for child in children:
            try:
                child.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                _signal(child.pid, signal.SIGKILL)
                child.wait()

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in self.pids:
            try:
                total += parse_pid_stat(Path(f"/proc/{pid}/stat").read_text(), self._ticks)
            except (OSError, CpuStatError):
                continue
        return total

    def _wait_until_spinning(self) -> None:
        """Until each child has written its "spinning" byte; one that ends first failed."""
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        for child in self._children:
            assert child.stdout is not None
            ready, _, _ = select.select([child.stdout], [], [], deadline - time.monotonic())
            started = os.read(child.stdout.fileno(), 1) if ready else b""
            child.stdout.close()
            if not started:
                child.poll()
                state = "ended at once" if child.returncode is not None else "did not start"
                raise OSError(
                    f"background load process {child.pid} {state} "
                    f"(exit {child.returncode}): {' '.join(self._command)}"
                )


def _signal(pid: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.kill(pid, signal_number)
