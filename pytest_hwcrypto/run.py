# SPDX-License-Identifier: MIT
"""The state of one `pytest --hwcrypto` run, kept in `config.stash` under RUN_KEY.

"Run" and not "session": pytest's Session, an AF_ALG socket session and a board's inner
pytest session are other things. Settings are resolved once (settings.py) into typed
Options, the board profile and baseline are loaded once, and what the kernel shows (facts,
/proc/crypto) is read once, on first use, into the fields below (fixtures.py fills them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_hwcrypto import ledger as journal
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.model.results import Results, ResultsError, read_json_object
from pytest_hwcrypto.profile import BoardProfile, load_profile
from pytest_hwcrypto.settings import (
    SETTINGS_BY_NAME,
    Options,
    Resolved,
    SettingError,
    resolve,
    resolve_all,
)

if TYPE_CHECKING:
    from pytest_hwcrypto.kernel.afalg_reach import AfalgReach
    from pytest_hwcrypto.kernel.differential import RunSeed
    from pytest_hwcrypto.kernel.facts import KernelFacts
    from pytest_hwcrypto.kernel.inventory import InventoryEntry
    from pytest_hwcrypto.report.recorder import ResultsRecorder
    from pytest_hwcrypto.target.session import TargetSession

# Set by the guest script of a virtual board: a session inside a board never boots another.
INSIDE_BOARD_ENV = "HWCRYPTO_BOARD_RUN_DIR"
# Set by the QEMU board's guest script when it was asked to load cryptodev-linux: how the
# insmod went, so a session that finds no /dev/crypto can say why.
CRYPTODEV_STATE_ENV = "HWCRYPTO_BOARD_CRYPTODEV"
# Set by the guest script: which board this is (a BoardKind word).
BOARD_KIND_ENV = "HWCRYPTO_BOARD_KIND"
# Set by the outer session for the inner one: {board path: host path} of the result files
# it copies out, so the inner session's summary names the files the caller will find.
HOST_PATHS_ENV = "HWCRYPTO_BOARD_HOST_PATHS"
# Set by the outer session for the inner one when its own output is not a terminal (a CI
# log): the board's console is a terminal, but what the inner session prints ends up in
# that log, which has no width (report/summary.py then wraps and leaves out nothing).
NO_TERMINAL_ENV = "HWCRYPTO_BOARD_OUTPUT_NOT_A_TERMINAL"
# Set likewise when asked to load the test-only drivers (pytest_hwcrypto/kmod): how the insmod went,
# and where the module is, so a test can reload it with other load-time parameters.
TEST_DRIVERS_STATE_ENV = "HWCRYPTO_BOARD_TEST_DRIVERS"
TEST_DRIVERS_MODULE_ENV = "HWCRYPTO_BOARD_TEST_DRIVERS_MODULE"


@dataclass
class HwcryptoRun:
    options: Options
    # Where each option's value came from ("command line", "environment HWCRYPTO_X", ...).
    sources: dict[str, str]
    profile: BoardProfile | None
    enabled: bool
    baseline: Results | None = None
    # Read once per run, on first use.
    kernel_facts: KernelFacts | None = None
    inventory: list[InventoryEntry] | None = None
    # Whether AF_ALG reaches the asynchronous drivers (kernel/afalg_reach.py), asked once.
    afalg_reach: AfalgReach | None = None
    recorder: ResultsRecorder | None = None
    seed: RunSeed | None = None
    # Drivers the correctness suite found at collection time (its own Target type).
    correctness_targets: list[Any] | None = None
    # This run's journal of system changes (created on the first change).
    ledger: Ledger | None = None
    # What the start-of-run sweep undid of an earlier, killed run.
    swept: list[str] = field(default_factory=list)
    # The board a host-driven run (--hwcrypto-target) drives, once connected.
    target: TargetSession | None = None

    @property
    def settings(self) -> dict[str, Resolved]:
        """Each option's value with its source, as the board runner passes them on."""
        return {
            name: Resolved(getattr(self.options, name), source)
            for name, source in self.sources.items()
        }


RUN_KEY = pytest.StashKey[HwcryptoRun]()


def run_of(config: pytest.Config) -> HwcryptoRun:
    """This pytest run's hwcrypto state (the plugin puts it in the stash at startup)."""
    return config.stash[RUN_KEY]


def inside_board(environ: Mapping[str, str] = os.environ) -> bool:
    return INSIDE_BOARD_ENV in environ


LAVA_HELPER = "lava-test-case"


