# SPDX-License-Identifier: MIT
"""--hwcrypto-target wired: a board that cannot be reached is one line before collection.

A board that can be reached is proven in tests/board_layer/test_busybox_target.py.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def closed_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs OpenSSH's ssh client")
def test_a_refused_connection_is_one_line(pytester: pytest.Pytester) -> None:
    port = closed_port()
    result = pytester.runpytest_subprocess(
        "--hwcrypto", f"--hwcrypto-target=ssh://root@127.0.0.1:{port}", "-q"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert errors == [
        f"ERROR: --hwcrypto-target: ssh://root@127.0.0.1:{port}: ssh: connect to host "
        f"127.0.0.1 port {port}: Connection refused"
    ]
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_a_missing_console_is_one_line(pytester: pytest.Pytester, tmp_path: Path) -> None:
    device = tmp_path / "ttyUSB9"
    result = pytester.runpytest_subprocess("--hwcrypto", f"--hwcrypto-target=serial:{device}", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert errors == [
        f"ERROR: --hwcrypto-target: serial:{device},115200: cannot open the console: "
        "No such file or directory"
    ]


def test_a_malformed_target_names_the_option(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--hwcrypto", "--hwcrypto-target=board:22", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--hwcrypto-target" in result.stderr.str()
    assert "expected ssh://user@host[:port] or serial:/dev/ttyX[,baud]" in result.stderr.str()


def test_the_environment_sets_the_target_like_any_setting(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HWCRYPTO_TARGET", "serial:relative/tty")
    result = pytester.runpytest_subprocess("--hwcrypto", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "HWCRYPTO_TARGET" in result.stderr.str()
