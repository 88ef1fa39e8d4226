# SPDX-License-Identifier: MIT
"""The built wheel against the source tree: every file git tracks under pytest_hwcrypto/
and suites/ must be in it (suites/ as pytest_hwcrypto/suites/), or a user's install lacks it.

An editable install reads the checkout and cannot see a missing package or data file; this
test looks into the wheel itself. .ci/run's wheel stage passes the wheel it built and then
installs (HWCRYPTO_WHEEL); without it the test builds one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEEL_ENV = "HWCRYPTO_WHEEL"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get(WHEEL_ENV)
    if given:
        return Path(given)
    pytest.importorskip("build", reason="pip install build (the dev extra has it)")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return next(out.glob("*.whl"))


def _tracked(under: str) -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know which files are tracked")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--", under],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [name for name in listed if (ROOT / name).is_file()]


def test_every_tracked_file_of_the_package_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = _tracked("pytest_hwcrypto") + [
        "pytest_hwcrypto/suites/" + name.removeprefix("suites/") for name in _tracked("suites")
    ]
    assert expected, "nothing tracked: wrong checkout?"
    missing = sorted(name for name in expected if name not in names)
    assert missing == [], f"{wheel.name} lacks files users need"


def test_the_wheel_carries_the_entry_points_users_call(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
    text = archive.read(entry_points).decode()
    assert "hwcrypto = pytest_hwcrypto.plugin" in text  # pytest11: `pytest --hwcrypto`
    assert "hwcrypto = pytest_hwcrypto.cli:main" in text  # the `hwcrypto` command
