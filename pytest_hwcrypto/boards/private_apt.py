# SPDX-License-Identifier: MIT
"""Debian packages of another architecture, fetched without touching the host's APT or dpkg.

APT runs with every directory of its own under the cache (sources list, package lists,
archive cache, an empty dpkg status) and `APT::Architecture` set to the wanted
architecture: `apt-get download` then fetches arm64 or armhf packages while the host's
dpkg architectures, sources and package state stay as they were. Packages are unpacked
with `dpkg -x` (files only, no maintainer scripts).

The mirror is Debian's (`HWCRYPTO_DEBIAN_MIRROR` to use another one); the suite is
bookworm, the release the project's boards are built on.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pytest_hwcrypto.boards.base import BoardError

MIRROR_ENV = "HWCRYPTO_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
SUITE = "bookworm"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
# Package lists older than this are fetched again (a kernel ABI bump makes old ones point
# at files the mirror no longer has).
LISTS_MAX_AGE_SECONDS = 24 * 3600
APT_TIMEOUT_SECONDS = 900.0

Progress = Callable[[str], None]


class PrivateAptError(BoardError):
    """A package could not be fetched; the message says what to do."""


def mirror(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return env.get(MIRROR_ENV) or DEFAULT_MIRROR


def sources_list(arch: str, main_mirror: str, suites: Sequence[str] = ()) -> str:
    """bookworm with its updates and security, or the `suites` given (from main)."""
    signed = f"signed-by={KEYRING}"
    if suites:
        return "".join(f"deb [arch={arch} {signed}] {main_mirror} {s} main\n" for s in suites)
    return (
        f"deb [arch={arch} {signed}] {main_mirror} {SUITE} main\n"
        f"deb [arch={arch} {signed}] {main_mirror} {SUITE}-updates main\n"
        f"deb [arch={arch} {signed}] {SECURITY_MIRROR} {SUITE}-security main\n"
    )


@dataclass
class PrivateApt:
    """APT for one architecture, all of its state under `root`."""

    arch: str
    root: Path
    progress: Progress
    environ: Mapping[str, str] | None = None
    suites: tuple[str, ...] = ()  # others than bookworm's (trixie-backports for Linux 7.x)

    def options(self) -> list[str]:
        state = self.root
        return [
            "-o", f"APT::Architecture={self.arch}",
            "-o", f"APT::Architectures::={self.arch}",
            "-o", f"Dir::Etc::SourceList={state / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={state / 'sources.list.d'}",
            "-o", f"Dir::Etc::Parts={state / 'apt.conf.d'}",
            "-o", f"Dir::Etc::Preferences={state / 'preferences'}",
            "-o", f"Dir::Etc::PreferencesParts={state / 'preferences.d'}",
            "-o", f"Dir::State::Lists={state / 'lists'}",
            "-o", f"Dir::State::status={state / 'status'}",
            "-o", f"Dir::Cache={state / 'cache'}",
            # our own lock files live in our own directories; nobody else uses them
            "-o", "Debug::NoLocking=1",
            # downloads land in directories the _apt user may not write
            "-o", "APT::Sandbox::User=root",
        ]  # fmt: skip

    def _prepare(self) -> None:
        for sub in ("lists/partial", "cache/archives/partial", "sources.list.d", "apt.conf.d"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "preferences.d").mkdir(exist_ok=True)
        (self.root / "status").touch()
        (self.root / "sources.list").write_text(
            sources_list(self.arch, mirror(self.environ), self.suites)
        )

    def _run(self, tool: str, args: Sequence[str], cwd: Path | None = None) -> str:
        if not KEYRING.is_file():
            raise PrivateAptError(
                f"fetching Debian {self.arch} packages needs {KEYRING}: "
                "apt-get install debian-archive-keyring"
            )
        argv = [tool, *self.options(), *args]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                check=False,
                cwd=cwd,
                timeout=APT_TIMEOUT_SECONDS,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            )
        except FileNotFoundError:
            raise PrivateAptError(f"fetching Debian packages needs {tool} (apt)") from None
        except subprocess.TimeoutExpired:
            raise PrivateAptError(f"{tool} {' '.join(args)} did not finish in time") from None
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
            raise PrivateAptError(f"{tool} {' '.join(args)} ({self.arch}) failed:\n{tail}")
        return done.stdout

    def update(self, force: bool = False) -> None:
        """Fetch the package lists unless fresh ones are there."""
        self._prepare()
        stamp = self.root / "lists" / ".updated"
        fresh = stamp.is_file() and time.time() - stamp.stat().st_mtime < LISTS_MAX_AGE_SECONDS
        if fresh and not force:
            return
        suites = ", ".join(self.suites or (SUITE,))
        self.progress(
            f"fetching Debian {suites} {self.arch} package lists ({mirror(self.environ)})"
        )
        self._run("apt-get", ["update", "-q"])
        stamp.touch()

    def dependencies(self, package: str) -> list[str]:
        """The packages `package` depends on (a metapackage's one real package)."""
        self.update()
        out = self._run("apt-cache", ["depends", "--no-recommends", "--no-suggests", package])
        return [
            line.split(":", 1)[1].strip().strip("<>")
            for line in out.splitlines()
            if line.strip().startswith("Depends:")
        ]

    def version(self, package: str) -> str:
        """The candidate version of `package`."""
        self.update()
        out = self._run("apt-cache", ["policy", package])
        for line in out.splitlines():
            if line.strip().startswith("Candidate:"):
                found = line.split(":", 1)[1].strip()
                if found and found != "(none)":
                    return found
        suites = ", ".join(self.suites or (SUITE,))
        raise PrivateAptError(f"Debian {suites} has no {self.arch} package {package}")

    def available(self) -> str:
        """Every package stanza of the lists (`apt-cache dumpavail`)."""
        self.update()
        return self._run("apt-cache", ["dumpavail"])

    def download_closure(self, packages: Sequence[str], target: Path) -> list[Path]:
        """`packages` and everything they depend on (no recommends), resolved by APT as an
        install onto an empty system, downloaded as .deb files into `target`."""
        self.update()
        (target / "partial").mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        args = [
            "-o", f"Dir::Cache::archives={target}",
            "-o", f"Dir::State::extended_states={self.root / 'extended_states'}",
            "-o", "APT::Install-Recommends=false",
            "-y", "-q", "--download-only", "install", *packages,
        ]  # fmt: skip
        try:
            self._run("apt-get", args)
        except PrivateAptError:
            self.update(force=True)  # a package updated on the mirror since the lists
            self._run("apt-get", args)
        fetched = sorted(target.glob("*.deb"))
        size = sum(path.stat().st_size for path in fetched) / 1e6
        self.progress(
            f"downloaded {len(fetched)} {self.arch} packages ({size:.0f} MB, "
            f"{time.monotonic() - began:.1f} s)"
        )
        return fetched

    def download(self, packages: Sequence[str], target: Path) -> list[Path]:
        """Download `packages` (names, or name=version) as .deb files into `target`."""
        self.update()
        target.mkdir(parents=True, exist_ok=True)
        before = set(target.glob("*.deb"))
        began = time.monotonic()
        try:
            self._run("apt-get", ["download", "-q", *packages], cwd=target)
        except PrivateAptError:
            self.update(force=True)  # an ABI bump since the lists were fetched
            self._run("apt-get", ["download", "-q", *packages], cwd=target)
        fetched = sorted(set(target.glob("*.deb")) - before) or sorted(target.glob("*.deb"))
        size = sum(path.stat().st_size for path in fetched) / 1e6
        self.progress(
            f"downloaded {', '.join(packages)} ({size:.0f} MB, {time.monotonic() - began:.1f} s)"
        )
        return fetched


def unpack(debs: Sequence[Path], target: Path) -> None:
    """`dpkg -x` each package into `target` (its files only; no scripts run)."""
    target.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        done = subprocess.run(
            ["dpkg", "-x", str(deb), str(target)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise PrivateAptError(f"dpkg -x {deb.name} failed: {done.stderr.strip()}")
