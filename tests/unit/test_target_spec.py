# SPDX-License-Identifier: MIT
"""--hwcrypto-target as written: ssh://user@host[:port] and serial:/dev/ttyX[,baud]."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.target.spec import (
    SerialTarget,
    SshTarget,
    TargetSpecError,
    parse_target,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ssh://root@127.0.0.1:2222", SshTarget("root", "127.0.0.1", 2222)),
        ("ssh://root@board", SshTarget("root", "board", 22)),
        ("ssh://ci-user@lab-7.example.org:22", SshTarget("ci-user", "lab-7.example.org", 22)),
        ("ssh://root@[fe80::1]:2200", SshTarget("root", "fe80::1", 2200)),
        ("serial:/dev/ttyUSB0", SerialTarget("/dev/ttyUSB0", 115200)),
        ("serial:/dev/ttyS1,9600", SerialTarget("/dev/ttyS1", 9600)),
        ("  serial:/dev/pts/3,115200 ", SerialTarget("/dev/pts/3", 115200)),
    ],
)
def test_targets_parse(text: str, expected: object) -> None:
    assert parse_target(text) == expected


def test_no_target_is_the_running_kernel() -> None:
    assert parse_target("") is None
    assert parse_target("   ") is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("board:22", "expected ssh://user@host[:port] or serial:/dev/ttyX[,baud]"),
        ("ssh://board", "names no user"),
        ("ssh://root@board:99999", "port '99999' is not a number 1-65535"),
        ("ssh://root@board:ssh", "port 'ssh' is not a number"),
        ("ssh://root@bo ard", "is not a host name"),
        ("ssh://root@board/", "no path after the host"),
        ("ssh://ro ot@board", "is not a user name"),
        ("serial:ttyUSB0", "a device path such as /dev/ttyUSB0"),
        ("serial:/dev/ttyUSB0,11520", "baud '11520' is not one of"),
        ("serial:/dev/ttyUSB0,fast", "baud 'fast'"),
    ],
)
def test_mistakes_are_one_line_that_quotes_the_value(text: str, says: str) -> None:
    with pytest.raises(TargetSpecError) as raised:
        parse_target(text)
    message = str(raised.value)
    assert says in message
    assert repr(text.strip()) in message
    assert "\n" not in message


def test_describe_round_trips() -> None:
    for text in ("ssh://root@127.0.0.1:2222", "serial:/dev/ttyS1,9600"):
        spec = parse_target(text)
        assert spec is not None
        assert parse_target(spec.describe()) == spec
