# SPDX-License-Identifier: MIT
"""The one build path for out-of-tree kernel modules a board loads (cryptodev-linux first).

A module is built on the host, before boot, for exactly the kernel the board boots: its
`linux-headers-<release>` (installed with apt-get when missing and we are root), the
unmodified source from the third-party directory unpacked into a temporary directory,
`make` run there, and the `.ko` checked (its vermagic must name the release) and kept in
the user's cache directory, keyed by kernel release and source hash, so the next board of
the same kernel starts without building. Each step prints one progress line.

Where the third-party sources are: `--hwcrypto-third-party` / `$HWCRYPTO_THIRD_PARTY`,
else, in a source checkout only, `<repository>/../shared/third_party/` (or beside the local
checkout this one was cloned from); an installed package has no default and says so. They
are third-party code (cryptodev-linux is GPL-2.0): never copied into this project, and
neither is a built module. The project's own test drivers are package data
(`pytest_hwcrypto/kmod`), found wherever the package is installed.

A built module is unsigned and tied to its kernel's ABI: another release needs another
build, which the cache key takes care of.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest_hwcrypto
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.helpers import cache_dir

THIRD_PARTY_ENV = "HWCRYPTO_THIRD_PARTY"
HEADERS_ROOT = Path("/usr/src")
MAKE_TIMEOUT_SECONDS = 600.0
APT_TIMEOUT_SECONDS = 600.0
# Another apt-get (a concurrent setup, unattended-upgrades) may hold dpkg's lock a while.
APT_LOCK_WAIT_SECONDS = 120
OUTPUT_TAIL_LINES = 15

Progress = Callable[[str], None]
Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class KmodBuildError(BoardError):
    """A module could not be built for the board's kernel; the message says what to do."""


@dataclass(frozen=True)
class ModuleSource:
    """An out-of-tree module: where its source is, what its build makes, how to make it.

    `pattern` is a glob in the third-party directory (a tarball or a source directory);
    `make_args` may use {kernel_dir} (the headers) and {source_dir} (the unpacked tree).
    """

    name: str
    pattern: str
    module: str  # the file the build produces, relative to the source tree
    make_args: tuple[str, ...] = ("KERNEL_DIR={kernel_dir}",)
    # Where `pattern` is looked up: None = the third-party directory; set for the project's
    # own module, which lives in this repository.
    source_dir: Path | None = None


# cryptodev-linux's Makefile takes the kernel build directory as KERNEL_DIR.
CRYPTODEV = ModuleSource("cryptodev", "cryptodev-linux-*.tar.gz", "cryptodev.ko")

# The project's own test-only drivers (pytest_hwcrypto/kmod, GPL-2.0), wrong or slow on
# purpose. Their source is package data, so an installed wheel builds them as a checkout
# does; the Makefile takes KERNEL_DIR like cryptodev-linux's.
PACKAGE = Path(pytest_hwcrypto.__file__).resolve().parent
TEST_DRIVERS = ModuleSource("hwcrypto_test", "kmod", "hwcrypto_test.ko", source_dir=PACKAGE)


