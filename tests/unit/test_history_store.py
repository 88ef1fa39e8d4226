# SPDX-License-Identifier: MIT
"""history/store.py on SQLite and on a real PostgreSQL server this test starts: runs and
series read back as added, the same run twice is one run, writers in several processes at
once, schema migrations, and one-line errors for databases that cannot be used."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.history.ingest import IngestedRun, ingest
from pytest_hwcrypto.history.store import MIGRATIONS, Store, StoreError
from tests.postgres import HOW_TO_INSTALL, PostgresServer, binaries

DATA = Path(__file__).parent.parent / "data"
FILES = ("board_uml_results_1.json", "board_uml_results_2.json", "board_uml_results_slow.json")


def real_run(name: str, board: str = "uml", seed: int | None = None) -> IngestedRun:
    """A real results file as a run; `seed` makes it another run (new content, new id)."""
    document: dict[str, Any] = json.loads((DATA / name).read_text())
    if seed is not None:
        document.setdefault("environment", {})["seed"] = {"value": seed, "source": "test"}
    [run] = ingest(document, name, board=board, received="2026-12-07T10:00:00+00:00")
    return run


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    if binaries() is None:
        pytest.skip(f"no PostgreSQL server binaries: {HOW_TO_INSTALL}")
    pytest.importorskip("psycopg", reason="pip install pytest-hwcrypto[history-pg]")
    server = PostgresServer(durable=False)
    server.start()
    yield server
    server.stop()


_databases = iter(range(1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    server: PostgresServer = request.getfixturevalue("postgres")
    name = f"h{os.getpid()}_{next(_databases)}"
    server.psql(f"CREATE DATABASE {name}")
    return server.url(name)


def test_runs_and_series_read_back_as_added(location: str) -> None:
    one, two = real_run(FILES[0]), real_run(FILES[1])
    qemu = real_run("board_qemu_results.json", board="qemu")
    with Store(location) as store:
        assert [store.add(run) for run in (one, two, qemu)] == [True, True, True]
        assert [r.run_id for r in store.runs()] == [one.run.run_id, two.run.run_id,
                                                     qemu.run.run_id]  # fmt: skip
        assert store.runs()[0] == one.run
        uml = store.series(board="uml")
    assert {s.key for s in uml} == {s.key for s in one.series} | {s.key for s in two.series}
    first = one.series[0]
    stored = next(s for s in uml if s.key == first.key)
    assert stored.unit == first.unit
    assert sorted((p.run.run_id, p.value, p.samples) for p in stored.points) == sorted(
        (p.run.run_id, p.value, p.samples)
        for run in (one, two)
        for s in run.series
        if s.key == first.key
        for p in s.points
    )
    with Store(location) as store:
        assert {s.key.board for s in store.series()} == {"uml", "qemu"}


def test_adding_the_same_run_again_changes_nothing(location: str) -> None:
    run = real_run(FILES[0])
    with Store(location) as store:
        assert store.add(run) is True
        before = sorted((s.key.path, s.key.algorithm, len(s.points)) for s in store.series())
        assert store.add(real_run(FILES[0])) is False
        assert len(store.runs()) == 1
        after = sorted((s.key.path, s.key.algorithm, len(s.points)) for s in store.series())
    assert after == before


def _add_runs(location: str, jobs: list[tuple[str, int | None]]) -> list[bool]:
    with Store(location) as store:
        return [store.add(real_run(name, seed=seed)) for name, seed in jobs]


def test_writers_in_several_processes_at_once(location: str) -> None:
    """Six processes open a new database at once and add runs: each its own, and all the
    same three. Every run lands once, with all its points."""
    writers = 6
    jobs = [
        [(name, writer * 10 + index) for index, name in enumerate(FILES)]
        + [(name, None) for name in FILES]
        for writer in range(writers)
    ]
    with multiprocessing.get_context("spawn").Pool(writers) as pool:
        added = pool.starmap(_add_runs, [(location, job) for job in jobs])
    assert all(added_run for worker in added for added_run in worker[:3])
    assert sum(added_run for worker in added for added_run in worker[3:]) == 3  # once each
    with Store(location) as store:
        runs = store.runs()
        series = store.series()
    assert len(runs) == len({r.run_id for r in runs}) == writers * 3 + 3
    points_per_run = {run.run_id: 0 for run in runs}
    for each in series:
        for point in each.points:
            points_per_run[point.run.run_id] += 1
    expected = {name: len(real_run(name).series) for name in FILES}
    assert sorted(points_per_run.values()) == sorted(
        expected[name] for name in FILES for _ in range(writers + 1)
    )


V2 = (*MIGRATIONS, ("ALTER TABLE runs ADD COLUMN note TEXT",))


def test_a_database_migrates_step_by_step_and_keeps_its_runs(location: str) -> None:
    run = real_run(FILES[0])
    with Store(location, migrations=MIGRATIONS[:0]) as empty:  # v0: only the version table
        assert empty.schema_version() == 0
    with Store(location) as store:  # v0 -> v1
        assert store.schema_version() == 1
        store.add(run)
    with Store(location, migrations=V2) as store:  # v1 -> v2, a later version's step
        assert store.schema_version() == 2
        assert store.runs() == [run.run]
        assert store.add(run) is False


def test_a_newer_database_is_refused_in_one_line(location: str) -> None:
    Store(location, migrations=V2).close()
    with pytest.raises(StoreError, match=r"history schema v2 is newer than .* reads \(v1\)"):
        Store(location)


def test_a_read_only_sqlite_database_reads_but_refuses_a_run(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    with Store(path) as store:
        store.add(real_run(FILES[0]))
    path.chmod(stat.S_IRUSR)
    immutable = os.geteuid() == 0  # root writes a read-only file: make it immutable
    if immutable and subprocess.run(["chattr", "+i", str(path)], check=False).returncode:
        pytest.skip(f"chattr +i failed on {tmp_path}: run as a user, or on ext4")
    try:
        with Store(path) as store:
            assert len(store.runs()) == 1
            with pytest.raises(StoreError, match=rf"^{path}: read-only database, cannot add"):
                store.add(real_run(FILES[1]))
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_postgresql_database_refuses_a_run_in_one_line(
    postgres: PostgresServer,
) -> None:
    name = f"ro{os.getpid()}"
    postgres.psql(f"CREATE DATABASE {name}")
    with Store(postgres.url(name)) as store:
        store.add(real_run(FILES[0]))
    postgres.psql(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
    with Store(postgres.url(name)) as store:
        assert len(store.runs()) == 1
        with pytest.raises(StoreError, match=r"read-only database, cannot add runs") as error:
            store.add(real_run(FILES[1]))
    assert str(error.value).startswith("postgresql:///ro") and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing-dir/h.sqlite", r"h.sqlite: cannot open or create the database file"),
        ("a-dir", r"a-dir: is a directory, not a history database"),
        ("not-sqlite.txt", r"not-sqlite.txt: not an SQLite database"),
    ],
)
def test_an_unusable_sqlite_database_is_one_line(tmp_path: Path, where: str, message: str) -> None:
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "not-sqlite.txt").write_text("hello\n" * 200)
    with pytest.raises(StoreError, match=message) as error:
        Store(tmp_path / where)
    assert "\n" not in str(error.value)


def test_an_unreachable_postgresql_server_is_one_line_without_the_password(
    tmp_path: Path,
) -> None:
    pytest.importorskip("psycopg", reason="pip install pytest-hwcrypto[history-pg]")
    url = f"postgresql://lab:secret@/history?host={tmp_path}"
    with pytest.raises(StoreError, match=r"^postgresql://lab:\*\*\*@/history.*cannot connect"):
        Store(url)


def test_a_missing_driver_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now fails
    with pytest.raises(StoreError, match=r"pip install pytest-hwcrypto\[history-pg\]$"):
        Store("postgresql://lab@db.example/history")


def test_many_runs_in_one_transaction_and_values_without_samples(location: str) -> None:
    one, two = real_run(FILES[0]), real_run(FILES[1])
    with Store(location) as store:
        assert store.add_many([one, two, real_run(FILES[0])]) == [True, True, False]
        assert len(store.runs()) == 2
        with_samples = store.series()
        values_only = store.series(samples=False)
    assert any(p.samples for s in with_samples for p in s.points)
    assert not any(p.samples for s in values_only for p in s.points)
    assert sorted(p.value for s in values_only for p in s.points) == sorted(
        p.value for s in with_samples for p in s.points
    )
