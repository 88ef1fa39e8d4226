# SPDX-License-Identifier: MIT
"""Every file of the repository says which license applies to it.

A distribution or a lab takes files one by one: each names its license in an
SPDX-License-Identifier line near its top, or, when it cannot hold one (Markdown, data,
recorded tool output, a kernel patch), REUSE.toml names it. The license texts themselves
(LICENSE, LICENSES/) are the exception, as in the REUSE specification.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
KNOWN = {"MIT", "GPL-2.0-only"}
SPDX = re.compile(r"SPDX-License-Identifier: (\S+)")
HEAD_LINES = 5


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know which files are tracked")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files"], check=True, capture_output=True, text=True
    ).stdout.split()
    return [name for name in listed if (ROOT / name).is_file()]


def _glob_regex(glob: str) -> re.Pattern[str]:
    """REUSE's globs: `**` crosses directories, `*` does not."""
    parts = re.split(r"(\*\*/|\*\*|\*)", glob)
    mapping = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*"}
    return re.compile("".join(mapping.get(p, re.escape(p)) for p in parts) + r"\Z")


def _annotated() -> list[tuple[re.Pattern[str], str]]:
    reuse = tomllib.loads((ROOT / "REUSE.toml").read_text())
    return [
        (_glob_regex(path), entry["SPDX-License-Identifier"])
        for entry in reuse["annotations"]
        for path in entry["path"]
    ]


def _license_of(name: str, annotations: list[tuple[re.Pattern[str], str]]) -> str | None:
    try:
        head = "\n".join((ROOT / name).read_text().splitlines()[:HEAD_LINES])
    except UnicodeDecodeError:
        head = ""
    found = SPDX.search(head)
    if found:
        return found.group(1)
    matched = [license_id for pattern, license_id in annotations if pattern.match(name)]
    return matched[-1] if matched else None


def test_every_tracked_file_names_a_known_license() -> None:
    annotations = _annotated()
    texts = [n for n in _tracked() if n != "LICENSE" and not n.startswith("LICENSES/")]
    licenses = {name: _license_of(name, annotations) for name in texts}
    unnamed = sorted(name for name, license_id in licenses.items() if license_id is None)
    assert unnamed == [], "files with no SPDX line and no REUSE.toml entry"
    unknown = sorted(f"{n}: {lic}" for n, lic in licenses.items() if lic not in KNOWN)
    assert unknown == []


def test_the_kernel_module_sources_are_gpl_and_the_python_code_mit() -> None:
    annotations = _annotated()
    assert _license_of("pytest_hwcrypto/kmod/hwcrypto_test.c", annotations) == "GPL-2.0-only"
    assert _license_of("pytest_hwcrypto/kmod/Makefile", annotations) == "GPL-2.0-only"
    assert _license_of("pytest_hwcrypto/plugin.py", annotations) == "MIT"
    assert _license_of("README.md", annotations) == "MIT"
