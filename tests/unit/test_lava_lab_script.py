# SPDX-License-Identifier: MIT
"""lava-lab.sh's refusals, which must come before it touches anything (the whole start is
run by hand and in the report of issue 34: it needs minutes and a free port 8000)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto.lab.lava_local import script


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script("lava-lab.sh")), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


def test_usage_and_a_stop_with_nothing_started(tmp_path: Path) -> None:
    env = {"HWCRYPTO_LAB_DIR": str(tmp_path / "lab")}
    assert run(env=env).returncode == 2
    stopped = run("stop", env=env)
    assert stopped.returncode == 0 and "nothing started here" in stopped.stderr


def test_a_taken_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("lava-server") is None or shutil.which("ss") is None:
        pytest.skip("needs root and lava-server: apt-get install lava-server lavacli postgresql")
    lab = tmp_path / "lab"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("start", env={"HWCRYPTO_LAB_DIR": str(lab), "HWCRYPTO_LAB_PORT": str(port)})
    assert done.returncode == 1
    assert f"port {port} on this machine is already in use" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not lab.exists()
