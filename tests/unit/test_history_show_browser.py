# SPDX-License-Identifier: MIT
"""`hwcrypto history show`'s page in a real browser, as tests/unit/test_report_browser.py
checks the report: headless Chromium's DOM holds every figure and table, and its
screenshot shows the runs (blue) and a drop beyond max-drop (red)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.cli.exits import EXIT_OK
from tests.browser import chromium, elements, needs_chromium
from tests.history_runs import build_history

pytest.importorskip("otava", reason="the history extra (apache-otava) is not installed")
pytestmark = needs_chromium
POINT_BLUE = (0x1F, 0x77, 0xB4)  # history/trend_plots.py
DROP_RED = (0xD6, 0x27, 0x28)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("show-browser")
    db = build_history(directory)
    out = directory / "history.html"
    argv = ["history", "show", "--history-db", str(db), "--html", str(out), "--board", "uml"]
    assert main(argv) == EXIT_OK
    return out


def test_rendered_dom_holds_every_figure_and_table(page: Path, tmp_path: Path) -> None:
    source = elements(page.read_text())
    rendered = elements(chromium(tmp_path / "profile", "--dump-dom", page.as_uri()).stdout)
    assert source.tables == 1 and len(source.images) == 4
    assert (rendered.tables, rendered.rows) == (source.tables, source.rows)
    assert rendered.images == source.images
    assert all(src.startswith("data:image/png;base64,") for src in rendered.images)


def test_screenshot_shows_the_runs_and_the_drop(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    # the first figure (cbc(aes), with the drop in its last plot) fills the first 1600 px
    chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600", page.as_uri())
    pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).round()
    assert pixels.std() > 20, "the page rendered blank"
    for colour, what in ((POINT_BLUE, "runs"), (DROP_RED, "drop")):
        near = np.abs(pixels - np.array(colour)).max(axis=-1) < 40
        assert near.sum() > 100, f"the plot's {what} are not on the page"
