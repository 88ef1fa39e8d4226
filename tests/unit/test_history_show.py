# SPDX-License-Identifier: MIT
"""`hwcrypto history show` (cli/history/show.py, history/trend_html.py, trend_plots.py) on
a history of real UML boots: one run per kernel (tests/data/board_uml_results_1.json), the
64 KiB cbc figures replaced by round5/all10/1's boots (tests/data/history/README.md), so
the page has real trends and one change point per driver."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.cli.exits import EXIT_OK, EXIT_USAGE
from tests.history_runs import build_history

pytest.importorskip("otava", reason="the history extra (apache-otava) is not installed")
pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("show")
    db = build_history(directory)
    out = directory / "history.html"
    assert main(["history", "show", "--history-db", str(db), "--html", str(out)]) == EXIT_OK
    return out


def test_a_figure_per_path_and_algorithm_and_the_changes_in_a_table(page: Path) -> None:
    text = page.read_text()
    alts = re.findall(r'<img class="hwcrypto-trend" alt="([^"]*)"', text)
    assert alts == [
        f"uml: afalg {name}: trends over kernels"
        for name in ("cbc(aes)", "ctr(aes)", "ecb(aes)", "xts(aes)")
    ]
    assert "<h2>Board uml</h2><p>16 series, 2 change points</p>" in text
    # the 10 % slowdown of every driver, seen in both 64 KiB series, marked at its kernels
    rows = re.findall(
        r"<tr><td>(afalg cbc\(aes\)[^<]*)</td><td>speed</td>"
        r"<td>([^<]*)</td><td>([^<]*)</td>",
        text,
    )
    assert sorted(rows) == [
        ("afalg cbc(aes) cbc(aes-fixed-time) 128-bit 65536 B encrypt x1", "6.1.115", "6.1.116"),
        ("afalg cbc(aes) cbc(aes-generic) 128-bit 65536 B encrypt x1", "6.1.115", "6.1.116"),
    ]
    assert 'class="fail">drop</td>' in text  # aes-generic's -14 % beyond the default 10 %


def test_a_missing_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "nothing.sqlite"
    out = tmp_path / "page.html"
    assert main(["history", "show", "--history-db", str(db), "--html", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(db) in err[0]
    assert not out.exists()


def test_an_unwritable_page_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = build_history(tmp_path)
    out = tmp_path / "no-such-dir" / "page.html"
    assert main(["history", "show", "--history-db", str(db), "--html", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hwcrypto") and f"--html {out}" in err[0]
