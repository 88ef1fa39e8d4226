# SPDX-License-Identifier: MIT
"""A run's file, read as history (pure): which run it is and its value per series.

Three kinds of file come in, told apart by their own content, never by their name:

* the project's results JSON (`"schema": "pytest-hwcrypto/1"`, model/results.py): one run,
  series keyed exactly as its measurements are;
* KCIDB I/O data (`"version": {"major": 5, ...}` with checkouts, builds, tests): our own
  `--hwcrypto-kcidb` output (lab/kcidb.py) and any other lab's. A file may hold several
  runs: the tests of one build on one board are one run. Our throughput tests
  (`hwcrypto.<suite>.<source>.<algorithm>[.<key bits>].<op>[.n<depth>].<driver>.<size>`)
  become the series they measured, spelled as KCIDB spells names (`cbc_aes`); any other
  test with a `number` is a series of its own path and unit;
* a LAVA job's results (lab/lava_results.py reads them, as `hwcrypto lava results` does):
  the run's own results file when the job log carried it, else the measured test cases.

Each run gets a `run_id`: a digest of its board and its content, so the same run read
twice -- the same file added again, or a session's results and the file it wrote -- is
the same run. Bad input is an IngestError: one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity, Series, SeriesKey
from pytest_hwcrypto.lab import lava_results
from pytest_hwcrypto.model.results import SCHEMA, Results, ResultsError

BYTES_PER_SECOND = "bytes/s"
UNKNOWN_VERSION = "unknown"
KCIDB_MAJOR = 5
_KCIDB_ROOT = "hwcrypto"
_KCIDB_BYTES_UNIT = "B/s"
_DEPTH = re.compile(r"^n(\d+)$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class IngestError(ValueError):
    """A file that cannot become history; the message is one line naming the file."""


@dataclass
class IngestedRun:
    """One run read from a file: who it is, and one point per series."""

    run: RunIdentity
    series: list[Series] = field(default_factory=list)


def kind_of(document: Any) -> str | None:
    """`results`, `kcidb` or `lava` by the document's own shape; None for anything else."""
    if isinstance(document, Mapping):
        if "schema" in document:
            return "results"
        version = document.get("version")
        if isinstance(version, Mapping) and "major" in version:
            return "kcidb"
        if "cases" in document or isinstance(document.get("results"), list):
            return "lava"
        return None
    if isinstance(document, list) and all(
        isinstance(item, Mapping) and "name" in item and "result" in item for item in document
    ):
        return "lava"
    return None


def ingest(document: Any, name: str, *, board: str | None, received: str) -> list[IngestedRun]:
    """The runs of a decoded file. `board` is the board the caller says it is (None: the
    file's own); `received` (ISO 8601 UTC) is the time of a run whose file has none."""
    kind = kind_of(document)
    if kind == "results":
        try:
            results = Results.from_json(document, name)
        except ResultsError as error:
            raise IngestError(str(error)) from None
        return [from_results(results, name, board=board, received=received)]
    if kind == "kcidb":
        return from_kcidb(document, name, board=board, received=received)
    if kind == "lava":
        try:
            job = lava_results.job_from_document(document, name)
        except lava_results.LavaResultsError as error:  # its message names the file
            raise IngestError(str(error)) from None
        return [from_lava_job(job, name, board=board, received=received)]
    raise IngestError(
        f"{name}: not a run this history reads: neither pytest-hwcrypto results "
        f"({SCHEMA!r}), KCIDB I/O data, nor a LAVA job's test cases"
    )


