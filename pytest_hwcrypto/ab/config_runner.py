# SPDX-License-Identifier: MIT
"""One kernel, two configurations, no reboot: `hwcrypto ab --b-blacklist M` / `--b-prefer D`.

The board boots once; inside it `python -m pytest_hwcrypto.ab.config_runner` runs the same
pair loop as two kernels get (ab/engine.py), switching the running kernel between A (as
booted) and B (modules unloaded as if blacklisted -- the ThinkPad case, aes-xts without
AES-NI --, or a driver made the winner of its name through crypto_user) before each slice,
and measuring the slice in-process. The document lives in the board's run directory and is
saved after every pair; the host copies it out when the board ends, also when it ended
early, so `--resume` continues it.

B's configuration is undone after every B slice and at the end (modules loaded again, the
priority restored by kernel/rerank.py, which also records it in the ledger so
`hwcrypto sweep` restores it after a kill -9).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_hwcrypto.ab.document import AbDocument, load_document, save_document
from pytest_hwcrypto.ab.engine import AbError, SliceOutcome, run_ab
from pytest_hwcrypto.ab.slice import measure_slice
from pytest_hwcrypto.boards.base import Board, new_run_dir, passed_environment
from pytest_hwcrypto.boards.helpers import path_with_environment
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.rerank import Reranker, RerankError
from pytest_hwcrypto.ledger import Ledger

DOCUMENT_NAME = "ab.json"
EXIT_SIDE_FAILED = 7


class InKernelConfigs:
    """SliceRunner inside the booted board: configure the side, then measure in-process."""

    def __init__(self, document: AbDocument) -> None:
        self.document = document
        config = document.sides["B"].config
        self.blacklist = [str(m) for m in config.get("blacklist", [])]
        self.prefer = config.get("prefer")

    def describe(self, side: str) -> str:
        config = self.document.sides[side].config
        return f"configuration {side} ({_describe_config(config)})"

    def run_slice(self, side: str, pair_index: int) -> SliceOutcome:
        try:
            with self._configured(side):
                knobs = dict(self.document.sides[side].config.get("set", {}))
                results = measure_slice(self.document.slice, settings=knobs)
        except (OSError, RerankError, subprocess.CalledProcessError, ValueError) as error:
            return SliceOutcome(None, None, _one_line(error))
        if not results["measurements"]:
            failures = "; ".join(results.get("open_failures", [])) or "no target"
            return SliceOutcome(None, None, f"nothing measured ({failures})")
        return SliceOutcome(results, None)

    @contextlib.contextmanager
    def _configured(self, side: str) -> Iterator[None]:
        if side == "A":
            yield
            return
        knobs = dict(self.document.sides["B"].config.get("set", {}))
        before = {path: Path(path).read_text().strip() for path in knobs}
        try:
            with contextlib.ExitStack() as stack:
                if self.blacklist:
                    stack.enter_context(blacklisted(self.blacklist))
                if self.prefer:
                    reranker = Reranker(Ledger(), _instantiate)
                    stack.enter_context(reranker.prefer(str(self.prefer)))
                yield
        finally:
            for path, value in before.items():
                Path(path).write_text(value)


@contextlib.contextmanager
def blacklisted(modules: Sequence[str]) -> Iterator[None]:
    """The modules unloaded and blacklisted as modprobe.d would have them, then back.

    Unloading alone is not a blacklist: the next bind by name makes the kernel ask
    modprobe for the algorithm's alias (crypto-xts(aes)) and the module comes straight
    back (seen on the QEMU board: aesni_intel served xts(aes) again in the slice after
    `modprobe -r`). modprobe reads /etc/modprobe.d, which the board sees read-only from the
    host, so a copy with `blacklist MODULE` lines is bind-mounted over it for the slice.
    """
    with tempfile.TemporaryDirectory(prefix="hwcrypto-ab-modprobe.") as staging:
        confs = Path("/etc/modprobe.d")
        if confs.is_dir():
            for conf in confs.glob("*.conf"):
                shutil.copy(conf, staging)
        Path(staging, "hwcrypto-ab-blacklist.conf").write_text(
            "".join(f"blacklist {module}\n" for module in modules)
        )
        subprocess.run(["mount", "--bind", staging, str(confs)], check=True, timeout=30)
        try:
            for module in modules:
                _modprobe("-r", module)
            yield
        finally:
            subprocess.run(["umount", str(confs)], check=False, timeout=30)
            for module in reversed(modules):
                _modprobe(module)


def _instantiate(driver: str) -> None:
    afalg.instantiate_any(driver)


def _modprobe(*args: str) -> None:
    result = subprocess.run(["modprobe", *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise OSError(f"modprobe {' '.join(args)}: {result.stderr.strip() or result.returncode}")


def _describe_config(config: Mapping[str, Any]) -> str:
    if not config:
        return "as booted"
    words = []
    if config.get("blacklist"):
        words.append("without " + ", ".join(str(m) for m in config["blacklist"]))
    if config.get("prefer"):
        words.append(f"{config['prefer']} preferred")
    return "; ".join(words)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class ConfigSlices:
    """Host side: boot once and let the board run the whole pair loop (see module doc)."""

    def __init__(self, board: Board, document: AbDocument, timeout: float, stream: TextIO) -> None:
        self.board = board
        self.document = document
        self.timeout = timeout
        self.stream = stream

    def run_all(self, path: Path, budget_seconds: float | None) -> AbDocument:
        run_dir = new_run_dir()
        inside = run_dir / DOCUMENT_NAME
        try:
            save_document(self.document, inside)
            argv = [sys.executable, "-m", "pytest_hwcrypto.ab.config_runner", str(inside)]
            if budget_seconds is not None:
                argv += ["--budget", repr(budget_seconds)]
            env = passed_environment(os.environ)
            env["PATH"] = path_with_environment()
            result = self.board.run(
                shlex.join(argv),
                cwd=Path.cwd(),
                env=env,
                timeout=self.timeout,
                stream=self.stream,
                run_dir=run_dir,
            )
            document = load_document(inside)
            save_document(document, path)
            if result.exit_code != 0 or result.timed_out or result.boot_seconds is None:
                raise AbError(
                    f"kernel {self.board.kernel_description()}: the pair loop inside the board "
                    f"ended with exit {result.exit_code}"
                    + (" (timed out)" if result.timed_out else "")
                    + f"; console log {result.console_log}"
                )
            return document
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_hwcrypto.ab.config_runner")
    parser.add_argument("document")
    parser.add_argument("--budget", type=float, default=None)
    args = parser.parse_args(argv)
    path = Path(args.document)
    document = load_document(path)
    try:
        run_ab(document, InKernelConfigs(document), path, budget_seconds=args.budget)
    except AbError as error:
        sys.stderr.write(f"hwcrypto ab: {error}\n")
        return EXIT_SIDE_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