def lava_on(
    configured: bool | None,
    environ: Mapping[str, str] = os.environ,
    which: Callable[[str], str | None] = shutil.which,
) -> bool:
    """--hwcrypto-lava as given, else on where LAVA runs the session: its helper is on PATH
    or its variables are set. Inside a board the outer session decides (and passes it on)."""
    if configured is not None:
        return configured
    if inside_board(environ):
        return False
    return which(LAVA_HELPER) is not None or any(name.startswith("LAVA_") for name in environ)


def host_path(path: str, environ: Mapping[str, str] = os.environ) -> str:
    """Where a result file the session writes ends up for the caller (inside a board, the
    host path the outer session copies it to)."""
    absolute = str(Path(path).resolve())
    try:
        mapping = json.loads(environ.get(HOST_PATHS_ENV, "{}"))
    except ValueError:
        return absolute
    found = mapping.get(absolute) if isinstance(mapping, dict) else None
    return str(found) if found else absolute


def build_run(
    *,
    enabled: bool,
    cli_values: Mapping[str, Any],
    environ: Mapping[str, str],
    ini_values: Mapping[str, str | None],
) -> HwcryptoRun:
    """Resolve every setting; the board profile is loaded first because it feeds the rest."""
    board = resolve(
        SETTINGS_BY_NAME["board"],
        cli_value=cli_values.get("board"),
        environ=environ,
        ini_value=ini_values.get("board"),
        profile_settings={},
    )
    profile = load_profile(board.value) if board.value else None
    settings = resolve_all(
        cli_values=cli_values,
        environ=environ,
        ini_values=ini_values,
        profile_settings=profile.settings if profile else {},
        profile_name=str(profile.path) if profile else "board profile",
    )
    if inside_board(environ):
        settings["vm"] = Resolved(None, "inside a virtual board")
    elif enabled and settings["history_gate"].value and not settings["history"].value:
        # a gate with no history to judge would pass every session and say nothing
        raise SettingError(
            f"--hwcrypto-history-gate ({settings['history_gate'].source}): needs "
            "--hwcrypto-history=DB, the history it judges the session's run against"
        )
    baseline = load_baseline(settings["baseline"]) if enabled else None
    return HwcryptoRun(
        options=Options.from_resolved(settings),
        sources={name: resolved.source for name, resolved in settings.items()},
        profile=profile,
        enabled=enabled,
        baseline=baseline,
    )


def load_baseline(setting: Resolved) -> Results | None:
    """The --hwcrypto-baseline results, read at startup so a bad file costs no board boot."""
    if not setting.value:
        return None
    # Imported here: only a session comparing against a baseline needs the adapters.
    from pytest_hwcrypto.report.benchmark_import import results_from_document

    where = f"--hwcrypto-baseline ({setting.source})"
    path = resolve_baseline_path(str(setting.value), where)
    try:
        return results_from_document(read_json_object(path), path)
    except ResultsError as error:
        raise SettingError(f"{where}: {error}") from None


def resolve_baseline_path(value: str, where: str, storage: Path = Path(".benchmarks")) -> str:
    """A path, or a pytest-benchmark storage id as ``--benchmark-compare`` takes it.

    ``0001`` names the saved run ``.benchmarks/<machine>/0001_*.json``; it must name
    exactly one file.
    """
    if Path(value).exists() or not value.isdigit():
        return value
    found = sorted(storage.glob(f"*/{int(value):04d}_*.json"))
    if len(found) != 1:
        listed = ", ".join(str(path) for path in found) or "none"
        raise SettingError(
            f"{where}: {value!r} is not a file, and as a pytest-benchmark run id it matches "
            f"{len(found)} saved runs under {storage}/ ({listed})"
        )
    return str(found[0])


def shipped_suites_dir() -> Path:
    """Where the installed (or editable) pytest_hwcrypto.suites package lives."""
    try:
        spec = importlib.util.find_spec("pytest_hwcrypto.suites")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    # A source checkout used without installing: the suites sit beside the package.
    return (Path(__file__).resolve().parent.parent / "suites").resolve()


def undo_handlers() -> dict[str, journal.Undo]:
    """How to undo each kind of change a run records (ledger.py)."""
    from pytest_hwcrypto.block.volume import undo_handlers as block_undo_handlers
    from pytest_hwcrypto.container.lxc import undo_handlers as container_undo_handlers
    from pytest_hwcrypto.kernel.hwrng import LEDGER_KIND as HWRNG_KIND
    from pytest_hwcrypto.kernel.hwrng import restore_current
    from pytest_hwcrypto.kernel.rerank import LEDGER_KIND, restore_priority

    return {
        LEDGER_KIND: restore_priority,
        HWRNG_KIND: restore_current,
        **block_undo_handlers(),
        **container_undo_handlers(),
    }


def sweep_leftovers() -> list[str]:
    """Undo what killed runs left recorded (at run start, and `hwcrypto sweep`)."""
    return journal.sweep(undo_handlers())
