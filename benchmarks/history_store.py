# SPDX-License-Identifier: MIT
"""How the history store scales: one add at N stored runs, and reading them all back.

The history is one real run (tests/data/board_qemu_results.json, its first SERIES series)
copied N times with new identities -- another run id and kernel each time, the same
values -- so this measures the store, not the detection. The copies are made by SQL in
the database (--fill sql), or go in through Store.add_many in batches (--fill add).
Then the last adds are timed one by one (Store.add, as `hwcrypto history add` does) at
the full size, and runs() and series() read everything back, with samples and without.

    python benchmarks/history_store.py --db sqlite --runs 10000 --series 200
    python benchmarks/history_store.py --db postgresql ...   (starts its own server)

Prints one JSON object per database (figures in seconds) and the load average.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_hwcrypto.history.ingest import IngestedRun, ingest  # noqa: E402
from pytest_hwcrypto.history.model import KernelIdentity, Point, Series  # noqa: E402
from pytest_hwcrypto.history.store import Store  # noqa: E402
from tests.postgres import PostgresServer  # noqa: E402

REAL_RUN = ROOT / "tests" / "data" / "board_qemu_results.json"
TIMED_ADDS = 20
FILL_BATCH = 250


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def base_run(series: int) -> IngestedRun:
    document = json.loads(REAL_RUN.read_text())
    [run] = ingest(document, str(REAL_RUN), board="qemu", received="2026-12-07T00:00:00+00:00")
    if len(run.series) < series:
        raise SystemExit(f"{REAL_RUN} has {len(run.series)} series, fewer than {series}")
    run.series = run.series[:series]
    return run


def copy_of(base: IngestedRun, index: int) -> IngestedRun:
    """The real run as the index-th kernel of a series: new identity, same values."""
    commit = hashlib.sha1(f"kernel {index}".encode()).hexdigest()
    identity = dataclasses.replace(
        base.run,
        run_id=hashlib.sha256(f"bench run {index}".encode()).hexdigest(),
        kernel=KernelIdentity(
            release=f"6.1.0-{index}", commit=commit, describe=f"v6.1-{index}-g{commit[:12]}"
        ),
        started=f"2026-12-07T00:00:00+00:00#{index}",
    )
    return IngestedRun(
        identity,
        [
            Series(s.key, s.unit, [Point(identity, p.value, p.samples) for p in s.points])
            for s in base.series
        ],
    )


def copy_in_database(store: Store, copies: int) -> None:
    """`copies` more runs of the first run's points, made by SQL in one transaction: each a
    new run id and kernel, the same values (SQL both databases read)."""
    runs = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {copies}) "
        "INSERT INTO runs (run_id, board, kernel_release, git_commit, git_describe, "
        "config_digest, plugin_version, started) "
        "SELECT 'copy ' || i, board, '6.1.0-copy-' || i, NULL, 'v6.1-copy-' || i, "
        "config_digest, plugin_version, started FROM n, runs WHERE runs.id = {first}"
    )
    points = (
        "INSERT INTO points (run_ref, series_ref, value, samples, served_by) "
        "SELECT runs.id, points.series_ref, points.value, points.samples, points.served_by "
        "FROM runs, points WHERE points.run_ref = {first} AND runs.id <> {first}"
    )
    with store._write() as cursor:  # the benchmark's own fill, beside the store's API
        cursor.execute("SELECT MIN(id) FROM runs")
        first = int(cursor.fetchone()[0])
        cursor.execute(runs.format(copies=copies, first=first))
        cursor.execute(points.format(first=first))


def measure(location: str, runs: int, series: int, fill: str) -> dict[str, object]:
    base = base_run(series)
    figures: dict[str, object] = {
        "runs": runs,
        "series": series,
        "fill": fill,
        "load_before": load(),
    }
    started = time.perf_counter()
    with Store(location) as store:
        if fill == "add":  # batches of runs in one transaction each (Store.add_many)
            for first in range(0, runs - TIMED_ADDS, FILL_BATCH):
                last = min(first + FILL_BATCH, runs - TIMED_ADDS)
                store.add_many([copy_of(base, index) for index in range(first, last)])
                print(f"  {last} runs, {time.perf_counter() - started:.0f} s", file=sys.stderr)
        else:  # the database copies the first run's points itself: minutes less
            store.add(copy_of(base, 0))
            copy_in_database(store, runs - TIMED_ADDS - 1)
        figures["fill_seconds"] = round(time.perf_counter() - started, 1)
        adds, add_cpu = [], []
        for index in range(runs - TIMED_ADDS, runs):
            run = copy_of(base, index)
            begin, cpu = time.perf_counter(), time.process_time()
            store.add(run)
            adds.append(time.perf_counter() - begin)
            add_cpu.append(time.process_time() - cpu)
        begin = time.perf_counter()
        again = store.add(copy_of(base, runs - 1))
        figures["add_again_seconds"] = round(time.perf_counter() - begin, 4)
        assert again is False
        figures["add_at_full_median_seconds"] = round(statistics.median(adds), 4)
        figures["add_at_full_max_seconds"] = round(max(adds), 4)
        figures["add_at_full_median_cpu_seconds"] = round(statistics.median(add_cpu), 4)
        figures["add_at_full_each_seconds"] = [round(seconds, 3) for seconds in adds]
    with Store(location) as store:  # a fresh connection, as a new process would have
        begin = time.perf_counter()
        stored_runs = store.runs()
        figures["runs_read_seconds"] = round(time.perf_counter() - begin, 2)
        begin, cpu = time.perf_counter(), time.process_time()
        stored = store.series()
        figures["series_read_seconds"] = round(time.perf_counter() - begin, 2)
        figures["series_read_cpu_seconds"] = round(time.process_time() - cpu, 2)
        begin, cpu = time.perf_counter(), time.process_time()
        store.series(board="qemu", samples=False)
        figures["values_read_seconds"] = round(time.perf_counter() - begin, 2)
        figures["values_read_cpu_seconds"] = round(time.process_time() - cpu, 2)
    figures["points_read"] = sum(len(s.points) for s in stored)
    assert len(stored_runs) == runs and len(stored) == series
    figures["load_after"] = load()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgresql"), action="append")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument(
        "--fill",
        choices=("sql", "add"),
        default="sql",
        help="how the stored runs are made: copied by SQL in the database (default), or "
        "added through Store.add_many in batches (slow: measures the import too)",
    )
    args = parser.parse_args()
    for kind in args.db or ["sqlite", "postgresql"]:
        with tempfile.TemporaryDirectory(prefix="hwcrypto-history-bench-") as scratch:
            server = None
            if kind == "sqlite":
                location = str(Path(scratch) / "history.sqlite")
            else:
                server = PostgresServer(durable=True)  # fsync on: as a lab's server runs
                location = server.start()
            try:
                figures = measure(location, args.runs, args.series, args.fill)
                if kind == "sqlite":
                    figures["file_bytes"] = sum(
                        path.stat().st_size for path in Path(scratch).iterdir()
                    )
            finally:
                if server is not None:
                    server.stop()
        print(json.dumps({"db": kind, **figures}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
