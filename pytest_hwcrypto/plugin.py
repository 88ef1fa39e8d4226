# SPDX-License-Identifier: MIT
"""pytest-hwcrypto's pytest plugin: options, ini keys, markers, stash, and what to register.

Wiring only. Without --hwcrypto (or --hwcrypto-vm) the plugin adds its options and
markers and does nothing else: no kernel is read, nothing is collected, and the fixture and
board modules are not even imported, so other projects' test runs pay nothing for it. With
--hwcrypto, the run's hooks live in one registered object (HwcryptoPlugin), as
pytest-xdist keeps its controller's hooks in a plugin object.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto import xdist_exclusive as exclusive
from pytest_hwcrypto.profile import ProfileError
from pytest_hwcrypto.run import (
    RUN_KEY,
    HwcryptoRun,
    build_run,
    lava_on,
    shipped_suites_dir,
    sweep_leftovers,
)
from pytest_hwcrypto.settings import SETTINGS, SettingError
from pytest_hwcrypto.vocabulary import Suite

PLUGIN_NAME = "hwcrypto-run"
FIXTURES_NAME = "hwcrypto-fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hwcrypto", "kernel hardware crypto (pytest-hwcrypto)")
    group.addoption(
        "--hwcrypto",
        action="store_true",
        default=False,
        help="run the shipped hardware-crypto suites against this kernel",
    )
    for setting in SETTINGS:
        # argparse %-formats help texts: a literal "10%" must reach it as "10%%".
        help_text = f"{setting.help} (env {setting.env}, ini {setting.ini})".replace("%", "%%")
        if setting.flag:  # a switch: given means "true", the resolver parses that like text
            group.addoption(
                setting.option,
                dest=setting.dest,
                default=None,
                action="store_const",
                const="true",
                help=help_text,
            )
        else:
            group.addoption(
                setting.option,
                dest=setting.dest,
                default=None,
                metavar=setting.metavar,
                help=help_text,
            )
        parser.addini(setting.ini, help=setting.help, default=None)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """--hwcrypto-vm: this session runs inside a virtual board instead of here."""
    run = config.stash[RUN_KEY] = _run_or_usage_error(config)
    if run.options.vm is None:
        return None
    from pytest_hwcrypto.boards import runner

    args = list(config.invocation_params.args)
    if not run.options.history:
        return runner.run_pytest_session_in_board(
            run.options.vm, run, args, Path(config.invocation_params.dir), sys.stdout
        )
    import tempfile

    from pytest_hwcrypto import run_output

    with tempfile.TemporaryDirectory(prefix="hwcrypto-history-") as scratch:
        args, results_path = run_output.board_history_args(run, args, Path(scratch))
        code = runner.run_pytest_session_in_board(
            run.options.vm, run, args, Path(config.invocation_params.dir), sys.stdout
        )
        if run_output.add_board_run_to_history(run, results_path, sys.stdout) and code == 0:
            code = pytest.ExitCode.TESTS_FAILED  # --hwcrypto-history-gate: a new drop
    return code


def pytest_configure(config: pytest.Config) -> None:
    for suite in Suite:
        config.addinivalue_line("markers", f"{suite.marker}: part of the {suite} suite")
    if RUN_KEY not in config.stash:  # pytester and other in-process callers
        config.stash[RUN_KEY] = _run_or_usage_error(config)
    run = config.stash[RUN_KEY]
    if not run.enabled:
        return
    from pytest_hwcrypto import fixtures, target_run

    if not hasattr(config, "workerinput"):  # once per run: the controller, not each worker
        run.swept = sweep_leftovers()
        # A target that cannot be reached is one line now, before anything is collected.
        target_run.target_session(run)
    config.pluginmanager.register(HwcryptoPlugin(run), PLUGIN_NAME)
    exclusive.take_turns(config)
    config.pluginmanager.register(fixtures, FIXTURES_NAME)
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths on the command line: run the shipped suites, wherever we are.
        config.args = [str(shipped_suites_dir())]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Without --hwcrypto the shipped suites are never collected, even if named."""
    run = config.stash.get(RUN_KEY, None)
    if run is not None and not run.enabled and collection_path == shipped_suites_dir():
        return True
    return None


def _run_or_usage_error(config: pytest.Config) -> HwcryptoRun:
    try:
        return build_run(
            enabled=bool(config.getoption("hwcrypto")),
            cli_values={s.name: config.getoption(s.dest) for s in SETTINGS},
            environ=os.environ,
            ini_values={s.name: config.getini(s.ini) for s in SETTINGS},
        )
    except (SettingError, ProfileError) as error:
        raise pytest.UsageError(str(error)) from None


class HwcryptoPlugin:
    """The hooks of a --hwcrypto run: suite selection, report header, results file."""

    def __init__(self, run: HwcryptoRun) -> None:
        self.run = run
        self.lava = lava_on(run.options.lava)
        # Every test's outcome, for LAVA test cases and KCIDB tests alike.
        self.outcomes = None
        if self.lava or run.options.kcidb:
            from pytest_hwcrypto.report.lava import Outcomes

            self.outcomes = Outcomes()
        self.history_lines: list[str] = []  # --hwcrypto-history: what became of the run

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        chosen = {suite.marker for suite in self.run.options.suite}
        every_suite = {suite.marker for suite in Suite}
        selected: list[pytest.Item] = []
        deselected: list[pytest.Item] = []
        for item in items:
            markers = {mark.name for mark in item.iter_markers()} & every_suite
            (deselected if markers and not markers & chosen else selected).append(item)
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = selected
        from pytest_hwcrypto import target_run

        target_run.skip_suites_off_target(self.run, items)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        with exclusive.measuring_turn(item):
            yield

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        return (
            exclusive.measuring_scheduler(config, log)
            if exclusive.measuring_serialized(config)
            else None
        )

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        from pytest_hwcrypto import run_output

        return run_output.report_header(self.run) + exclusive.measuring_lines(config)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_hwcrypto import run_output

        run_output.write_results(session.config, self.run)
        if self.outcomes is not None and self.run.options.kcidb:
            run_output.write_kcidb(session.config, self.run, self.outcomes)
        self.history_lines = run_output.add_to_history(session, self.run)
        exclusive.remove_lock(session.config)
        from pytest_hwcrypto import target_run

        target_run.disconnect_target(self.run)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        from pytest_hwcrypto import run_output

        run_output.note_test_start(item, self.run)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Before the teardown report, whose properties JUnit writes for the test case."""
        from pytest_hwcrypto import run_output

        run_output.add_case_properties(item, self.run)

    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter, config: pytest.Config
    ) -> None:
        from pytest_hwcrypto import run_output

        run_output.terminal_summary(terminalreporter, config, self.run)
        for line in self.history_lines:
            terminalreporter.write_line(line)
        if self.lava and self.outcomes is not None:
            run_output.report_to_lava(terminalreporter, config, self.run, self.outcomes)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.outcomes is not None:
            from pytest_hwcrypto import run_output

            run_output.lava_outcome(self.outcomes, report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        exclusive.configure_node(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist controller: merge a finished worker's results into ours."""
        from pytest_hwcrypto import run_output

        run_output.merge_worker_results(self.run, node)
