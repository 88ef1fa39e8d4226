# SPDX-License-Identifier: MIT
"""The history of runs in a database: SQLite (a file, the default) or PostgreSQL (a URL).

One schema for both, versioned: the `schema_version` table holds the version a database
is at, and opening it applies the missing steps of MIGRATIONS in one transaction, under a
lock (SQLite's write lock, a PostgreSQL advisory lock), so two writers that open a new
database at once build it once. A database newer than this code is refused.

Tables (v1): `runs` (one per run, `run_id` unique: adding the same run again changes
nothing), `series` (one per series key, its key as canonical JSON unique, so a NULL field
still keys), `points` (a run's value of a series, with its samples as JSON).

Writers are safe together: each add is one transaction; on SQLite it takes the write lock
first (BEGIN IMMEDIATE, WAL journal, a long busy timeout) and waits its turn, on
PostgreSQL concurrent inserts of one run or one series meet at the unique keys. Reading
gives runs in the order they were added and series with their points in no promised
order: ordering is the detection's job.

Every failure is a StoreError: one line naming the database (a URL without its password).
"""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from pytest_hwcrypto.history.ingest import IngestedRun
from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity, Series, SeriesKey

DEFAULT_DB = "hwcrypto-history.sqlite"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
PG_EXTRA_HINT = "pip install pytest-hwcrypto[history-pg]"
# Seconds a writer waits for another writer's transaction (SQLite's busy timeout).
WRITE_WAIT_SECONDS = 120.0
# Any constant, the same in every process: the PostgreSQL advisory lock of migrations.
_MIGRATION_LOCK = 0x68697374  # "hist"

# Step i brings a database from version i to i + 1. `{id}` and `{real}` are the dialect's
# auto-numbered primary key and 64-bit float.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE runs (
            id {id},
            run_id TEXT NOT NULL UNIQUE,
            board TEXT NOT NULL,
            kernel_release TEXT NOT NULL,
            git_commit TEXT,
            git_describe TEXT,
            config_digest TEXT,
            plugin_version TEXT NOT NULL,
            started TEXT NOT NULL)""",
        "CREATE INDEX runs_board ON runs (board)",
        """CREATE TABLE series (
            id {id},
            key_text TEXT NOT NULL UNIQUE,
            board TEXT NOT NULL,
            path TEXT NOT NULL,
            algorithm TEXT NOT NULL,
            driver TEXT,
            key_bits INTEGER,
            block_size INTEGER,
            op TEXT NOT NULL,
            concurrency INTEGER,
            unit TEXT NOT NULL)""",
        "CREATE INDEX series_board ON series (board)",
        """CREATE TABLE points (
            run_ref BIGINT NOT NULL REFERENCES runs (id),
            series_ref BIGINT NOT NULL REFERENCES series (id),
            value {real} NOT NULL,
            samples TEXT,
            served_by TEXT,
            PRIMARY KEY (run_ref, series_ref))""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

_RUN_COLUMNS = (
    "id, run_id, board, kernel_release, git_commit, git_describe, config_digest, "
    "plugin_version, started"
)


class StoreError(Exception):
    """The database cannot be opened, read or written; one line naming it."""


class _Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class _Dialect:
    """What differs between the two databases: connecting, SQL spelling, locking, errors."""

    name: str
    id_type: str
    real_type: str
    errors: tuple[type[BaseException], ...]

    def connect(self) -> Any:
        raise NotImplementedError

    def sql(self, text: str) -> str:
        return text

    def begin_write(self, cursor: _Cursor) -> None:
        raise NotImplementedError

    def lock_schema(self, cursor: _Cursor) -> None:
        """Inside a write transaction: one migrator at a time."""

    def has_table(self, cursor: _Cursor, table: str) -> bool:
        raise NotImplementedError

    def explain(self, error: BaseException) -> str:
        return _first_line(error)


class _Sqlite(_Dialect):
    id_type = "INTEGER PRIMARY KEY"
    real_type = "REAL"
    errors = (sqlite3.Error,)

    def __init__(self, path: Path, create: bool) -> None:
        self.path = path
        self.name = str(path)
        self.create = create

    def connect(self) -> Any:
        if not self.create and not self.path.exists():
            raise StoreError(f"{self.name}: no such history database")
        if self.path.is_dir():
            raise StoreError(f"{self.name}: is a directory, not a history database")
        # autocommit (isolation_level None): each transaction is begun here explicitly
        try:
            connection = sqlite3.connect(
                self.path, timeout=WRITE_WAIT_SECONDS, isolation_level=None
            )
            connection.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as error:
            raise StoreError(f"{self.name}: {self.explain(error)}") from None
        return connection

    def begin_write(self, cursor: _Cursor) -> None:
        # the write lock now, not at the first write: a reader turned writer deadlocks
        cursor.execute("BEGIN IMMEDIATE")

    def has_table(self, cursor: _Cursor, table: str) -> bool:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        return cursor.fetchone() is not None

    def explain(self, error: BaseException) -> str:
        text = _first_line(error)
        if "readonly" in text:
            return f"read-only database, cannot add runs ({text})"
        if "unable to open" in text:
            return f"cannot open or create the database file ({text})"
        if "not a database" in text:
            return f"not an SQLite database ({text})"
        return text


