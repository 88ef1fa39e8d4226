# SPDX-License-Identifier: MIT
"""The built wheel and sdist carry the license texts and say which licenses apply.

A distribution or a company lab takes a package only with its licenses: the MIT text for
the project and the GPL-2.0-only text for the test-only kernel module's sources, which the
wheel ships as data. .ci/installed passes what it built (HWCRYPTO_WHEEL, HWCRYPTO_SDIST);
without them the test builds both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LICENSE_TEXTS = ("LICENSE", "LICENSES/GPL-2.0-only.txt")
EXPRESSION = "MIT AND GPL-2.0-only"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    given = {kind: os.environ.get(f"HWCRYPTO_{kind.upper()}") for kind in ("wheel", "sdist")}
    if all(given.values()):
        return {kind: Path(path) for kind, path in given.items() if path}
    pytest.importorskip("build", reason="pip install build (the dev extra has it)")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return {"wheel": next(out.glob("*.whl")), "sdist": next(out.glob("*.tar.gz"))}


def test_the_wheel_carries_both_license_texts_and_the_expression(dist: dict[str, Path]) -> None:
    archive = zipfile.ZipFile(dist["wheel"])
    names = archive.namelist()
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    for text in LICENSE_TEXTS:
        assert f"{info}/licenses/{text}" in names, f"{dist['wheel'].name} lacks {text}"
    metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    assert metadata["License-Expression"] == EXPRESSION
    assert sorted(metadata.get_all("License-File") or []) == sorted(LICENSE_TEXTS)


def test_the_sdist_carries_both_license_texts(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert set(LICENSE_TEXTS) <= names, f"{dist['sdist'].name} lacks a license text"
