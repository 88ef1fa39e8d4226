# SPDX-License-Identifier: MIT
"""The UML board itself: it boots, runs, reports, and never outlives its run."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_hwcrypto.boards.base import passed_environment
from pytest_hwcrypto.boards.uml import UmlBoard, board_cpu


def _run(board: UmlBoard, command: str, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    out = io.StringIO()
    result = board.run(
        command, cwd=Path.cwd(), env=passed_environment(os.environ), timeout=timeout, stream=out
    )
    return result, out.getvalue()


def _our_uml_processes(pid_hint: str) -> list[str]:
    # -ww: without it ps cuts lines to $COLUMNS (80 under pytest), before the run dir.
    ps = subprocess.run(
        ["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True, check=True
    )
    return [line for line in ps.stdout.splitlines() if pid_hint in line and "linux.uml" in line]


def test_exit_code_output_and_boot_time(
    uml_board: UmlBoard, record_property: Callable[[str, object], None]
) -> None:
    board = uml_board
    result, output = _run(board, "echo inside $(uname -r) $(uname -m); exit 7")
    assert result.exit_code == 7
    assert f"inside {board.release()} x86_64" in output
    # Boot time is reported, not held to a budget: a 10 s bar failed CI at 10.1 s on the
    # shared 2-vCPU host. What must hold is that the ready marker was seen, and seen
    # before the run ended.
    assert result.boot_seconds is not None
    assert 0.0 < result.boot_seconds <= result.total_seconds
    record_property("boot_seconds", round(result.boot_seconds, 1))
    assert result.kernel_events == []


def test_files_written_to_the_run_dir_come_back(uml_board: UmlBoard, tmp_path: Path) -> None:
    board = uml_board
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = io.StringIO()
    result = board.run(
        'echo from-the-board > "$HWCRYPTO_BOARD_RUN_DIR/result.txt"; '
        "touch /hwcrypto-must-not-exist 2>/dev/null; echo rc=$?",
        cwd=Path.cwd(),
        env={},
        timeout=60,
        stream=out,
        run_dir=run_dir,
    )
    assert result.exit_code == 0
    assert (run_dir / "result.txt").read_text() == "from-the-board\n"
    assert "rc=1" in out.getvalue(), "the host root must be read-only inside the board"
    assert not Path("/hwcrypto-must-not-exist").exists()


def test_caller_environment_and_cwd_are_kept(uml_board: UmlBoard) -> None:
    board = uml_board
    env = {**passed_environment(os.environ), "HWCRYPTO_PROBE": "42"}
    out = io.StringIO()
    result = board.run(
        f'echo "$HWCRYPTO_PROBE $(pwd)"; {sys.executable} -c "print(6*7)"',
        cwd=Path.cwd(),
        env=env,
        timeout=60,
        stream=out,
    )
    assert result.exit_code == 0
    assert f"42 {Path.cwd()}" in out.getvalue()
    assert "\n42\n" in out.getvalue()


def test_timeout_ends_the_board_and_leaves_no_process(uml_board: UmlBoard, tmp_path: Path) -> None:
    board = uml_board
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result, _ = _run(board, "sleep 600", timeout=8.0)
    assert result.timed_out
    assert result.exit_code == 3
    assert _our_uml_processes(str(result.console_log.parent)) == []


def test_kernel_trouble_on_the_console_is_reported(uml_board: UmlBoard) -> None:
    board = uml_board
    result, _ = _run(board, "echo 'alg: skcipher: cbc-aes-demo encryption test failed' > /dev/kmsg")
    assert [e.kind for e in result.kernel_events] == ["selftest-failed"]


def test_output_without_final_newline_is_not_lost(uml_board: UmlBoard) -> None:
    board = uml_board
    result, output = _run(board, "printf 'no newline here'")
    assert result.exit_code == 0
    assert "no newline here" in output


def test_working_directory_under_tmp_stays_visible(uml_board: UmlBoard, tmp_path: Path) -> None:
    board = uml_board
    (tmp_path / "marker.txt").write_text("visible")
    out = io.StringIO()
    result = board.run(
        "cat marker.txt", cwd=tmp_path, env=passed_environment(os.environ), timeout=60, stream=out
    )
    assert result.exit_code == 0
    assert "visible" in out.getvalue()


def test_every_board_process_runs_on_the_one_chosen_cpu(
    uml_board: UmlBoard, tmp_path: Path
) -> None:
    board = uml_board
    cpu = board_cpu(os.sched_getaffinity(0))
    if cpu is None:
        pytest.skip("this process may run on one CPU only: nothing to choose")
    run_dir = tmp_path / "run"  # in the kernel's init= path: it names the board's processes
    run_dir.mkdir()
    seen: dict[str, str] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for line in _our_uml_processes(str(run_dir)):
                pid = line.split()[0]
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:  # a short-lived guest program, gone since ps listed it
                    continue
                seen[pid] = status.split("Cpus_allowed_list:", 1)[1].split()[0]
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = board.run(
            "sleep 3",
            cwd=Path.cwd(),
            env=passed_environment(os.environ),
            timeout=60.0,
            stream=io.StringIO(),
            run_dir=run_dir,
        )
    finally:
        done.set()
        watcher.join()
    assert result.exit_code == 0
    # The UML kernel's process and the host processes of guest programs (sleep, sh, ...).
    assert len(seen) >= 2, seen
    assert set(seen.values()) == {str(cpu)}, seen


def test_working_in_tmp_itself_keeps_the_run_directory_writable(uml_board: UmlBoard) -> None:
    """/tmp kept visible read-only must not cover the run directory inside it, where the
    board writes its exit code, dmesg and results (hwcrypto ab run from /tmp failed so).

    The guest writes into its own run directory by name: a glob over /tmp/hwcrypto-board-*
    also met other boards' run directories, which vanish while CI runs beside benchmarks.
    """
    run_dir = Path(tempfile.mkdtemp(prefix="hwcrypto-board-", dir="/tmp"))
    probe = run_dir / "written-from-the-guest"
    out = io.StringIO()
    try:
        result = uml_board.run(
            f"touch {shlex.quote(str(probe))} && echo written",
            cwd=Path("/tmp"),
            env=passed_environment(os.environ),
            timeout=60,
            stream=out,
            run_dir=run_dir,
        )
        assert result.exit_code == 0, out.getvalue()
        assert "written" in out.getvalue()
        assert probe.is_file()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
