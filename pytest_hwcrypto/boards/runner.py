# SPDX-License-Identifier: MIT
"""Entry points that run something inside a virtual board and report what happened.

Used by `pytest --hwcrypto-vm=...` and by `hwcrypto vm`. Every run names the kernel it
booted, and kernel trouble seen on the board's console is reported, never dropped: an
oops fails the run, a crypto self-test failure is printed and recorded as a finding.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TextIO

from pytest_hwcrypto.boards.base import (
    Board,
    BoardError,
    BoardResult,
    new_run_dir,
    passed_environment,
)
from pytest_hwcrypto.boards.console import KernelEvent
from pytest_hwcrypto.boards.helpers import (
    path_with_environment,
)
from pytest_hwcrypto.boards.inner_pytest import (
    REPORT_HTML,
    RESULTS_JSON,
    copy_input_files,
    copy_result_files,
    inner_pytest_args,
    input_files_from_elsewhere,
    pytest_command,
)
from pytest_hwcrypto.boards.registry import make_board
from pytest_hwcrypto.kernel.selftest_log import FAILED, parse_line
from pytest_hwcrypto.run import HOST_PATHS_ENV, NO_TERMINAL_ENV, HwcryptoRun, lava_on

EXIT_BOARD_UNAVAILABLE = 4  # same as pytest's usage error: nothing ran
EXIT_TESTS_FAILED = 1


def run_pytest_session_in_board(
    kind: str, run: HwcryptoRun, args: list[str], cwd: Path, stream: TextIO
) -> int:
    """Boot the board, run this pytest command inside it, return the inner exit code."""
    try:
        options = run.options
        board = make_board(
            kind,
            options.kernel,
            options.modules,
            options.cryptodev,
            options.test_drivers,
            third_party=options.third_party,
        )
        board.check_prerequisites()
    except BoardError as error:
        stream.write(f"ERROR: hwcrypto: {error}\n")
        return EXIT_BOARD_UNAVAILABLE
    run_dir = new_run_dir()
    try:
        inner = inner_pytest_args(
            [*args, *input_files_from_elsewhere(run.settings), *_lava_option(run, args)],
            cwd,
            run_dir,
            color=stream.isatty(),
        )
        copy_input_files(inner, run_dir)
        try:
            host_paths = {
                str(run_dir / name): str(path) for name, path in inner.result_files.items()
            }
            result = _boot_and_run(
                board,
                pytest_command(inner.args, board.guest_python),
                cwd,
                run_dir,
                run,
                stream,
                {HOST_PATHS_ENV: json.dumps(host_paths), **_terminal_width(stream)},
            )
        except BoardError as error:  # host-side preparation failed (building a module)
            stream.write(f"ERROR: hwcrypto: {error}\n")
            return EXIT_BOARD_UNAVAILABLE
        copy_result_files(inner, run_dir)
        json_path = inner.result_files.get(RESULTS_JSON)
        if json_path is not None and json_path.exists():
            record_kernel_events(json_path, result)
            html_path = inner.result_files.get(REPORT_HTML)
            if html_path is not None and html_path.exists():
                rewrite_html_report(json_path, html_path)
        return exit_code_with_kernel_events(result, stream)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def run_command_in_board(
    board: Board, command: str, cwd: Path, run: HwcryptoRun, stream: TextIO
) -> int:
    """`hwcrypto vm ... --exec CMD`: one shell command inside the board."""
    run_dir = new_run_dir()
    try:
        result = _boot_and_run(board, command, cwd, run_dir, run, stream)
        return exit_code_with_kernel_events(result, stream)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _boot_and_run(
    board: Board,
    command: str,
    cwd: Path,
    run_dir: Path,
    run: HwcryptoRun,
    stream: TextIO,
    extra_env: dict[str, str] | None = None,
) -> BoardResult:
    stream.write(f"hwcrypto: booting {board.name} board, kernel {board.kernel_description()}\n")
    stream.flush()
    env = passed_environment(os.environ)
    # The command finds this environment's programs (hwcrypto, pytest) as the board's own
    # helpers do, whether or not the venv was activated.
    env["PATH"] = path_with_environment()
    env.update(extra_env or {})
    result = board.run(
        command,
        cwd=cwd,
        env=env,
        timeout=run.options.vm_timeout,
        stream=stream,
        artifacts_dir=cwd / run.options.artifacts,
        run_dir=run_dir,
    )
    stream.write(describe_result(result) + "\n")
    stream.flush()
    return result


def _lava_option(run: HwcryptoRun, args: list[str]) -> list[str]:
    """--hwcrypto-lava for the inner session when LAVA runs this (outer) one: LAVA reads
    the signals the inner session prints, relayed on this console."""
    given = any(arg.startswith("--hwcrypto-lava") for arg in args)
    return ["--hwcrypto-lava"] if lava_on(run.options.lava) and not given else []


def _terminal_width(stream: TextIO) -> dict[str, str]:
    """COLUMNS for the inner session: the board's console is a pty of its own size, and
    the summary should fit the caller's terminal (pytest reads COLUMNS); or, when the
    caller's output is not a terminal, word that it has no width at all. A COLUMNS of the
    caller's own passes through and counts, as it does outside a board."""
    if "COLUMNS" in os.environ:
        return {}
    if not stream.isatty():
        return {NO_TERMINAL_ENV: "1"}
    return {"COLUMNS": str(shutil.get_terminal_size().columns)}


