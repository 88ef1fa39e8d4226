# SPDX-License-Identifier: MIT
"""Build af_alg.ko with refuse-off-cpu.patch for a Debian kernel release (see README.md).

    .venv/bin/python tests/data/masked_afalg/build.py [RELEASE]   # default 6.1.0-57-amd64

Takes crypto/af_alg.c from Debian's linux-source-<major.minor> (/usr/src/linux-source-
<major.minor>.tar.xz), which must be the same package version as the release's headers (an
af_alg.c of another version may not match the headers' structures), applies the patch,
and builds it with the project's module build path (boards/kmod_build.py: headers
installed when missing, vermagic checked, the .ko cached by release and source hash).
Prints the .ko's path last; tests/board/test_masked_afalg.py finds it in that cache.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from pytest_hwcrypto.boards import kmod_build
from pytest_hwcrypto.boards.helpers import cache_dir

HERE = Path(__file__).resolve().parent
PATCH = HERE / "refuse-off-cpu.patch"
NAME = "af_alg-offcpu-masked"  # the cache directory's prefix, which the board test globs
DEFAULT_RELEASE = "6.1.0-57-amd64"


class BuildError(Exception):
    """One line saying what is missing and how to get it."""


def package_version(package: str) -> str | None:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Status} ${Version}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and "installed" in words else None


def source_package(release: str) -> str:
    """linux-source-6.1 for 6.1.0-57-amd64."""
    major_minor = ".".join(release.split(".")[:2]).split("-")[0]
    return f"linux-source-{major_minor}"


def checked_versions(release: str) -> tuple[str, Path]:
    """The source package and its tarball, after checking it matches the headers' version."""
    package = source_package(release)
    source_version = package_version(package)
    headers_version = package_version(kmod_build.headers_package(release))
    if source_version is None:
        raise BuildError(f"{package} is not installed: apt-get install {package}")
    if headers_version is None:
        headers = kmod_build.headers_package(release)
        raise BuildError(f"{headers} is not installed: apt-get install {headers}")
    if source_version != headers_version:
        raise BuildError(
            f"{package} is {source_version} but the headers of {release} are "
            f"{headers_version}: install the matching pair (apt-get install {package}="
            f"{headers_version})"
        )
    tarball = Path("/usr/src") / f"{package}.tar.xz"
    if not tarball.is_file():
        raise BuildError(f"{tarball} is missing although {package} is installed: reinstall it")
    return package, tarball


def prepared_source(tarball: Path, package: str, work: Path) -> Path:
    """A directory with the patched af_alg.c and the Makefile (the module's source tree)."""
    member = f"{package}/crypto/af_alg.c"
    with tarfile.open(tarball) as archive:
        extracted = archive.extractfile(member)
        if extracted is None:
            raise BuildError(f"{tarball} has no {member}")
        original = extracted.read()
    tree = work / "tree"
    (tree / "crypto").mkdir(parents=True)
    (tree / "crypto" / "af_alg.c").write_bytes(original)
    applied = subprocess.run(
        ["patch", "-p1", "--forward", "-i", str(PATCH)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if applied.returncode != 0:
        raise BuildError(f"{PATCH.name} does not apply to {member}: {applied.stdout.strip()}")
    module = work / NAME
    module.mkdir()
    shutil.copy(tree / "crypto" / "af_alg.c", module / "af_alg.c")
    shutil.copy(HERE / "Makefile", module / "Makefile")
    return work


def build(release: str) -> Path:
    package, tarball = checked_versions(release)
    with tempfile.TemporaryDirectory(prefix="hwcrypto-masked-afalg-") as work:
        source_dir = prepared_source(tarball, package, Path(work))
        spec = kmod_build.ModuleSource(NAME, NAME, "af_alg.ko", source_dir=source_dir)
        return kmod_build.build_module(spec, release, print, cache=cache_dir())


def main(argv: list[str]) -> int:
    release = argv[1] if len(argv) > 1 else DEFAULT_RELEASE
    try:
        print(build(release))
    except (BuildError, kmod_build.KmodBuildError) as error:
        print(f"masked af_alg for {release}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
