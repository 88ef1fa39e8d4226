# SPDX-License-Identifier: MIT
"""One host-driven run's connection to its board: the transport, what the board's kernel
is, its /proc/crypto, and the helper, removed when the run ends."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from pytest_hwcrypto.kernel.facts import gather_kernel_facts
from pytest_hwcrypto.target.helper_run import BoardHelper
from pytest_hwcrypto.target.mirror import mirror_board
from pytest_hwcrypto.target.protocol import TargetError, Transport, checked
from pytest_hwcrypto.target.spec import SerialTarget, SshTarget, TargetSpec


def open_transport(spec: TargetSpec, identity: str | None = None) -> Transport:
    if isinstance(spec, SshTarget):
        from pytest_hwcrypto.target.ssh import SshTransport

        return SshTransport(spec, identity)
    if isinstance(spec, SerialTarget):
        from pytest_hwcrypto.target.serial import SerialTransport

        return SerialTransport(spec)
    raise TargetError(f"unknown target {spec!r}")


class TargetSession:
    """Connected on construction; `close` removes what the run put on the board."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        kernel_name = checked(transport, "uname -s").strip()
        if kernel_name != "Linux":
            raise TargetError(f"{transport.describe()}: the board is not Linux ({kernel_name!r})")
        self.machine = checked(transport, "uname -m").strip()
        self._mirror = tempfile.TemporaryDirectory(prefix="hwcrypto-target-")
        self.files = mirror_board(transport, Path(self._mirror.name))
        kernel = gather_kernel_facts(Path(self._mirror.name), machine=self.machine)
        if kernel.config_source and kernel.config_source.startswith(self._mirror.name):
            # The board's path, not the host's copy of it.
            board_path = kernel.config_source[len(self._mirror.name) :]
            kernel = dataclasses.replace(
                kernel, config_source=f"{transport.describe()}:{board_path}"
            )
        self.kernel = kernel
        self.helper = BoardHelper(transport, self.machine)

    @property
    def proc_crypto(self) -> str:
        return self.files["/proc/crypto"].decode(errors="replace")

    def proc_crypto_now(self) -> str:
        """/proc/crypto read again (after a run it lists the instances the run created)."""
        return checked(self.transport, "cat /proc/crypto")

    def kernel_log(self) -> list[str]:
        """The board's kernel log; [] when dmesg cannot be read there (not root)."""
        result = self.transport.run("dmesg")
        return dmesg_messages(result.output) if result.ok else []

    def header_line(self) -> str:
        return (
            f"hwcrypto: target {self.transport.describe()}: "
            f"Linux {self.kernel.release} ({self.machine}), driven from this host"
        )

    def close(self) -> None:
        try:
            self.helper.remove()
        finally:
            self.transport.close()
            self._mirror.cleanup()


def dmesg_messages(text: str) -> list[str]:
    """dmesg's lines as /dev/kmsg gives messages: without the `[ seconds]` stamp (pure)."""
    return [re.sub(r"^\[\s*[0-9.]+\]\s?", "", line) for line in text.splitlines()]
