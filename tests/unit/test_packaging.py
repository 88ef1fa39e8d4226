# SPDX-License-Identifier: MIT
"""The package list in pyproject.toml against the source tree.

setuptools cannot discover packages here (suites/ is installed as pytest_hwcrypto.suites),
so the list is written by hand; a package left out of it installs nothing of that package
and the plugin dies at import (it happened: `pytest_hwcrypto.container`). The wheel itself
is checked against every tracked file by tests/packaging/ in .ci/run's wheel stage.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        tool: dict[str, object] = tomllib.load(file)["tool"]["setuptools"]
    return tool


def _packages_in(directory: Path, name: str) -> set[str]:
    """Every directory is a package to Python (with __init__.py or as a namespace), so every
    one must be listed, a directory of data like kmod/ too."""
    return {name} | {
        ".".join((name, *sub.relative_to(directory).parts))
        for sub in directory.rglob("*")
        if sub.is_dir() and "__pycache__" not in sub.parts
    }


def test_every_package_of_the_source_tree_is_listed() -> None:
    listed = set(_setuptools()["packages"])  # type: ignore[call-overload]
    in_tree = _packages_in(ROOT / "pytest_hwcrypto", "pytest_hwcrypto")
    in_tree |= _packages_in(ROOT / "suites", "pytest_hwcrypto.suites")
    assert in_tree - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - in_tree == set(), "listed packages with no directory in the tree"


def test_every_non_python_file_of_the_package_is_package_data() -> None:
    """Schemas, board scripts, the C shim and the test drivers' source: each must match a
    package-data pattern of its package, or the wheel lacks it."""
    data: dict[str, list[str]] = _setuptools()["package-data"]  # type: ignore[assignment]
    package_root = ROOT / "pytest_hwcrypto"
    packages = _packages_in(package_root, "pytest_hwcrypto")
    missing = []
    for path in package_root.rglob("*"):
        if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        # the nearest package above the file, and the file's path relative to it
        parts = path.relative_to(ROOT).parts[:-1]
        while ".".join(parts) not in packages:
            parts = parts[:-1]
        package = ".".join(parts)
        relative = path.relative_to(ROOT.joinpath(*parts))
        if not any(relative.match(pattern) for pattern in data.get(package, [])):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == [], "add to [tool.setuptools.package-data]"
