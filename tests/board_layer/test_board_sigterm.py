# SPDX-License-Identifier: MIT
"""A run ended by SIGTERM (a cancelled CI job, `timeout`, `kill PID`) leaves no board
process behind: UML forks a host process per guest process, and those outlived the
kernel's own process when Python died at once on SIGTERM without ending the group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pytest_hwcrypto.boards.uml import UmlBoard

RUN = """
import os, sys
from pathlib import Path
from pytest_hwcrypto.boards.uml import UmlBoard
run_dir = Path(sys.argv[1])
run_dir.mkdir()
UmlBoard().run("sleep 120", cwd=Path("/"), env={}, timeout=300, stream=sys.stdout,
               run_dir=run_dir)
"""


def _board_pids(marker: str) -> list[int]:
    """Processes whose command line names our run directory (the guest script's path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in argv and "python" not in argv.split(" ", 1)[0]:
            found.append(int(entry.name))
    return found


def test_sigterm_ends_every_process_of_the_board(uml_board: UmlBoard, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    runner = subprocess.Popen(
        [sys.executable, "-c", RUN, str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        # the kernel and the guest's processes (init script, sleep) are all up
        while len(_board_pids(str(run_dir))) < 3:
            assert time.monotonic() < deadline, "the board did not come up"
            assert runner.poll() is None, runner.communicate()[0]
            time.sleep(0.5)
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()  # our own child, by its PID
            runner.wait()
    deadline = time.monotonic() + 10
    while _board_pids(str(run_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _board_pids(str(run_dir))
    for pid in left:  # ours (they run our run directory's script): do not leave them
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"board processes outlived SIGTERM: {left}"
