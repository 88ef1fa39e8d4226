# SPDX-License-Identifier: MIT
"""docs/architecture.md names every module of the package, so a newcomer finds each one
there: by its path under pytest_hwcrypto/ (`kernel/procfs.py`), a top-level module or a
package by its name in backticks (`settings`, `ab/`), or a module by its name in
backticks on a page that names its package (`sessions` beside kernel/afalg/)."""

from __future__ import annotations

from pathlib import Path

import pytest_hwcrypto

PACKAGE = Path(pytest_hwcrypto.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


def _ways_to_name(module: Path) -> list[str]:
    relative = module.relative_to(PACKAGE)
    if relative.name == "__init__.py":
        package = relative.parent.as_posix()
        return [f"`{package}/`", f"{package}/__init__.py", f"`{package}`"]
    ways = [relative.as_posix(), f"`{relative.stem}`"]
    if len(relative.parts) > 1:
        ways.append(f"`{relative.stem}.py`")
    return ways


def _package_named(module: Path, text: str) -> bool:
    package = module.relative_to(PACKAGE).parent.as_posix()
    return package == "." or f"{package}/" in text or f"`{package}`" in text


def unnamed_modules(text: str) -> list[str]:
    return sorted(
        module.relative_to(PACKAGE).as_posix()
        for module in PACKAGE.rglob("*.py")
        if module.relative_to(PACKAGE).as_posix() != "__init__.py"
        and not (_package_named(module, text) and any(way in text for way in _ways_to_name(module)))
    )


def test_every_module_is_named_in_the_architecture_page() -> None:
    assert unnamed_modules(DOC.read_text()) == []


def test_a_module_left_out_is_reported() -> None:
    text = DOC.read_text().replace("kernel/procfs.py", "kernel/PROCFS")
    assert "kernel/procfs.py" in unnamed_modules(text)
