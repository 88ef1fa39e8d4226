# SPDX-License-Identifier: MIT
"""What a `pytest --hwcrypto` run says outside its tests, wired to pytest's hooks by plugin.py.

The report header, the results file and HTML report at session end, the terminal summary,
JUnit properties of each test case, LAVA test cases, and the merge of pytest-xdist workers'
results. Each function reads the run state through fixtures.py's accessors and hands the
wording to report/; fixtures.py keeps the fixtures themselves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_hwcrypto import fixtures, target_run
from pytest_hwcrypto.fixtures import kernel_facts, recorder
from pytest_hwcrypto.kernel.classify import is_offload
from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME as TEST_DRIVERS_MODULE_NAME
from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.report.recorder import WORKER_OUTPUT_KEY
from pytest_hwcrypto.run import (
    BOARD_KIND_ENV,
    LAVA_HELPER,
    NO_TERMINAL_ENV,
    HwcryptoRun,
    host_path,
    inside_board,
)
from pytest_hwcrypto.vocabulary import Suite

if TYPE_CHECKING:
    from pytest_hwcrypto.report.lava import Outcomes as LavaOutcomes


def seed_json(run: HwcryptoRun) -> dict[str, Any] | None:
    """The run's seed of random cases: the one a suite used, else the configured one."""
    if run.seed is not None:
        return {"value": run.seed.value, "source": run.seed.source}
    if run.options.seed is not None:
        return {"value": run.options.seed, "source": "option --hwcrypto-seed"}
    return None


def report_header(run: HwcryptoRun) -> list[str]:
    facts = kernel_facts(run)
    profile = run.profile
    lines = [
        f"hwcrypto: kernel {facts.release} ({facts.machine}) — results are for this kernel",
        f"hwcrypto: suites {','.join(run.options.suite)}; "
        f"board profile {profile.path if profile else 'none'}",
    ]
    if run.options.algorithm:
        lines.append(
            f"hwcrypto: only algorithms {', '.join(run.options.algorithm)} "
            f"({run.sources.get('algorithm', 'default')}); the other algorithms are not tested"
        )
    session = target_run.target_session(run)
    if session is not None:
        lines.insert(0, session.header_line())
    elif not fixtures.PROC_CRYPTO.exists():  # fixtures' name: a board test patches it
        lines.append("hwcrypto: /proc/crypto is missing: this kernel has no crypto API procfs")
    lines += [f"hwcrypto: swept a killed run's leftovers: {line}" for line in run.swept]
    if inside_board() or run.options.vm is None:  # the outer session of a board asks nothing
        engines = {e.driver for e in fixtures.inventory(run) if is_offload(e.driver_class)}
        reach = fixtures.afalg_reach(run)
        masked = reach.header_line(first=engines)
        lines += [masked] if masked else []
        lines.append(reach.reach_line())  # what this kernel's AF_ALG reaches, on every kernel
    if run.options.test_drivers and not inside_board():
        lines.append(TEST_DRIVERS_ON_REAL_KERNEL)
    return lines


TEST_DRIVERS_ON_REAL_KERNEL = (
    "hwcrypto: WARNING: --hwcrypto-test-drivers on a real kernel: tests will make the "
    f"{TEST_DRIVERS_MODULE_NAME} drivers you loaded wrong and slow on purpose; anything on "
    "this machine that picks them (by priority or re-ranking) gets wrong bytes meanwhile"
)


def write_results(config: pytest.Config, run: HwcryptoRun) -> None:
    rec = recorder(run)
    rec.environment["seed"] = seed_json(run) or rec.environment.get("seed")
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller writes the file
        workeroutput[WORKER_OUTPUT_KEY] = rec.to_json()
        return
    if run.options.json:
        rec.write(Path(run.options.json))
    if run.options.html:
        write_html_report(rec.results(), Path(run.options.html))


def write_html_report(results: Results, path: Path) -> None:
    """The HTML report of this session; a path that cannot be written is a warning at the
    end of the run rather than an internal error that would hide the test outcome."""
    from pytest_hwcrypto.report.document import ReportError, write_session_report

    try:
        write_session_report(results, path)
    except ReportError as error:
        warnings.warn(pytest.PytestWarning(f"--hwcrypto-html: {error}"), stacklevel=1)


