"""The state of one `pytest --hwcrypto` session, kept in `config.stash`.

Settings are resolved once (see settings.py), the board profile loaded once, and the
results recorder collects measurements, findings and verdicts for --hwcrypto-json.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.profile import BoardProfile, load_profile
from pytest_hwcrypto.report.results import Results, ResultsError, read_json_object
from pytest_hwcrypto.settings import SETTINGS, Resolved, SettingError, resolve, resolve_all

# Set by the guest script of a virtual board: a session inside a board never boots another.
INSIDE_BOARD_ENV = "HWCRYPTO_BOARD_RUN_DIR"


@dataclass
class HwcryptoSession:
    settings: dict[str, Resolved]
    profile: BoardProfile | None
    enabled: bool
    baseline: Results | None = None
    cache: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        return self.settings[name].value


def inside_board(environ: Mapping[str, str] = os.environ) -> bool:
    return INSIDE_BOARD_ENV in environ


def build_session(
    *,
    enabled: bool,
    cli_values: Mapping[str, Any],
    environ: Mapping[str, str],
    ini_values: Mapping[str, str | None],
) -> HwcryptoSession:
    """Resolve every setting; the board profile is loaded first because it feeds the rest."""
    board_setting = next(s for s in SETTINGS if s.name == "board")
    board = resolve(
        board_setting,
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
    baseline = load_baseline(settings["baseline"]) if enabled else None
    return HwcryptoSession(settings=settings, profile=profile, enabled=enabled, baseline=baseline)


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
