# SPDX-License-Identifier: MIT
"""The helper on a board: uploaded once per connection, run, and removed afterwards."""

from __future__ import annotations

import shlex
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.target.helper_build import built_helper
from pytest_hwcrypto.target.protocol import (
    DEFAULT_COMMAND_SECONDS,
    CommandResult,
    TargetError,
    Transport,
    checked,
)

# /tmp is a tmpfs on the boards this is for (busybox initramfs, buildroot); the name says
# whose file it is, so a later sweep can find one a killed run left.
REMOTE_DIR = "/tmp"
REMOTE_NAME = "hwcrypto-helper"
EXIT_NO_AFALG = 3


@dataclass(frozen=True)
class SpeedSample:
    operations: int
    bytes: int
    nanoseconds: int

    @property
    def bytes_per_second(self) -> float:
        return self.bytes * 1e9 / self.nanoseconds if self.nanoseconds else 0.0


@dataclass(frozen=True)
class BoundRefcnt:
    """The `bound NAME BEFORE AFTER` line of `speed`: the driver's /proc/crypto refcnt
    before the bind and with the request socket open (-1: not listed then)."""

    driver: str
    before: int
    after: int

    @property
    def rose(self) -> bool:
        """The kernel took a reference on this very driver: it is the one that serves."""
        return self.after > max(self.before, 0)


def parse_bound_line(text: str) -> BoundRefcnt | None:
    """The `bound` line of `hwcrypto-helper speed` output; None without one (pure)."""
    for line in text.splitlines():
        words = line.split()
        if len(words) == 4 and words[0] == "bound":
            try:
                return BoundRefcnt(words[1], int(words[2]), int(words[3]))
            except ValueError:
                return None
    return None


def parse_speed_output(text: str) -> tuple[list[SpeedSample], SpeedSample | None]:
    """The `sample` lines of `hwcrypto-helper speed` and its `done` total (pure)."""
    samples: list[SpeedSample] = []
    total = None
    for line in text.splitlines():
        words = line.split()
        if len(words) != 4 or words[0] not in ("sample", "done"):
            continue
        if not all(word.isdigit() for word in words[1:]):
            continue
        sample = SpeedSample(int(words[1]), int(words[2]), int(words[3]))
        if words[0] == "sample":
            samples.append(sample)
        else:
            total = sample
    return samples, total


@dataclass(frozen=True)
class BatchAnswer:
    """One answer line of `hwcrypto-helper batch`: the output, or the errno and what failed."""

    output: bytes | None
    errno: int = 0
    what: str = ""

    @property
    def ok(self) -> bool:
        return self.output is not None


def hex_field(data: bytes | None) -> str:
    """A batch request field: hex, "-" for empty (pure)."""
    return data.hex() if data else "-"


def parse_batch_answers(text: str) -> list[BatchAnswer]:
    """The `ok HEX` / `error ERRNO WHAT` lines of a batch, in order (pure)."""
    answers = []
    for line in text.splitlines():
        words = line.split(maxsplit=2)
        if len(words) == 2 and words[0] == "ok":
            answers.append(BatchAnswer(b"" if words[1] == "-" else bytes.fromhex(words[1])))
        elif len(words) >= 2 and words[0] == "error" and words[1].isdigit():
            answers.append(BatchAnswer(None, int(words[1]), words[2] if len(words) > 2 else ""))
    return answers


@dataclass(frozen=True)
class BatchCost:
    """What one batch cost on the link: requests, bytes each way, wall seconds."""

    requests: int
    bytes_sent: int
    bytes_received: int
    seconds: float


class BoardHelper:
    """The helper installed on the board behind `transport`, removed by `remove`."""

    def __init__(self, transport: Transport, machine: str) -> None:
        self.transport = transport
        self.machine = machine
        self.remote = f"{REMOTE_DIR}/{REMOTE_NAME}"
        self._installed = False

    def install(self) -> None:
        local: Path = built_helper(self.machine)
        self.transport.put(local, self.remote)
        checked(self.transport, f"chmod 755 {shlex.quote(self.remote)}")
        self._installed = True
        probe = self.transport.run(f"{shlex.quote(self.remote)} hash sha256 </dev/null")
        if probe.status not in (0, 1, EXIT_NO_AFALG):
            self.remove()
            raise TargetError(
                f"{self.transport.describe()}: the helper built for {self.machine} does not "
                f"run there (status {probe.status}: {probe.output.strip()[:120]})"
            )

    def run(self, arguments: str, timeout: float = DEFAULT_COMMAND_SECONDS) -> CommandResult:
        if not self._installed:
            self.install()
        return self.transport.run(f"{shlex.quote(self.remote)} {arguments}", timeout)

    def batch(self, requests: Sequence[str]) -> tuple[list[BatchAnswer], BatchCost]:
        """Every request line answered by one helper run: the lines go over as one file
        (a serial console types commands, so a file is how many lines cross it)."""
        began = time.monotonic()
        text = "".join(f"{line}\n" for line in requests)
        remote = f"{REMOTE_DIR}/{REMOTE_NAME}-requests"
        with tempfile.TemporaryDirectory(prefix="hwcrypto-batch-") as local:
            path = Path(local) / "requests"
            path.write_text(text)
            self.transport.put(path, remote)
        try:
            result = self.run(f"batch {shlex.quote(remote)}")
        finally:
            self.transport.run(f"rm -f {shlex.quote(remote)}")
        answers = parse_batch_answers(result.output)
        if not result.ok or len(answers) != len(requests):
            raise TargetError(
                f"{self.transport.describe()}: the helper answered {len(answers)} of "
                f"{len(requests)} batch requests (status {result.status})"
            )
        cost = BatchCost(len(requests), len(text), len(result.output), time.monotonic() - began)
        return answers, cost

    def remove(self) -> None:
        if self._installed:
            self.transport.run(f"rm -f {shlex.quote(self.remote)}")
            self._installed = False