def terminal_summary(
    reporter: pytest.TerminalReporter, config: pytest.Config, run: HwcryptoRun
) -> None:
    """The end-of-run summary (report/summary.py), once: by the xdist controller, and by
    the session inside a board (the outer session only relays its output)."""
    if hasattr(config, "workerinput"):
        return
    from pytest_hwcrypto.report.summary import TITLE, Context, summary_lines

    context = Context(
        verbosity=config.getoption("verbose"),
        width=summary_width(config),
        json_path=host_path(run.options.json) if run.options.json else None,
        board=os.environ.get(BOARD_KIND_ENV, "host"),
        profile=str(run.profile.path) if run.profile else None,
    )
    lines = summary_lines(recorder(run).results(), context)
    if context.verbosity > -2:
        reporter.write_sep("=", TITLE)
    for line in lines:
        reporter.write_line(line.text, **line.markup)


def summary_width(config: pytest.Config) -> int | None:
    """The terminal's width, or None when the output is no terminal (a CI log through a
    pipe, or a board session whose caller writes to one): nothing is then wrapped or left
    out. COLUMNS set by hand (or by the outer session for a board) counts as a terminal."""
    writer = config.get_terminal_writer()
    if os.environ.get("COLUMNS", "").strip().isdigit():
        return writer.fullwidth
    if os.environ.get(NO_TERMINAL_ENV):
        return None
    stream = getattr(writer, "_file", sys.stdout)  # pytest keeps the stream it writes to here
    isatty = getattr(stream, "isatty", None)
    return writer.fullwidth if isatty is not None and isatty() else None


# How many measurements this process had recorded when a test started (its JUnit properties
# are about the ones recorded while it ran, or about its `algorithm` parameter).
MEASURED_BEFORE = pytest.StashKey[int]()


def note_test_start(item: pytest.Item, run: HwcryptoRun) -> None:
    item.stash[MEASURED_BEFORE] = len(recorder(run).measurements)


def add_case_properties(item: pytest.Item, run: HwcryptoRun) -> None:
    """Source, driver, MiB/s and ratio of what the test measured, as JUnit properties."""
    from pytest_hwcrypto.report.junit_properties import case_properties, measurements_of_test

    rec = recorder(run)
    suites = {mark.name.removeprefix("hwcrypto_") for mark in item.iter_markers()}
    callspec = getattr(item, "callspec", None)
    algorithm = callspec.params.get("algorithm") if callspec is not None else None
    about = measurements_of_test(
        rec.measurements,
        item.stash.get(MEASURED_BEFORE, len(rec.measurements)),
        suites,
        algorithm if isinstance(algorithm, str) else None,
    )
    item.user_properties.extend(case_properties(about, rec.results()))


def lava_outcome(outcomes: LavaOutcomes, report: pytest.TestReport) -> None:
    """Take in one phase's report of a test (controller and single process only)."""
    from pytest_hwcrypto.report.lava import case_set_of

    module = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    test_set = case_set_of(report.keywords, module, Suite.values())
    outcomes.record(report.nodeid, report.when or "", report.outcome, test_set)


def report_to_lava(
    reporter: pytest.TerminalReporter,
    config: pytest.Config,
    run: HwcryptoRun,
    outcomes: LavaOutcomes,
) -> None:
    """Every test and measurement as a LAVA test case, one test set per suite: through
    LAVA's helpers where they are (never inside a board: the host's console is LAVA's),
    else as the signal lines LAVA reads on the console."""
    if hasattr(config, "workerinput"):
        return
    from pytest_hwcrypto.report.lava import case_sets

    sets = case_sets(outcomes, recorder(run).results())
    helper = shutil.which(LAVA_HELPER) if not inside_board() else None
    if helper is None:
        for test_set in sets:
            for line in test_set.signals():
                reporter.write_line(line)
        return
    sys.stdout.flush()
    for test_set in sets:
        for argv in test_set.helper_argvs():
            subprocess.run(argv, check=False)


def write_kcidb(config: pytest.Config, run: HwcryptoRun, outcomes: LavaOutcomes) -> None:
    """--hwcrypto-kcidb: the run as KCIDB I/O data (lab/kcidb.py), by the controller; a
    path that cannot be written is a warning, as for the HTML report."""
    if hasattr(config, "workerinput") or not run.options.kcidb:
        return
    import datetime
    import json

    from pytest_hwcrypto.block.naming import run_id
    from pytest_hwcrypto.lab.kcidb import kcidb_data
    from pytest_hwcrypto.report.lava import case_sets

    results = recorder(run).results()
    now = datetime.datetime.now(datetime.timezone.utc)
    data = kcidb_data(
        results,
        case_sets(outcomes, results),
        origin=run.options.kcidb_origin,
        run=f"{now:%Y%m%dT%H%M%S}-{run_id()}",
        start_time=now.isoformat(timespec="seconds"),
    )
    path = Path(run.options.kcidb)
    try:
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as error:
        warnings.warn(pytest.PytestWarning(f"--hwcrypto-kcidb {path}: {error}"), stacklevel=1)


