"""pytest-hwcrypto's pytest plugin: options, ini keys, markers, stash and fixture modules.

Wiring only. Without --hwcrypto (or --hwcrypto-vm) the plugin adds its options and
markers and does nothing else: no kernel is read, nothing is collected, and the fixture and
board modules are not even imported, so other projects' test runs pay nothing for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.profile import ProfileError
from pytest_hwcrypto.session import HwcryptoSession, build_session, shipped_suites_dir
from pytest_hwcrypto.settings import SETTINGS, SUITES, SettingError

SESSION_KEY = pytest.StashKey[HwcryptoSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hwcrypto", "kernel hardware crypto (pytest-hwcrypto)")
    group.addoption(
        "--hwcrypto",
        action="store_true",
        default=False,
        help="run the shipped hardware-crypto suites against this kernel",
    )
    for setting in SETTINGS:
        help_text = f"{setting.help} (env {setting.env}, ini {setting.ini})"
        group.addoption(
            setting.option, dest=setting.dest, default=None, metavar=setting.metavar, help=help_text
        )
        parser.addini(setting.ini, help=setting.help, default=None)


def pytest_configure(config: pytest.Config) -> None:
    for suite in SUITES:
        config.addinivalue_line("markers", f"hwcrypto_{suite}: part of the {suite} suite")
    if SESSION_KEY not in config.stash:
        config.stash[SESSION_KEY] = _session_or_usage_error(config)
    if config.stash[SESSION_KEY].enabled:
        from pytest_hwcrypto import fixtures

        config.pluginmanager.register(fixtures, "hwcrypto-fixtures")
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            # No paths on the command line: run the shipped suites, wherever we are.
            config.args = [str(shipped_suites_dir())]


def _session_or_usage_error(config: pytest.Config) -> HwcryptoSession:
    try:
        return build_session(
            enabled=bool(config.getoption("hwcrypto")),
            cli_values={s.name: config.getoption(s.dest) for s in SETTINGS},
            environ=os.environ,
            ini_values={s.name: config.getini(s.ini) for s in SETTINGS},
        )
    except (SettingError, ProfileError) as error:
        raise pytest.UsageError(str(error)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """--hwcrypto-vm: this session runs inside a virtual board instead of here."""
    session = config.stash[SESSION_KEY] = _session_or_usage_error(config)
    kind = session.value("vm")
    if kind is None:
        return None
    from pytest_hwcrypto.boards import runner

    return runner.run_pytest_session_in_board(
        kind,
        session,
        list(config.invocation_params.args),
        Path(config.invocation_params.dir),
        sys.stdout,
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None and not session.enabled and collection_path == shipped_suites_dir():
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = config.stash[SESSION_KEY]
    if not session.enabled:
        return
    chosen = set(session.value("suite"))
    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        suites = {
            m.name[len("hwcrypto_") :]
            for m in item.iter_markers()
            if m.name.startswith("hwcrypto_")
        }
        (deselected if suites and not suites & chosen else selected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    session = config.stash.get(SESSION_KEY, None)
    if session is None or not session.enabled:
        return None
    from pytest_hwcrypto import fixtures

    return fixtures.report_header(session)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(SESSION_KEY, None)
    if state is not None and state.enabled:
        from pytest_hwcrypto import fixtures

        fixtures.write_results(session.config, state)