def describe_result(result: BoardResult) -> str:
    boot = f"{result.boot_seconds:.1f} s" if result.boot_seconds is not None else "never ready"
    state = "timed out" if result.timed_out else f"exit {result.exit_code}"
    return (
        f"hwcrypto: {result.board} board ({result.kernel}): boot {boot}, "
        f"total {result.total_seconds:.1f} s, {state}; console log {result.console_log}"
    )


def exit_code_with_kernel_events(result: BoardResult, stream: TextIO) -> int:
    """Print kernel trouble; an oops or a dead board fails a run that otherwise passed."""
    for event in result.kernel_events:
        stream.write(f"hwcrypto: kernel log: {event.kind}: {event.line}\n")
    if result.timed_out:
        stream.write("hwcrypto: the board was ended after --hwcrypto-vm-timeout\n")
    oopsed = any(event.kind == "oops" for event in result.kernel_events)
    if result.exit_code == 0 and (oopsed or not result.completed):
        return EXIT_TESTS_FAILED
    return result.exit_code


def record_kernel_events(json_path: Path, result: BoardResult) -> None:
    """Add what the board's kernel log showed to the results file the inner session wrote."""
    try:
        data = json.loads(json_path.read_text())
    except (OSError, ValueError):
        return
    findings = data.setdefault("findings", [])
    # The inventory suite inside already reported the self-test failures it read in the
    # kernel log, by driver; the console's copy of the same failure adds nothing.
    reported = {
        (f.get("kind"), f.get("driver"))
        for f in findings
        if isinstance(f, dict) and f.get("driver")
    }
    for event in result.kernel_events:
        finding = _finding(event)
        if (finding["kind"], finding.get("driver")) not in reported:
            findings.append(finding)
    data.setdefault("board", {}).update(
        {"kind": result.board, "kernel": result.kernel, "boot_seconds": result.boot_seconds}
    )
    json_path.write_text(json.dumps(data, indent=2) + "\n")


def rewrite_html_report(json_path: Path, html_path: Path) -> None:
    """Write the HTML report again from the results file as the host completed it (board,
    boot time, kernel trouble on the console), which the session inside could not know."""
    from pytest_hwcrypto.model.results import ResultsError, load_results
    from pytest_hwcrypto.report.document import ReportError, write_session_report

    try:
        write_session_report(load_results(json_path), html_path, source=str(json_path))
    except (ResultsError, ReportError):
        return  # the report the board wrote stays


def _finding(event: KernelEvent) -> dict[str, object]:
    """A console event as a finding; a self-test summary line names its driver and errno."""
    report = parse_line(event.line) if event.kind == "selftest-failed" else None
    if report is None or report.kind != FAILED:
        return {"kind": f"kernel-{event.kind}", "algorithm": "", "detail": event.line}
    return {
        "kind": f"kernel-{event.kind}",
        "algorithm": report.algorithm,
        "detail": report.describe(),
        "driver": report.driver,
        "rc": report.rc,
        "error": report.error,
    }


__all__ = ["BoardError", "run_command_in_board", "run_pytest_session_in_board"]