def add_to_history(session: pytest.Session, run: HwcryptoRun) -> list[str]:
    """--hwcrypto-history: add this session's run to the history database, by the
    controller (inside a board nobody: the host session adds the board's run,
    add_board_run_to_history), and with --hwcrypto-history-gate judge its board's history:
    a new drop fails the session. The lines saying what happened, for the summary."""
    config = session.config
    if hasattr(config, "workerinput") or inside_board() or not run.options.history:
        return []
    lines, failed = _add_and_judge(recorder(run).results(), "this session", run)
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return lines


def board_history_args(run: HwcryptoRun, args: list[str], scratch: Path) -> tuple[list[str], Path]:
    """--hwcrypto-history with --hwcrypto-vm: the board session's arguments, with a results
    file to bring the run back in when the caller named none, and where that file lands."""
    if run.options.json:
        return args, Path(run.options.json)
    path = scratch / "history-results.json"
    return [*args, f"--hwcrypto-json={path}"], path


def add_board_run_to_history(run: HwcryptoRun, results_path: Path, stream: Any) -> bool:
    """After a board session: its results file into the history database, and the gate
    judged (--hwcrypto-history-gate). True when the gate fails the session."""
    from pytest_hwcrypto.model.results import ResultsError, load_results

    try:
        results = load_results(results_path)
    except ResultsError as error:
        stream.write(f"hwcrypto: --hwcrypto-history: the board's run has no results: {error}\n")
        return bool(run.options.history_gate)
    lines, failed = _add_and_judge(results, str(results_path), run)
    stream.write("".join(line + "\n" for line in lines))
    return failed


def _add_and_judge(results: Results, name: str, run: HwcryptoRun) -> tuple[list[str], bool]:
    """The run added, and the gate's lines and verdict when it is on. A gate that cannot
    judge (run not added, no Otava) fails: it was asked to keep bad kernels out."""
    database = str(run.options.history)
    line, board = history_line(results, name, database)
    if not run.options.history_gate:
        return [line], False
    if board is None:
        return [line, "hwcrypto: history gate: FAILED, the run is not in the history"], True
    gate_line, failed = judge_gate(database, board, run.options.max_drop)
    return [line, *gate_line], failed


def judge_gate(database: str, board: str, max_drop: float) -> tuple[list[str], bool]:
    """--hwcrypto-history-gate: the board's history judged as `hwcrypto history detect`
    judges it (history/judge.py), kernels in release order."""
    from pytest_hwcrypto.history.judge import gate_verdict, judge_history
    from pytest_hwcrypto.history.store import Store, StoreError
    from pytest_hwcrypto.usage import UsageError

    try:
        with Store(database, create=False) as store:
            series = store.series(board, samples=False)
        verdict = gate_verdict(judge_history(series, None, max_drop), board, max_drop)
    except (StoreError, UsageError) as error:
        return [f"hwcrypto: history gate: FAILED, not judged: {error}"], True
    return list(verdict.lines), verdict.failed


def history_line(results: Results, name: str, database: str) -> tuple[str, str | None]:
    """Add a run's results to `database`; the one line saying what happened (an error
    included: the tests' outcome stays what decides the session), and the run's board
    (None: not added)."""
    import datetime

    from pytest_hwcrypto.history.ingest import IngestError, from_results
    from pytest_hwcrypto.history.store import Store, StoreError, redact

    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    try:
        ingested = from_results(results, name, board=None, received=now)
        with Store(database) as store:
            added = store.add(ingested)
    except (IngestError, StoreError) as error:
        return f"hwcrypto: --hwcrypto-history: run not added: {error}", None
    run = ingested.run
    return (
        f"hwcrypto: run {run.run_id[:12]} (board {run.board}, kernel {run.kernel.label()}, "
        f"{len(ingested.series)} series) "
        + ("added to " if added else "already in ")
        + redact(database)
    ), run.board


def merge_worker_results(run: HwcryptoRun, node: Any) -> None:
    """xdist controller: take in what a finished worker recorded."""
    output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if output:
        recorder(run).merge(output)
