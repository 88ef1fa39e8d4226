# SPDX-License-Identifier: MIT
"""`hwcrypto report` where matplotlib is not installed (a board with only the base install):
one line naming the extra to install, no traceback. The Debian-packages stage of .ci/run
shows the same on an interpreter that really lacks it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import main

QEMU = str(Path(__file__).parent.parent / "data" / "board_qemu_results.json")


def test_report_names_the_extra_when_matplotlib_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # None in sys.modules makes `import matplotlib` raise ImportError(name="matplotlib")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.delitem(sys.modules, "pytest_hwcrypto.report.plots", raising=False)
    html = tmp_path / "report.html"
    assert main(["report", QEMU, "--html", str(html)]) == 2
    error = capsys.readouterr().err.strip()
    assert "pytest-hwcrypto[report]" in error and "python3-matplotlib" in error
    assert "\n" not in error and "Traceback" not in error
    assert not html.exists()
