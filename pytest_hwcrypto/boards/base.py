# SPDX-License-Identifier: MIT
"""What every virtual board does: boot a kernel, run one command inside, bring results back.

A board sees the host's root filesystem read-only, plus one writable host directory (the
run directory, under the host's temporary directory; the guest must be able to read its
init script there before it mounts anything, which rules out /dev/shm). The command runs
with the caller's working directory, PATH and Python environment; its output is streamed,
its exit code returned, and the console log and the guest's dmesg are kept as artifacts.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import pytest_hwcrypto
from pytest_hwcrypto.boards.console import Console, ConsoleOutcome, KernelEvent, scan_kernel_log

# The environment a command inside the board gets from the caller. An allow-list, because
# the guest script is written to disk and the rest of the caller's environment may hold
# secrets (tokens, keys) that must not land there.
_PASSED_ENV_NAMES = (
    "PATH",
    "HOME",
    "LANG",
    "TZ",
    "TERM",
    "COLUMNS",
    "CI",
    "USER",
    "LOGNAME",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
)
_PASSED_ENV_PREFIXES = ("LC_", "HWCRYPTO_", "PYTEST_")

# Modules every board loads up front, so no test depends on on-demand loading inside the
# board: the crypto user API, loop + dm-crypt, and the software templates and ciphers.
# Boards add their own hardware drivers. modprobe skips the ones a kernel lacks.
CRYPTO_TEST_MODULES = (
    "algif_skcipher",
    "algif_hash",
    "algif_aead",
    "algif_rng",
    "loop",
    "dm_crypt",
    "xts",
    "ctr",
    "gcm",
    "ccm",
    "cbc",
    "ecb",
    "essiv",
    "authenc",
    "sha512_generic",
    "sha3_generic",
    "des_generic",
    "chacha20poly1305",
    "drbg",
)

# Exit code when the board ended without the command reporting one (panic, crash, timeout).
BOARD_FAILED_EXIT_CODE = 3


class BoardError(Exception):
    """A board cannot be started here; the message says what to install or fix."""


@dataclass
class BoardResult:
    board: str
    kernel: str
    exit_code: int
    boot_seconds: float | None
    total_seconds: float
    timed_out: bool
    console_log: Path
    dmesg_log: Path | None
    kernel_events: list[KernelEvent] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        return not self.timed_out and self.exit_code != BOARD_FAILED_EXIT_CODE


def passed_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    return {
        name: value
        for name, value in environ.items()
        if name in _PASSED_ENV_NAMES or name.startswith(_PASSED_ENV_PREFIXES)
    }


def is_under(path: Path, directories: Iterable[str]) -> bool:
    """Is `path` inside one of `directories` (which a board covers with tmpfs)?"""
    return any(path == Path(d) or Path(d) in path.parents for d in directories)


def host_dirs_to_keep(cwd: Path, scratch: Iterable[str], run_dir: Path) -> list[Path]:
    """Host directories the guest needs but a scratch tmpfs would cover, outermost first.

    The caller's working directory, the Python environment running this session (a venv)
    and the plugin's own source (an editable install) may all live under /tmp, e.g. in a
    CI checkout there; the guest runs the same interpreter on the same files.
    """
    wanted = [cwd, Path(sys.prefix), Path(pytest_hwcrypto.__file__).resolve().parent.parent]
    covered = [
        path.resolve()
        for path in wanted
        if is_under(path.resolve(), scratch) and not is_under(path.resolve(), [str(run_dir)])
    ]
    kept: list[Path] = []
    for path in sorted(set(covered), key=lambda p: len(p.parts)):
        if not any(path == outer or outer in path.parents for outer in kept):
            kept.append(path)
    return kept


def new_run_dir(parent: Path | None = None) -> Path:
    run_dir = (parent or Path(tempfile.gettempdir())) / f"hwcrypto-board-{uuid.uuid4().hex[:12]}"
    run_dir.mkdir(mode=0o700)
    return run_dir


def guest_command_script(
    board: str, command: str, cwd: Path, env: dict[str, str], run_dir: Path
) -> str:
    """The part of the guest script shared by all boards: environment, command, markers."""
    exports = "\n".join(
        f"export {name}={shlex.quote(value)}" for name, value in sorted(env.items())
    )
    return f"""
{exports}
export HWCRYPTO_BOARD_RUN_DIR={shlex.quote(str(run_dir))}
export HWCRYPTO_BOARD_KIND={board}
export PYTHONDONTWRITEBYTECODE=1
cd {shlex.quote(str(cwd))} || echo "hwcrypto board: cannot enter {cwd}"
echo HWCRYPTO-BOARD-READY
/bin/sh -c {shlex.quote(command)}
rc=$?
dmesg > {shlex.quote(str(run_dir / "dmesg.txt"))} 2>/dev/null
sync
echo HWCRYPTO-BOARD-EXIT=$rc
"""


# What the boards' own command lines set: a word that changed them would break the board
# (its init, console or root filesystem), not configure the kernel under test.
BOARD_OWNED_PARAMETERS = frozenset(
    {"init", "rdinit", "root", "rootfstype", "rootflags", "ro", "rw", "con", "con0", "console",
     "mem", "panic", "ubd0"}
)  # fmt: skip


def kernel_args_from(texts: Iterable[str]) -> tuple[str, ...]:
    """Kernel command-line words from option values ("a=1 b", shell-quoted): ValueError
    names a word the board owns itself."""
    words: list[str] = []
    for text in texts:
        try:
            split = shlex.split(text)
        except ValueError as error:
            raise ValueError(f"{text!r}: {error}") from None
        for word in split:
            if word.split("=", 1)[0] in BOARD_OWNED_PARAMETERS:
                raise ValueError(
                    f"{word!r}: the board sets {word.split('=', 1)[0]} itself (it boots the "
                    "board's own init, console and root file system)"
                )
            words.append(word)
    return tuple(words)


class Board(ABC):
    """A virtual board. Subclasses say how to boot; running and reporting is shared."""

    name: str
    # The Python a pytest session inside runs with; None: the host's (sys.executable),
    # which boards sharing the host's root filesystem run as it is.
    guest_python: str | None = None
    # More words for the kernel command line (`hwcrypto ab --b-cmdline`), checked by
    # kernel_args_from; a board that boots a kernel it is given adds them to its own.
    kernel_args: tuple[str, ...] = ()

    def guest_environment(self, env: dict[str, str]) -> dict[str, str]:
        """The environment the command gets inside; a board whose guest cannot run the
        host's programs (another architecture) replaces what points at them."""
        return env

    @abstractmethod
    def check_prerequisites(self) -> None:
        """Raise BoardError naming the package to install when something is missing."""

    @abstractmethod
    def kernel_description(self) -> str:
        """Which kernel this board boots (path and release), for every report."""

    @abstractmethod
    def boot_argv(self, run_dir: Path, guest_script: Path) -> list[str]:
        """The host command that boots the board and runs guest_script as root inside."""

    def prepare(self, run_dir: Path, stream: TextIO | None) -> None:
        """Host-side work before boot that needs the run directory (building a module the
        guest loads, ...); progress goes to `stream`. Nothing by default."""
        return None

    @abstractmethod
    def guest_script(self, command_script: str, run_dir: Path, cwd: Path) -> str:
        """The whole script the guest runs: board-specific setup around command_script.

        The board covers scratch directories such as /tmp with tmpfs; `cwd` (the caller's
        working directory) must stay visible even when it lives under one of them.
        """

    def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        stream: TextIO | None,
        artifacts_dir: Path | None = None,
        run_dir: Path | None = None,
    ) -> BoardResult:
        """Boot, run `command` (a shell command line) inside, and return what happened."""
        self.check_prerequisites()
        own_run_dir = run_dir is None
        run_dir = run_dir or new_run_dir()
        try:
            self.prepare(run_dir, stream)
            script_path = run_dir / "guest.sh"
            script = self.guest_script(
                guest_command_script(self.name, command, cwd, self.guest_environment(env), run_dir),
                run_dir,
                cwd,
            )
            script_path.write_text(script)
            script_path.chmod(0o700)
            console = Console(
                self.boot_argv(run_dir, script_path), run_dir / "console.log", cwd=str(run_dir)
            )
            outcome = console.run(timeout, stream)
            return self._result(outcome, run_dir, artifacts_dir)
        finally:
            if own_run_dir:
                shutil.rmtree(run_dir, ignore_errors=True)

    def _result(
        self, outcome: ConsoleOutcome, run_dir: Path, artifacts_dir: Path | None
    ) -> BoardResult:
        console_log = run_dir / "console.log"
        dmesg_log: Path | None = run_dir / "dmesg.txt"
        if dmesg_log is not None and not dmesg_log.exists():
            dmesg_log = None
        log_text = console_log.read_text(errors="replace")
        if dmesg_log is not None:
            log_text += "\n" + dmesg_log.read_text(errors="replace")
        if artifacts_dir is not None:
            console_log, dmesg_log = self._keep_artifacts(artifacts_dir, console_log, dmesg_log)
        exit_code = outcome.exit_code
        return BoardResult(
            board=self.name,
            kernel=self.kernel_description(),
            exit_code=BOARD_FAILED_EXIT_CODE if exit_code is None else exit_code,
            boot_seconds=outcome.boot_seconds,
            total_seconds=outcome.total_seconds,
            timed_out=outcome.timed_out,
            console_log=console_log,
            dmesg_log=dmesg_log,
            kernel_events=scan_kernel_log(log_text),
        )

    def _keep_artifacts(
        self, artifacts_dir: Path, console_log: Path, dmesg_log: Path | None
    ) -> tuple[Path, Path | None]:
        artifacts_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        kept_console = artifacts_dir / f"{self.name}-{stamp}-console.log"
        shutil.copyfile(console_log, kept_console)
        kept_dmesg = None
        if dmesg_log is not None:
            kept_dmesg = artifacts_dir / f"{self.name}-{stamp}-dmesg.txt"
            shutil.copyfile(dmesg_log, kept_dmesg)
        return kept_console, kept_dmesg