def from_results(results: Results, name: str, *, board: str | None, received: str) -> IngestedRun:
    """A results file (or a session's results) as one run."""
    content = results.to_json()
    kernel = results.kernel
    release = _text(kernel.get("release"))
    if release is None:
        raise IngestError(f"{name}: no kernel identity (the results name no kernel release)")
    identity = KernelIdentity(
        release=release,
        commit=_commit(kernel.get("git_commit")),
        describe=_text(kernel.get("git_describe")),
        config_digest=_text(kernel.get("config_sha256")),
    )
    environment = results.environment
    run_board = _choose_board(name, _results_board(environment), board)
    run = RunIdentity(
        run_id=_digest(run_board, content),
        board=run_board,
        kernel=identity,
        plugin_version=_text(environment.get("plugin_version")) or UNKNOWN_VERSION,
        started=_text(environment.get("started")) or received,
    )
    found: dict[SeriesKey, Series] = {}
    for measurement in results.measurements:
        key = SeriesKey(
            board=run_board,
            path=measurement.source,
            algorithm=measurement.algorithm,
            driver=measurement.driver,
            key_bits=measurement.key_bits,
            block_size=measurement.block_size,
            op=measurement.op,
            # one request in flight where a file says nothing (files older than the
            # concurrency field): the same series as a newer file's concurrency 1
            concurrency=measurement.level,
        )
        point = Point(run, measurement.bytes_per_second, tuple(measurement.samples))
        # one point per series and run: a cell measured twice keeps its first figure
        found.setdefault(key, Series(key, BYTES_PER_SECOND, [point]))
    return IngestedRun(run, list(found.values()))


def from_lava_job(
    job: lava_results.Job, name: str, *, board: str | None, received: str
) -> IngestedRun:
    """A LAVA job: its own results file when the log carried it, else its measured cases."""
    if job.failure is not None:
        raise IngestError(f"{name}: LAVA job {job.job_id} did not complete: {job.failure}")
    results = lava_results.to_results(job)
    if not results.kernel.get("release"):
        raise IngestError(
            f"{name}: no kernel identity: LAVA job {job.job_id}'s test cases name no kernel "
            "and its log did not carry the run's results file (read the job from its server "
            "with `hwcrypto lava results --server URL --job ID --output FILE`)"
        )
    return from_results(results, name, board=board, received=received)


def from_kcidb(
    document: Mapping[str, Any], name: str, *, board: str | None, received: str
) -> list[IngestedRun]:
    """The runs in KCIDB I/O data: one per build and board its tests name."""
    version = document["version"]
    if version.get("major") != KCIDB_MAJOR:
        raise IngestError(
            f"{name}: KCIDB schema v{version.get('major')}.{version.get('minor', 0)}: this "
            f"history reads v{KCIDB_MAJOR}.x"
        )
    checkouts = {str(c.get("id")): c for c in _objects(document, "checkouts", name)}
    builds = {str(b.get("id")): b for b in _objects(document, "builds", name)}
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for test in _objects(document, "tests", name):
        if not isinstance(test.get("number"), Mapping):
            continue
        file_board = _kcidb_board(test.get("environment"))
        run_board = _choose_board(name, file_board, board)
        groups.setdefault((str(test.get("build_id")), run_board), []).append(test)
    if not groups:
        raise IngestError(f"{name}: KCIDB data without a measured test (no test has a number)")
    runs = []
    for (build_id, run_board), tests in sorted(groups.items()):
        build = builds.get(build_id, {})
        checkout = checkouts.get(str(build.get("checkout_id")), {})
        kernel = _kcidb_kernel(build, checkout)
        if kernel is None:
            raise IngestError(
                f"{name}: no kernel identity for build {build_id!r}: its build and checkout "
                "give no kernel release, git commit or commit name"
            )
        content = {"build": build, "checkout": checkout, "tests": tests}
        environment = tests[0].get("environment")
        misc = environment.get("misc") if isinstance(environment, Mapping) else None
        plugin_version = _text(misc.get("plugin_version")) if isinstance(misc, Mapping) else None
        starts = sorted(str(t["start_time"]) for t in tests if _text(t.get("start_time")))
        run = RunIdentity(
            run_id=_digest(run_board, content),
            board=run_board,
            kernel=kernel,
            plugin_version=plugin_version or UNKNOWN_VERSION,
            started=(starts[0] if starts else None)
            or _text(build.get("start_time"))
            or _text(checkout.get("start_time"))
            or received,
        )
        found: dict[SeriesKey, Series] = {}
        for test in tests:
            read = _kcidb_series(test, run_board)
            if read is not None:
                key, unit, value = read
                found.setdefault(key, Series(key, unit, [Point(run, value)]))
        runs.append(IngestedRun(run, list(found.values())))
    return runs


