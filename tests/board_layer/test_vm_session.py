# SPDX-License-Identifier: MIT
"""`pytest --hwcrypto-vm=uml` and `hwcrypto vm uml` end to end, from the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.uml import UmlBoard


@pytest.fixture(autouse=True)
def _uml_available() -> None:
    try:
        UmlBoard().check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    if "HWCRYPTO_BOARD_RUN_DIR" in os.environ:
        pytest.skip("already inside a virtual board: boards are booted from the host")


def _pytest(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_inner_exit_code_output_and_result_files_come_back(tmp_path: Path) -> None:
    (tmp_path / "test_inside.py").write_text(
        "import os\n"
        "def test_kernel_is_the_boards():\n"
        "    print('INNER', os.uname().release, os.environ['HWCRYPTO_BOARD_KIND'])\n"
        "def test_fails():\n"
        "    assert 1 == 2\n"
    )
    done = _pytest(
        tmp_path,
        "--hwcrypto",
        "--hwcrypto-vm=uml",
        "test_inside.py",
        "-s",
        "--junitxml=reports/junit.xml",
        "--hwcrypto-json",
        "reports/results.json",
        "--hwcrypto-html=reports/report.html",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"INNER {UmlBoard().release()} uml" in done.stdout
    assert "1 failed, 1 passed" in done.stdout
    assert "hwcrypto: uml board" in done.stdout
    junit = (tmp_path / "reports/junit.xml").read_text()
    assert 'failures="1"' in junit
    results = json.loads((tmp_path / "reports/results.json").read_text())
    assert results["kernel"]["release"] == UmlBoard().release()
    assert results["board"]["kind"] == "uml"
    # the HTML report came back, rewritten on the host with what the host added
    report = (tmp_path / "reports/report.html").read_text()
    assert "<td>board.kind</td><td>uml</td>" in report
    assert f"<td>kernel.release</td><td>{UmlBoard().release()}</td>" in report
    assert list((tmp_path / "hwcrypto-artifacts").glob("uml-*-console.log"))


def test_passing_session_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    done = _pytest(tmp_path, "--hwcrypto-vm=uml", "test_ok.py", "-q")
    assert done.returncode == 0, done.stdout + done.stderr


def test_hwcrypto_vm_exec_returns_the_commands_exit_code(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_hwcrypto.cli",
            "vm",
            "uml",
            "--exec",
            "hwcrypto inventory --json > /dev/null; grep -c aes-fixed-time /proc/crypto; exit 5",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 5, done.stdout + done.stderr


def test_missing_kernel_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--hwcrypto", "--hwcrypto-vm=uml", "--hwcrypto-kernel=/nonexistent")
    assert done.returncode == 4
    assert done.stdout.strip().splitlines() == [
        "ERROR: hwcrypto: UML kernel /nonexistent not found: check --hwcrypto-kernel"
    ]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("source", ["command line", "environment HWCRYPTO_ALGORITHM"])
def test_algorithm_choice_reaches_the_suites_inside_the_board(tmp_path: Path, source: str) -> None:
    # The choice is made on the host but the suites are collected inside the board,
    # against the board's /proc/crypto: both ways of giving it must get there.
    chosen = "cbc(aes),sha256"
    args = ["--hwcrypto", "--hwcrypto-vm=uml", "--hwcrypto-suite=correctness,inventory"]
    environment = dict(os.environ)
    if source == "command line":
        args.append(f"--hwcrypto-algorithm={chosen}")
    else:
        environment["HWCRYPTO_ALGORITHM"] = chosen
    done = _pytest(tmp_path, *args, "--collect-only", "-p", "no:cacheprovider", env=environment)
    assert done.returncode == 0, done.stdout + done.stderr
    # not -q, which would hide the header; a collected parametrized suite test shows
    # as <Function test_known_answer[cbc(aes):driver:vector]>, the algorithm first
    algorithms = {
        line.split("[", 1)[1].split(":", 1)[0]
        for line in done.stdout.splitlines()
        if "<Function test_known_answer[" in line or "<Function test_selftest_passed[" in line
    }
    assert algorithms == {"cbc(aes)", "sha256"}, done.stdout
    assert f"only algorithms cbc(aes), sha256 ({source})" in done.stdout


LONG_FINDING = (
    "cbc(aes) [afalg, 128-bit key, encrypt]: offload cbc-aes-engine is slower than generic "
    "cbc(aes-generic) at 16, 64, 256, 1024, 4096 B (0.22x at 256 B)"
)


def test_a_log_through_a_pipe_gets_the_board_sessions_findings_whole(tmp_path: Path) -> None:
    """The session inside the board prints the summary on the board's console, a terminal
    of its own; the caller's output is a pipe (a CI log), so no finding may be wrapped."""
    (tmp_path / "test_long.py").write_text(
        "from pytest_hwcrypto.model.results import Finding\n"
        "def test_long(hwcrypto_results):\n"
        f"    finding = Finding('hw-loses-to-sw', 'cbc(aes)', {LONG_FINDING!r})\n"
        "    hwcrypto_results.add_finding(finding)\n"
    )
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    done = _pytest(tmp_path, "--hwcrypto", "--hwcrypto-vm=uml", "test_long.py", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    compact = LONG_FINDING.replace("[afalg, 128-bit key, encrypt]", "[afalg 128 encrypt]")
    assert f"  {compact}" in done.stdout.splitlines(), done.stdout