def source_dir_of(spec: ModuleSource, environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the source of `spec` is looked up (its own directory, else the third-party one;
    None when no third-party directory is known)."""
    return spec.source_dir if spec.source_dir is not None else third_party_dir(environ)


def third_party_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """$HWCRYPTO_THIRD_PARTY (which --hwcrypto-third-party sets), else, when this package
    runs from a source checkout, shared/third_party beside it -- or, for a clone of a local
    checkout (`git clone /work/main /tmp/x`, how a fresh-clone CI run is tried), beside the
    checkout it was cloned from: the first that exists, else the one beside this checkout,
    which the error message then names. An installed package has no default: None."""
    env = os.environ if environ is None else environ
    if env.get(THIRD_PARTY_ENV):
        return Path(env[THIRD_PARTY_ENV])
    repository = Path(pytest_hwcrypto.__file__).resolve().parent.parent
    if not (repository / "pyproject.toml").is_file():
        return None  # site-packages: nothing beside it is ours
    candidates = [repository.parent / "shared" / "third_party"]
    origin = _local_origin(repository)
    if origin is not None:
        candidates.append(origin.parent / "shared" / "third_party")
    return next((path for path in candidates if path.is_dir()), candidates[0])


def _local_origin(repository: Path) -> Path | None:
    """The directory `origin` points at, when this checkout was cloned from a local one."""
    try:
        config = (repository / ".git" / "config").read_text()
    except OSError:
        return None
    section = ""
    for line in config.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
        elif section == '[remote "origin"]' and stripped.startswith("url"):
            url = stripped.split("=", 1)[1].strip()
            path = Path(url.removeprefix("file://"))
            return path.resolve() if path.is_absolute() and path.is_dir() else None
    return None


NO_THIRD_PARTY_DIR = (
    "building {name} needs its source ({pattern}), and no directory holding it was given: "
    "point --hwcrypto-third-party (or HWCRYPTO_THIRD_PARTY; `hwcrypto vm --third-party`) "
    "at the directory that holds it"
)


def find_source(spec: ModuleSource, directory: Path | None) -> Path:
    if directory is None:
        raise KmodBuildError(NO_THIRD_PARTY_DIR.format(name=spec.name, pattern=spec.pattern))
    found = sorted(directory.glob(spec.pattern))
    if not found and spec.source_dir is not None:
        raise KmodBuildError(
            f"building {spec.name} needs {directory / spec.pattern}, which is part of the "
            "pytest-hwcrypto package: this installation is incomplete (reinstall it)"
        )
    if not found:
        raise KmodBuildError(
            f"building {spec.name} needs its source {spec.pattern} in {directory}, which has "
            f"none: point --hwcrypto-third-party (or {THIRD_PARTY_ENV}; `hwcrypto vm "
            "--third-party`) at the directory that holds it"
        )
    if len(found) > 1:
        names = ", ".join(path.name for path in found)
        raise KmodBuildError(
            f"{directory} holds several {spec.pattern} ({names}): keep one, or point "
            f"--hwcrypto-third-party ({THIRD_PARTY_ENV}) at a directory with exactly one"
        )
    return found[0]


def source_digest(path: Path) -> str:
    """sha256 of a tarball, or of a source directory's file names and contents."""
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(path.read_bytes())
        return digest.hexdigest()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def headers_package(release: str) -> str:
    return f"linux-headers-{release}"


def kernel_build_tree(modules_dir: Path) -> Path | None:
    """The tree a custom kernel was built in, from its modules directory's `build` link
    (which `make modules_install` leaves), when that tree is there and built (it has the
    Module.symvers an out-of-tree module links against); else None.

    A kernel a developer built has no headers package: its own tree is what a module is
    built against. A Debian kernel unpacked from its .deb also has the link, to headers
    that are usually not installed; None then, and the headers package is the way.
    """
    tree = modules_dir / "build"
    if (tree / "Makefile").is_file() and (tree / "Module.symvers").is_file():
        return tree.resolve()
    return None


def tree_digest(kernel_dir: Path) -> str:
    """What an out-of-tree module's build depends on in a kernel tree: its configuration
    and exported symbols. A custom kernel rebuilt under the same release string with
    another config gets another cache entry, not a module built for the old one."""
    digest = hashlib.sha256()
    for name in (".config", "Module.symvers"):
        try:
            digest.update(name.encode() + b"\0" + (kernel_dir / name).read_bytes() + b"\0")
        except OSError:
            digest.update(name.encode() + b"\0missing\0")
    return digest.hexdigest()


def cached_module(spec: ModuleSource, release: str, digest: str, cache: Path) -> Path:
    """Where the build of `spec` for `release` from source `digest` is kept."""
    return cache / "kmod" / f"{spec.name}-{release}-{digest[:16]}" / Path(spec.module).name


def vermagic(module: bytes) -> str | None:
    """The `vermagic=` string of a .ko's .modinfo ("6.1.0-57-amd64 SMP preempt mod_unload")."""
    marker = module.find(b"vermagic=")
    if marker < 0:
        return None
    end = module.find(b"\0", marker)
    return module[marker + len("vermagic=") : end if end >= 0 else None].decode("ascii", "replace")


def tail(text: str, lines: int = OUTPUT_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class KmodBuilder:
    """Builds (or finds in the cache) one module for one kernel release."""

    spec: ModuleSource
    release: str
    progress: Progress
    environ: Mapping[str, str] | None = None
    cache: Path | None = None
    runner: Runner = subprocess.run
    euid: int | None = None
    headers_root: Path = HEADERS_ROOT
    # A cross build (the ARM boards): headers fetched for that architecture, and the
    # make variables that choose it (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-).
    kernel_dir: Path | None = None
    make_vars: tuple[str, ...] = ()
    # A custom kernel's own build tree (kernel_build_tree): its tree_digest joins the
    # cache key, since its release string alone does not say what was built.
    own_tree: bool = False

    def _say(self, what: str) -> None:
        self.progress(f"{self.spec.name} for {self.release}: {what}")

    def build(self) -> Path:
        """The cached .ko for this release, built first when there is none."""
        source = find_source(self.spec, source_dir_of(self.spec, self.environ))
        digest = source_digest(source)
        key = digest
        if self.own_tree and self.kernel_dir is not None:
            key = hashlib.sha256((digest + tree_digest(self.kernel_dir)).encode()).hexdigest()
        target = cached_module(self.spec, self.release, key, self.cache or cache_dir())
        if target.is_file():
            self._say(f"cached build {target} (source {source.name}, sha256 {digest[:12]})")
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with _locked(target.parent.parent / ".lock"):
            if target.is_file():  # built by a concurrent board meanwhile
                self._say(f"cached build {target}, made by another run meanwhile")
                return target
            kernel_dir = self.kernel_dir or self.ensure_headers()
            if self.own_tree:
                self._say(f"against the kernel's own build tree {kernel_dir}")
            with tempfile.TemporaryDirectory(prefix=f"hwcrypto-kmod-{self.spec.name}-") as work:
                tree = self.unpack(source, digest, Path(work))
                built = self.make(tree, kernel_dir)
                _install(built, target)
        self._say(f"cached as {target}")
        return target

    def ensure_headers(self) -> Path:
        """The kernel build directory of the release, installing its headers if needed."""
        kernel_dir = self.headers_root / headers_package(self.release)
        package = headers_package(self.release)
        if (kernel_dir / "Makefile").is_file():
            self._say(f"headers in {kernel_dir}")
            return kernel_dir
        euid = os.geteuid() if self.euid is None else self.euid
        if euid != 0:
            raise KmodBuildError(
                f"building {self.spec.name} for {self.release} needs {package}, which is not "
                f"installed, and only root can install it: sudo apt-get install {package}"
            )
        if shutil.which("apt-get") is None:
            raise KmodBuildError(
                f"building {self.spec.name} needs the headers of {self.release} in "
                f"{kernel_dir} ({package} on Debian), and there is no apt-get here"
            )
        self._say(f"installing {package} (apt-get)")
        began = time.monotonic()
        done = self._apt(["install", "-y", "-q", "--no-install-recommends", package])
        if done.returncode != 0:
            # An old package list may not know the package yet.
            self._apt(["update", "-q"])
            done = self._apt(["install", "-y", "-q", "--no-install-recommends", package])
        if done.returncode != 0 or not (kernel_dir / "Makefile").is_file():
            raise KmodBuildError(
                f"apt-get install {package} failed (a kernel Debian does not package has no "
                f"headers there):\n{tail(done.stdout + done.stderr)}"
            )
        self._say(f"installed {package} in {time.monotonic() - began:.1f} s")
        return kernel_dir

    def _apt(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        argv = ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_SECONDS}", *args]
        environ = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        return self._run(argv, env=environ, timeout=APT_TIMEOUT_SECONDS)

    def _run(self, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        try:
            return self.runner(argv, capture_output=True, text=True, check=False, **options)
        except FileNotFoundError:
            raise KmodBuildError(
                f"building {self.spec.name} needs {argv[0]}: apt-get install {argv[0]}"
            ) from None
        except subprocess.TimeoutExpired:
            raise KmodBuildError(f"{' '.join(argv)} did not finish in time") from None

    def unpack(self, source: Path, digest: str, work: Path) -> Path:
        """The source tree in `work`: the tarball extracted (safely), or the directory copied."""
        self._say(f"unpacking {source.name} (sha256 {digest[:12]})")
        if source.is_dir():
            tree = work / source.name
            shutil.copytree(source, tree)
            return tree
        with tarfile.open(source) as archive:
            _extract(archive, work)
        entries = [entry for entry in work.iterdir() if entry.is_dir()]
        return entries[0] if len(entries) == 1 and not (work / "Makefile").exists() else work

    def make(self, tree: Path, kernel_dir: Path) -> Path:
        values = {"kernel_dir": str(kernel_dir), "source_dir": str(tree)}
        args = [arg.format(**values) for arg in self.spec.make_args] + list(self.make_vars)
        jobs = str(os.cpu_count() or 1)
        self._say(f"building: make {' '.join(args)}")
        began = time.monotonic()
        done = self._run(["make", "-j", jobs, *args], cwd=tree, timeout=MAKE_TIMEOUT_SECONDS)
        built = tree / self.spec.module
        if done.returncode != 0 or not built.is_file():
            raise KmodBuildError(
                f"building {self.spec.name} for {self.release} failed (make exit "
                f"{done.returncode}):\n{tail(done.stdout + done.stderr)}"
            )
        magic = vermagic(built.read_bytes())
        if magic is None or magic.split()[0] != self.release:
            raise KmodBuildError(
                f"{built.name} was built for {magic or 'an unknown kernel'}, not "
                f"{self.release}: {kernel_dir} holds another kernel's headers"
            )
        self._say(f"built {built.name} in {time.monotonic() - began:.1f} s")
        return built


def build_module(spec: ModuleSource, release: str, progress: Progress, **options: Any) -> Path:
    """The module `spec` built for kernel `release` (cached); KmodBuildError says why not."""
    return KmodBuilder(spec, release, progress, **options).build()


def _extract(archive: tarfile.TarFile, work: Path) -> None:
    """Extract refusing members that would land outside `work` (absolute, .., odd links)."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(work, filter="data")
        return
    root = work.resolve()  # pragma: no cover - Pythons without extraction filters
    for member in archive.getmembers():
        where = (root / member.name).resolve()
        if root not in (where, *where.parents) or member.isdev() or member.issym():
            raise KmodBuildError(f"refusing to unpack {member.name}: it points outside")
    archive.extractall(work)


def _install(built: Path, target: Path) -> None:
    """Copy into the cache atomically: a concurrent reader sees no file or a whole one."""
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.copyfile(built, partial)
    os.replace(partial, target)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One build per cache at a time: a second board waits, then finds the first's build."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