def _kcidb_series(test: Mapping[str, Any], board: str) -> tuple[SeriesKey, str, float] | None:
    """(key, unit, value) of one KCIDB test with a number; None for derived ratios."""
    number = test["number"]
    value = number.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    path = str(test.get("path") or "")
    unit = _text(number.get("unit"))
    segments = path.split(".")
    if segments[0] == _KCIDB_ROOT and segments[-1] == "ratio":
        return None  # a HW/SW ratio: derived from two series the history already holds
    if segments[0] == _KCIDB_ROOT and unit == _KCIDB_BYTES_UNIT and len(segments) >= 7:
        key = _hwcrypto_cell(segments[2:], board)
        if key is not None:
            return key, BYTES_PER_SECOND, float(value)
    key = SeriesKey(board, path, path, None, None, None, "value", None)
    return key, unit or "", float(value)


def _hwcrypto_cell(segments: Sequence[str], board: str) -> SeriesKey | None:
    """`afalg.cbc_aes.128.encrypt[.n4].<driver>.<size>` -> its series (lab/kcidb.py)."""
    source, *middle, driver, size = segments
    concurrency = 1  # no `.nN` segment: one request in flight
    if middle and _DEPTH.match(middle[-1]):
        concurrency = int(_DEPTH.match(middle[-1]).group(1))  # type: ignore[union-attr]
        middle.pop()
    if len(middle) < 2:
        return None
    op = middle.pop()
    key_bits = int(middle.pop()) if len(middle) > 1 and middle[-1].isdigit() else None
    return SeriesKey(
        board=board,
        path=source,
        algorithm=".".join(middle),
        driver=driver,
        key_bits=key_bits,
        block_size=int(size) if size.isdigit() else None,
        op=op,
        concurrency=concurrency,
    )


def _kcidb_kernel(build: Mapping[str, Any], checkout: Mapping[str, Any]) -> KernelIdentity | None:
    misc = build.get("misc")
    misc = misc if isinstance(misc, Mapping) else {}
    commit = _commit(checkout.get("git_commit_hash"))
    describe = _text(checkout.get("git_commit_name"))
    release = _text(misc.get("kernel_release")) or describe or (commit[:12] if commit else None)
    if release is None:
        return None
    return KernelIdentity(release, commit, describe, _text(misc.get("config_sha256")))


def _kcidb_board(environment: Any) -> str | None:
    """The board a KCIDB test ran on: ours (`misc.board.kind`, its profile's name), else
    KernelCI's `misc.platform`, else the device tree's first `compatible`."""
    if not isinstance(environment, Mapping):
        return None
    misc = environment.get("misc")
    if isinstance(misc, Mapping):
        named = misc.get("board")
        if isinstance(named, Mapping):
            return _text(named.get("profile_name")) or _text(named.get("kind"))
        if _text(named) or _text(misc.get("platform")):
            return _text(named) or _text(misc.get("platform"))
    compatible = environment.get("compatible")
    if isinstance(compatible, list) and compatible:
        return _text(compatible[0])
    return None


def _results_board(environment: Mapping[str, Any]) -> str | None:
    board = environment.get("board")
    if isinstance(board, Mapping):
        return _text(board.get("profile_name")) or _text(board.get("kind"))
    return _text(board)


def _choose_board(name: str, in_file: str | None, given: str | None) -> str:
    if in_file and given and in_file != given:
        raise IngestError(f"{name}: the run is of board {in_file!r}, not {given!r} (--board)")
    chosen = in_file or given
    if not chosen:
        raise IngestError(f"{name}: the file names no board: say which with --board NAME")
    return chosen


def _objects(document: Mapping[str, Any], key: str, name: str) -> list[Mapping[str, Any]]:
    items = document.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise IngestError(f"{name}: KCIDB {key!r} must be a list of objects")
    return items


def _digest(board: str, content: Any) -> str:
    text = json.dumps([board, content], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) and str(value) else None


def _commit(value: Any) -> str | None:
    text = _text(value)
    return text.lower() if text and _COMMIT.match(text.lower()) else None
