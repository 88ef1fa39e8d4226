# SPDX-License-Identifier: MIT
"""Asking container.probe questions many times without starting python each time.

Under QEMU's TCG a python start with the plugin imported costs seconds, and a suite asks
dozens of questions on each side. A prober starts `probe serve` once -- on the host as a
child with pipes, inside a container in the background with two FIFOs in the container's
/tmp (made from the host, which sees that directory in the rootfs) -- and then asks one
JSON line at a time. Answers come back through the FIFO, not through lxc-attach's output,
which the UML board does not return reliably.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import subprocess
import time
from pathlib import Path
from typing import IO, Any, Protocol

from pytest_hwcrypto.container import probe
from pytest_hwcrypto.container.terminal import Attached, ContainerError

ANSWER_TIMEOUT = 300.0  # a throughput probe runs for its window, a cold python for seconds
START_TIMEOUT = 90.0  # a cold python with the plugin imported under TCG, on a loaded machine


class Attaches(Protocol):
    """What a container prober needs of a container (container.lxc.Container)."""

    interpreter: str

    def attach(self, command: str) -> Attached: ...


class HostProber:
    """`probe serve` as this process's child: the host's side of each comparison."""

    def __init__(self) -> None:
        self._child = subprocess.Popen(
            probe.command("serve", "-", "-"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, *args: str) -> dict[str, Any]:
        assert self._child.stdin is not None and self._child.stdout is not None
        self._child.stdin.write(json.dumps(list(args)) + "\n")
        self._child.stdin.flush()
        return probe.parse_answer(self._child.stdout.readline())

    def close(self) -> None:
        if self._child.stdin is not None:
            self._child.stdin.close()
        try:
            self._child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()


class ContainerProber:
    """`probe serve` in the background inside a started container, spoken to by FIFOs."""

    def __init__(self, container: Attaches, rootfs: Path, tag: str = "probe") -> None:
        self._requests_inside = f"/tmp/hwcrypto-{tag}-requests"
        self._answers_inside = f"/tmp/hwcrypto-{tag}-answers"
        requests = rootfs / self._requests_inside.lstrip("/")
        answers = rootfs / self._answers_inside.lstrip("/")
        for fifo in (requests, answers):
            fifo.unlink(missing_ok=True)
            os.mkfifo(fifo, 0o666)
            os.chmod(fifo, 0o666)  # an unprivileged container's root is "others" here
        argv = probe.command(
            "serve", self._requests_inside, self._answers_inside, interpreter=container.interpreter
        )
        self._log_inside = f"/tmp/hwcrypto-{tag}.log"
        # lxc-attach stays open for the server's life: what an attached shell sends to
        # the background ends with lxc-attach.
        self._server = container.attach(f"{shlex.join(argv)} </dev/null >{self._log_inside} 2>&1")
        # Our end of the answers first (a reader never blocks on open with O_NONBLOCK),
        # then the requests, which opens once the server has opened its end.
        self._answers_fd = os.open(answers, os.O_RDONLY | os.O_NONBLOCK)
        try:
            self._requests: IO[str] = _open_writer(
                requests, START_TIMEOUT, rootfs / self._log_inside.lstrip("/"), self._server
            )
        except ContainerError:
            os.close(self._answers_fd)
            self._server.finish(grace=0)
            raise
        self._pending = b""

    def ask(self, *args: str) -> dict[str, Any]:
        self._requests.write(json.dumps(list(args)) + "\n")
        self._requests.flush()
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"error": f"no answer inside after {ANSWER_TIMEOUT:g} s"}
            if not self._server.alive():
                return {"error": "the probe server inside has ended"}
            ready, _, _ = select.select([self._answers_fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._answers_fd, 65536)
                if not chunk:
                    time.sleep(0.05)  # the server has not opened its end yet
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return probe.parse_answer(line.decode(errors="replace"))

    def close(self) -> None:
        """End the server (its requests end) and close our ends."""
        with contextlib.suppress(OSError):
            self._requests.close()
        os.close(self._answers_fd)
        self._server.finish()


def _open_writer(path: Path, timeout: float, log: Path, server: Attached) -> IO[str]:
    """Open a FIFO for writing once its reader is there (ENXIO until then)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if time.monotonic() > deadline or not server.alive():
                said = log.read_text(errors="replace").strip()[-300:] if log.exists() else ""
                raise ContainerError(
                    f"the probe server inside never opened {path} in {timeout:g} s"
                    + (f": {said}" if said else "")
                ) from error
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return os.fdopen(fd, "w", encoding="utf-8")
