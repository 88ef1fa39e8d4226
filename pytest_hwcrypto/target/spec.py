# SPDX-License-Identifier: MIT
"""`--hwcrypto-target` as written: which transport, where, as whom (pure).

    ssh://user@host[:port]      the OpenSSH client (dropbear on the board is enough)
    serial:/dev/ttyX[,baud]     a console: log in, then run commands framed by a marker

Every mistake is one line that quotes what was given and says what is expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

SSH_SCHEME = "ssh://"
SERIAL_SCHEME = "serial:"
DEFAULT_SSH_PORT = 22
DEFAULT_BAUD = 115200
# The rates termios can set (a typo such as 11520 is refused, not silently rounded).
BAUD_RATES = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1500000, 3000000)
FORMS = "ssh://user@host[:port] or serial:/dev/ttyX[,baud]"

_HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]")
_USER = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._-]*")


class TargetSpecError(ValueError):
    """`--hwcrypto-target` cannot be used; the message is one line for the user."""


@dataclass(frozen=True)
class SshTarget:
    user: str
    host: str
    port: int = DEFAULT_SSH_PORT

    def describe(self) -> str:
        return f"ssh://{self.user}@{self.host}:{self.port}"


@dataclass(frozen=True)
class SerialTarget:
    device: str
    baud: int = DEFAULT_BAUD

    def describe(self) -> str:
        return f"serial:{self.device},{self.baud}"


TargetSpec = Union[SshTarget, SerialTarget]


def parse_target(text: str) -> TargetSpec | None:
    """The target `text` names; None for "" (test the kernel this process runs on)."""
    text = text.strip()
    if not text:
        return None
    if text.startswith(SSH_SCHEME):
        return _parse_ssh(text, text[len(SSH_SCHEME) :])
    if text.startswith(SERIAL_SCHEME):
        return _parse_serial(text, text[len(SERIAL_SCHEME) :])
    raise TargetSpecError(f"{text!r} is not a target: expected {FORMS}")


def _parse_ssh(text: str, rest: str) -> SshTarget:
    user, at, address = rest.rpartition("@")
    if not at or not user:
        raise TargetSpecError(f"{text!r} names no user: expected ssh://user@host[:port]")
    if not _USER.fullmatch(user):
        raise TargetSpecError(f"{text!r}: {user!r} is not a user name")
    host, port = address, DEFAULT_SSH_PORT
    match = re.fullmatch(r"(.*):([^:\]]*)", address)
    if match and not (address.count(":") > 1 and not address.startswith("[")):
        host, port_text = match.groups()
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise TargetSpecError(f"{text!r}: port {port_text!r} is not a number 1-65535")
        port = int(port_text)
    if address.rstrip("/") != address:
        raise TargetSpecError(f"{text!r}: a target has no path after the host")
    if not host or not _HOST.fullmatch(host):
        raise TargetSpecError(f"{text!r}: {host!r} is not a host name or address")
    return SshTarget(user, host.strip("[]"), port)


def _parse_serial(text: str, rest: str) -> SerialTarget:
    device, comma, baud_text = rest.partition(",")
    if not device.startswith("/"):
        raise TargetSpecError(
            f"{text!r}: the console is a device path such as /dev/ttyUSB0, not {device!r}"
        )
    if not comma:
        return SerialTarget(device)
    if not baud_text.isdigit() or int(baud_text) not in BAUD_RATES:
        rates = ", ".join(str(rate) for rate in BAUD_RATES)
        raise TargetSpecError(f"{text!r}: baud {baud_text!r} is not one of {rates}")
    return SerialTarget(device, int(baud_text))
