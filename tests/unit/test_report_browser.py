# SPDX-License-Identifier: MIT
"""The HTML report in a real browser: headless Chromium renders the tables and the figure.

The DOM Chromium builds (`--dump-dom`) must hold every table and the embedded image; its
screenshot must show the plot's colours, which a broken `data:` URI (a grey icon) would not.
Skipped, with how to get it, where Chromium is not installed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from pytest_hwcrypto.cli import main
from tests.browser import chromium, elements, needs_chromium

DATA = Path(__file__).parent.parent / "data"
pytestmark = needs_chromium
PLOT_BLUE = (0x1F, 0x77, 0xB4)  # the first line colour of report/plots.py


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of two real UML runs overlaid."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    files = [str(DATA / "board_uml_results_1.json"), str(DATA / "board_uml_results_2.json")]
    assert main(["report", *files, "--html", str(out)]) == 0
    return out


def test_rendered_dom_holds_every_table_and_the_figure(report: Path, tmp_path: Path) -> None:
    source = elements(report.read_text())
    rendered = elements(chromium(tmp_path / "profile", "--dump-dom", report.as_uri()).stdout)
    assert source.tables >= 7
    assert (rendered.tables, rendered.rows) == (source.tables, source.rows)
    assert len(rendered.images) == 1 and rendered.images[0].startswith("data:image/png;base64,")


def test_screenshot_shows_the_plot(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    chromium(
        tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600", report.as_uri()
    )
    pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).round()
    assert pixels.std() > 20, "the page rendered blank"
    near_blue = np.abs(pixels - np.array(PLOT_BLUE)).max(axis=-1) < 40
    assert near_blue.sum() > 500, "the plot's lines are not on the page"