class _Postgres(_Dialect):
    id_type = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    real_type = "DOUBLE PRECISION"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                f"{redact(url)}: PostgreSQL needs psycopg 3: {PG_EXTRA_HINT}"
            ) from None
        self.psycopg = psycopg
        self.url = url
        self.name = redact(url)
        self.errors = (psycopg.Error,)

    def connect(self) -> Any:
        try:
            return self.psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except self.psycopg.Error as error:
            raise StoreError(f"{self.name}: cannot connect: {_first_line(error)}") from None

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def begin_write(self, cursor: _Cursor) -> None:
        cursor.execute("BEGIN")

    def lock_schema(self, cursor: _Cursor) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))

    def has_table(self, cursor: _Cursor, table: str) -> bool:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))
        return bool(cursor.fetchone()[0])

    def explain(self, error: BaseException) -> str:
        text = _first_line(error)
        errors = self.psycopg.errors
        if isinstance(error, (errors.ReadOnlySqlTransaction, errors.InsufficientPrivilege)):
            return f"read-only database, cannot add runs ({text})"
        return text


class Store:
    """A history database, open. Use as a context manager, or close() it."""

    def __init__(
        self,
        location: str | os.PathLike[str],
        *,
        create: bool = True,
        migrations: Sequence[Sequence[str]] = MIGRATIONS,
    ) -> None:
        text = os.fspath(location)
        if text.startswith(POSTGRES_SCHEMES):
            self._dialect: _Dialect = _Postgres(text)
        else:
            self._dialect = _Sqlite(Path(text), create)
        self.name = self._dialect.name
        self._migrations = tuple(tuple(step) for step in migrations)
        self._connection = self._dialect.connect()
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    @contextmanager
    def _cursor(self) -> Iterator[_Cursor]:
        try:
            cursor = self._connection.cursor()
            try:
                yield cursor
            finally:
                cursor.close()
        except self._dialect.errors as error:
            raise StoreError(f"{self.name}: {self._dialect.explain(error)}") from None

    @contextmanager
    def _write(self) -> Iterator[_Cursor]:
        with self._cursor() as cursor:
            self._dialect.begin_write(cursor)
            try:
                yield cursor
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    def _execute(self, cursor: _Cursor, sql: str, params: Sequence[Any] = ()) -> None:
        cursor.execute(self._dialect.sql(sql), params)

    def schema_version(self) -> int:
        with self._cursor() as cursor:
            return self._version(cursor)

    def _version(self, cursor: _Cursor) -> int:
        if not self._dialect.has_table(cursor, "schema_version"):
            return 0
        cursor.execute("SELECT MAX(version) FROM schema_version")
        row = cursor.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def _migrate(self) -> None:
        latest = len(self._migrations)
        with self._cursor() as cursor:
            current = self._version(cursor)  # read first: a read-only, current database opens
        if current == latest:
            return
        if current > latest:
            raise StoreError(
                f"{self.name}: history schema v{current} is newer than this pytest-hwcrypto "
                f"reads (v{latest}): upgrade pytest-hwcrypto"
            )
        if isinstance(self._dialect, _Sqlite):
            with self._cursor() as cursor:  # readers never wait for a writer, nor it for them
                cursor.execute("PRAGMA journal_mode = WAL")  # (outside a transaction)
        with self._write() as cursor:
            self._dialect.lock_schema(cursor)
            cursor.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            current = self._version(cursor)  # another writer may have migrated meanwhile
            for step in self._migrations[current:]:
                for statement in step:
                    cursor.execute(
                        statement.format(id=self._dialect.id_type, real=self._dialect.real_type)
                    )
            if current < latest:
                cursor.execute("DELETE FROM schema_version")
                self._execute(cursor, "INSERT INTO schema_version (version) VALUES (?)", (latest,))

    def add(self, ingested: IngestedRun) -> bool:
        """Add a run with its points; False (and nothing changed) when it is there already."""
        return self.add_many([ingested])[0]

    def add_many(self, runs: Sequence[IngestedRun]) -> list[bool]:
        """Add runs in one transaction (an import of many files); whether each was new."""
        added = []
        with self._write() as cursor:
            refs: dict[str, int] = {}
            for ingested in runs:
                added.append(self._add(cursor, ingested, refs))
        return added

    def _add(self, cursor: _Cursor, ingested: IngestedRun, refs: dict[str, int]) -> bool:
        """Inside a write transaction; `refs` caches series ids (key text -> id)."""
        run = ingested.run
        self._execute(
            cursor,
            "INSERT INTO runs (run_id, board, kernel_release, git_commit, git_describe, "
            "config_digest, plugin_version, started) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id) DO NOTHING RETURNING id",
            (
                run.run_id,
                run.board,
                run.kernel.release,
                run.kernel.commit,
                run.kernel.describe,
                run.kernel.config_digest,
                run.plugin_version,
                run.started,
            ),
        )
        row = cursor.fetchone()
        if row is None:
            return False
        run_ref = int(row[0])
        series = [(key_text(s.key), s) for s in ingested.series if s.points]
        new = [(text, s) for text, s in series if text not in refs]
        if new:
            cursor.executemany(
                self._dialect.sql(
                    "INSERT INTO series (key_text, board, path, algorithm, driver, key_bits, "
                    "block_size, op, concurrency, unit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (key_text) DO NOTHING"
                ),
                [(text, *_key_row(s.key), s.unit) for text, s in new],
            )
            for board in sorted({s.key.board for _, s in new}):
                self._execute(cursor, "SELECT id, key_text FROM series WHERE board = ?", (board,))
                refs.update({text: int(ref) for ref, text in cursor.fetchall()})
        cursor.executemany(
            self._dialect.sql(
                "INSERT INTO points (run_ref, series_ref, value, samples, served_by) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            [
                (
                    run_ref,
                    refs[text],
                    s.points[0].value,
                    json.dumps(list(s.points[0].samples)) if s.points[0].samples else None,
                    s.points[0].served_by,
                )
                for text, s in series
            ],
        )
        return True

    def runs(self, board: str | None = None) -> list[RunIdentity]:
        """Every run (of one board), in the order they were added."""
        return list(self._runs(board).values())

    def _runs(self, board: str | None) -> dict[int, RunIdentity]:
        where, params = ("WHERE board = ?", (board,)) if board is not None else ("", ())
        with self._cursor() as cursor:
            self._execute(cursor, f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY id", params)
            rows = cursor.fetchall()
        return {
            int(ref): RunIdentity(
                run_id=run_id,
                board=run_board,
                kernel=KernelIdentity(release, commit, describe, config),
                plugin_version=version,
                started=started,
            )
            for ref, run_id, run_board, release, commit, describe, config, version, started in rows
        }

    def series(self, board: str | None = None, *, samples: bool = True) -> list[Series]:
        """Every series (of one board) with all its points, in no particular order;
        `samples=False` leaves each point's samples out (quicker: values are enough to
        find change points)."""
        runs = self._runs(board)
        where, params = ("WHERE board = ?", (board,)) if board is not None else ("", ())
        found: dict[int, Series] = {}
        with self._cursor() as cursor:
            self._execute(
                cursor,
                "SELECT id, board, path, algorithm, driver, key_bits, block_size, op, "
                f"concurrency, unit FROM series {where}",
                params,
            )
            for ref, *fields, unit in cursor.fetchall():
                found[int(ref)] = Series(SeriesKey(*fields), unit)
            # a series is of its runs' board: filtering by run walks the points' primary
            # key (run_ref first); by series it made SQLite visit every point
            join = "JOIN runs ON runs.id = points.run_ref WHERE runs.board = ?"
            self._execute(
                cursor,
                f"SELECT run_ref, series_ref, value, {'samples' if samples else 'NULL'}, "
                "served_by FROM points " + (join if board is not None else ""),
                params,
            )
            for run_ref, series_ref, value, sampled, served_by in cursor.fetchall():
                found[series_ref].points.append(
                    Point(
                        runs[run_ref],
                        float(value),
                        tuple(json.loads(sampled)) if sampled else (),
                        served_by,
                    )
                )
        return list(found.values())


def key_text(key: SeriesKey) -> str:
    """A series key as canonical JSON: the store's unique key of a series."""
    return json.dumps(asdict(key), sort_keys=True, separators=(",", ":"))


def _key_row(key: SeriesKey) -> tuple[Any, ...]:
    return (
        key.board,
        key.path,
        key.algorithm,
        key.driver,
        key.key_bits,
        key.block_size,
        key.op,
        key.concurrency,
    )


def redact(url: str) -> str:
    """A database URL fit for a message: its password replaced by ***."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
