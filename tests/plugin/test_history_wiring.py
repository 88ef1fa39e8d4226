# SPDX-License-Identifier: MIT
"""--hwcrypto-history: at the end of a session its run is added to the history database,
once (the controller, not each xdist worker); a database that cannot take it is one line,
and the tests' outcome still decides the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.history.store import Store

pytest_plugins = ["pytester"]

SUITE = """
import pytest
from pytest_hwcrypto.model.results import Measurement

pytestmark = pytest.mark.hwcrypto_throughput


@pytest.mark.parametrize("size", [4096, 65536])
def test_measures(hwcrypto_results, size):
    hwcrypto_results.add_measurement(Measurement(
        "afalg", "cbc(aes)", "cbc(aes-generic)", 128, size, "encrypt", 50 * 1024 * 1024,
        driver_class="generic"))
"""


@pytest.mark.parametrize("workers", [None, "2"])
def test_the_sessions_run_lands_in_the_history(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str | None
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("HWCRYPTO_LAVA", "false")
    db = pytester.path / "history.sqlite"
    xdist = ["-n", workers] if workers else ["-p", "no:xdist"]
    result = pytester.runpytest("--hwcrypto", "test_suite.py", f"--hwcrypto-history={db}", *xdist)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"hwcrypto: run * (board host, kernel *, 2 series) added to {db}"])
    with Store(db, create=False) as store:
        [run] = store.runs()
        series = store.series()
    assert run.board == "host" and run.kernel.release
    assert sorted(s.key.block_size or 0 for s in series) == [4096, 65536]
    assert all(len(s.points) == 1 and s.points[0].value == 50 * 1024 * 1024 for s in series)


def test_a_database_that_cannot_take_the_run_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    db = pytester.path / "no-such-dir" / "history.sqlite"
    result = pytester.runpytest(
        "--hwcrypto", "test_suite.py", f"--hwcrypto-history={db}", "-p", "no:xdist"
    )
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [f"hwcrypto: --hwcrypto-history: run not added: {db}: cannot open*"]
    )
    assert not Path(db).parent.exists()
