# SPDX-License-Identifier: MIT
"""`hwcrypto history add`: results files, KCIDB data or LAVA jobs' results into a history.

Every file is read and checked before anything is written, so a bad file among good ones
adds nothing; then each run is added in its own transaction (adding one again changes
nothing). A file with no time of its own is dated by its modification time.
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_hwcrypto.cli.exits import EXIT_OK
from pytest_hwcrypto.usage import UsageError

if TYPE_CHECKING:
    from pytest_hwcrypto.history.ingest import IngestedRun


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pytest_hwcrypto.history.store import DEFAULT_DB

    parser = sub.add_parser(
        "add",
        help="add runs: results JSON, KCIDB JSON, or a LAVA job's results",
        usage="hwcrypto history add [--history-db DB] [--board NAME] RESULTS...",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="RESULTS",
        help="a results file (--hwcrypto-json), KCIDB data (--hwcrypto-kcidb, or a lab's), "
        "or a LAVA job's results (`hwcrypto lava run`'s cases.json, the REST API's JSON, "
        "lavacli's YAML)",
    )
    parser.add_argument(
        "--history-db",
        default=DEFAULT_DB,
        metavar="DB",
        help=f"an SQLite file, or postgresql://... (default: {DEFAULT_DB} here)",
    )
    parser.add_argument(
        "--board",
        metavar="NAME",
        help="the board the runs are of: needed when a file names none; refused when it "
        "names another",
    )
    parser.set_defaults(func=cmd_add)


def cmd_add(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.history.ingest import IngestError
    from pytest_hwcrypto.history.store import Store, StoreError, redact

    runs: list[tuple[str, IngestedRun]] = []
    for name in args.files:
        try:
            runs += [(name, run) for run in _read(Path(name), args.board)]
        except IngestError as error:
            raise UsageError(str(error)) from None
    try:
        with Store(args.history_db) as store:
            for name, run in runs:
                added = store.add(run)
                print(
                    f"hwcrypto history: {name}: run {run.run.run_id[:12]} "
                    f"(board {run.run.board}, kernel {run.run.kernel.label()}, "
                    f"{len(run.series)} series) "
                    + ("added to " if added else "already in ")
                    + redact(str(args.history_db))
                )
    except StoreError as error:
        raise UsageError(str(error)) from None
    return EXIT_OK


def _read(path: Path, board: str | None) -> list[IngestedRun]:
    from pytest_hwcrypto.history.ingest import IngestError, from_lava_job, ingest
    from pytest_hwcrypto.lab import lava_results

    try:
        text = path.read_text(encoding="utf-8")
        received = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise IngestError(f"{path}: cannot read: {reason or error}") from None
    when = received.isoformat(timespec="seconds")
    try:
        document = json.loads(text)
    except ValueError as error:
        if not text.lstrip().startswith("- "):  # lavacli's YAML: a list of cases
            raise IngestError(f"{path}: not a run this history reads: not JSON ({error})") from None
        try:
            job = lava_results.read_job_file(path, None)
        except lava_results.LavaResultsError as yaml_error:
            raise IngestError(str(yaml_error)) from None
        return [from_lava_job(job, str(path), board=board, received=when)]
    return ingest(document, str(path), board=board, received=when)
