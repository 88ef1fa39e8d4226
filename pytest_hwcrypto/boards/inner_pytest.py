# SPDX-License-Identifier: MIT
"""Run a pytest session inside a virtual board and bring its result files back to the host.

The outer session (on the host) boots the board and runs the same pytest command inside,
minus the options that choose the board. Files the caller named with --junitxml and
--hwcrypto-json are written by the inner session into the board's run directory (the one
writable host directory) and copied to the caller's paths afterwards.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.run import resolve_baseline_path
from pytest_hwcrypto.settings import COMMAND_LINE, SETTINGS, BoardRole, Resolved, Setting


def _with_role(role: BoardRole) -> list[Setting]:
    return [setting for setting in SETTINGS if setting.board_role is role]


# Options consumed by the outer session: they choose and boot the board.
_BOARD_OPTIONS = tuple(setting.option for setting in _with_role(BoardRole.CHOOSES_BOARD))
# Options naming files the inner session writes; they come back to the host. Each
# result-file setting needs its name in the run directory here.
RESULTS_JSON = "results.json"
REPORT_HTML = "report.html"
KCIDB_JSON = "kcidb.json"
_RESULT_FILE_NAMES = {"json": RESULTS_JSON, "html": REPORT_HTML, "kcidb": KCIDB_JSON}
_RESULT_FILE_OPTIONS = {
    "--junitxml": "junit.xml",
    "--junit-xml": "junit.xml",
    **{s.option: _RESULT_FILE_NAMES[s.name] for s in _with_role(BoardRole.RESULT_FILE)},
}
# Options naming files the inner session reads. They are copied into the run directory
# before boot: a host path under /tmp (or anywhere the board mounts over) is not the
# same file inside the board.
# Each goes into its own subdirectory under its own file name, which messages then show.
_INPUT_FILES = {setting.option: setting for setting in _with_role(BoardRole.INPUT_FILE)}
_BASELINE_OPTION = next(s.option for s in SETTINGS if s.name == "baseline")


@dataclass
class InnerCommand:
    args: list[str]
    # board run-directory file name -> host path it is copied to afterwards
    result_files: dict[str, Path] = field(default_factory=dict)
    # board run-directory file name -> host path it is copied from before boot
    input_files: dict[str, Path] = field(default_factory=dict)


def inner_pytest_args(
    args: list[str], cwd: Path, run_dir: Path, color: bool = False
) -> InnerCommand:
    """Rewrite the outer pytest arguments for the session inside the board."""
    inner = InnerCommand(args=[])
    position = 0
    while position < len(args):
        arg = args[position]
        name, has_value, value = arg.partition("=")
        takes_next = not has_value and name in (
            *_BOARD_OPTIONS,
            *_RESULT_FILE_OPTIONS,
            *_INPUT_FILES,
        )
        if takes_next:
            if position + 1 >= len(args):
                break  # pytest's own parser already rejected a missing value
            value = args[position + 1]
            position += 1
        position += 1
        if name in _BOARD_OPTIONS:
            continue
        if name in _RESULT_FILE_OPTIONS:
            board_name = _RESULT_FILE_OPTIONS[name]
            inner.result_files[board_name] = (cwd / value).resolve()
            inner.args.append(f"{name}={run_dir / board_name}")
            continue
        if name in _INPUT_FILES:
            if name == _BASELINE_OPTION:  # may be a pytest-benchmark run id: 0001
                value = resolve_baseline_path(value, name, storage=cwd / ".benchmarks")
            host_path = (cwd / value).resolve()
            board_name = f"{_INPUT_FILES[name].name}/{host_path.name}"
            inner.input_files[board_name] = host_path
            inner.args.append(f"{name}={run_dir / board_name}")
            continue
        inner.args.append(arg)
    # No cache or bytecode writes: the host root is read-only inside the board.
    inner.args[:0] = ["-p", "no:cacheprovider"]
    if not any(arg.startswith("--color") for arg in args):
        # The board's console is a pty, so pytest inside would always colour; follow the
        # caller's terminal instead, so CI logs stay plain.
        inner.args.insert(2, f"--color={'yes' if color else 'no'}")
    return inner


def input_files_from_elsewhere(settings: Mapping[str, Resolved]) -> list[str]:
    """Options for input files the caller set by environment, ini or profile.

    HWCRYPTO_* variables reach the board too, but a path in them may not exist there; as
    options they are copied in like the rest (the command line wins over the environment
    inside the board as well).
    """
    extra = []
    for option, setting in _INPUT_FILES.items():
        resolved = settings.get(setting.name)
        if resolved is not None and resolved.value and resolved.source != COMMAND_LINE:
            extra.append(f"{option}={resolved.value}")
    return extra


def copy_input_files(inner: InnerCommand, run_dir: Path) -> None:
    """Put the files the inner session reads where the board sees them.

    The outer session has already loaded each one, so a missing file was reported there.
    """
    for board_name, host_path in inner.input_files.items():
        (run_dir / board_name).parent.mkdir(exist_ok=True)
        shutil.copyfile(host_path, run_dir / board_name)


def copy_result_files(inner: InnerCommand, run_dir: Path) -> list[Path]:
    copied = []
    for board_name, host_path in inner.result_files.items():
        produced = run_dir / board_name
        if produced.exists():
            host_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(produced, host_path)
            copied.append(host_path)
    return copied


def pytest_command(args: list[str], python: str | None = None) -> str:
    """The pytest command line inside a board: `python` is the board's interpreter (the
    ARM boards' own), else the one running this session."""
    return shlex.join([python or sys.executable, "-m", "pytest", *args])
