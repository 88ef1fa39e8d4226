# SPDX-License-Identifier: MIT
"""The `hwcrypto` command as the board-layer tests run it: a subprocess of this Python,
output captured, the exit code left to the test."""

from __future__ import annotations

import subprocess
import sys


def run_ab(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    """`hwcrypto ab ARGS`; a run of whole A/B pairs on UML takes minutes, hence the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "pytest_hwcrypto.cli", "ab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
