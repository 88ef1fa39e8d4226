# SPDX-License-Identifier: MIT
"""The ARM boards' base system (Debian 12 for arm64 or armhf), built on the host: no
maintainer script runs, so nothing is emulated but one static `ldconfig`.

debootstrap's second stage runs every package's maintainer scripts (and dpkg itself)
through qemu-user, which takes minutes to an hour an architecture (benchmarks/arm-boards.md
compares the two). Here instead:
1. APT (the private configuration of boards/private_apt.py) resolves the Essential:yes set
   plus `BASE_PACKAGES` as an install onto an empty system and downloads the .deb files;
2. each package's files are extracted (`dpkg-deb --fsys-tarfile | tar`, numeric owners)
   into a merged-/usr tree, without documentation, manual pages or translations;
3. what the maintainer scripts would leave behind that the board uses is written by the
   host (`configure`): /etc/passwd and /etc/group from base-passwd's masters (and locked
   shadow files), base-files' directories and links, every `update-alternatives
   --install` link a postinst names literally (awk, which, pager, rmt), python3's and
   python3.11's /etc and /usr/local directories, dpkg's status database;
4. the dynamic loader's cache: the guest's own `ldconfig` (static) run once through
   qemu-user with `-r TREE` (the host's ldconfig refuses foreign ELF files);
5. Python's bytecode, which Debian's postinsts (py3compile) write: the host's Python of
   the same minor version compiles the tree's .py files with their guest paths (bytecode
   does not depend on the CPU); another host Python leaves it to the guest's Python
   under emulation.

The maintainer scripts' service and systemd parts are left out on purpose: the board runs
its command as PID 1 (boards/qemu_arm.py), no init system starts anything.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.boards.arm_arch import ArmArch
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.private_apt import SUITE, PrivateApt

Progress = Callable[[str], None]
Emulate = Callable[[Path, str], None]  # (tree, shell command) run inside the tree

# What the suites run inside: Debian 12's Python stack (README: installing on a board), the
# tools the suites drive, and busybox-static (the initramfs's shell, LXC containers' rootfs).
BASE_PACKAGES = (
    "python3",
    "python3-venv",
    "python3-pytest",
    "python3-pytest-benchmark",
    "python3-pytest-xdist",
    "python3-pexpect",
    "python3-cryptography",
    "python3-cryptography-vectors",
    "cryptsetup-bin",
    "dmsetup",
    "openssl",
    "rng-tools5",  # rngtest, for the rng suite
    "lxc",
    "fio",
    "kcapi-tools",
    "busybox-static",
    "kmod",
    "procps",
    "iproute2",
    # Priority: required, not Essential (debootstrap's minbase brought it): the guest script
    # mounts 9p, tmpfs and devpts with it, and the dm-crypt suites attach loop devices
    "mount",
    # init-system-helpers depends on "usrmerge | usr-is-merged": name the small one, or
    # APT picks usrmerge and with it perl (~50 MB) -- the tree is merged from the start
    "usr-is-merged",
)
# Bumped when the recipe changes in a way the package list does not show.
RECIPE_VERSION = "2-host-extract"
# Left out of the tree: nothing on the board reads them (dpkg's path-exclude would do the
# same on an installed system); /usr/share/doc keeps each package's copyright file.
TRIMMED_DIRS = ("usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/doc")
KEPT_DOC_FILE = "copyright"
MERGED_USR = ("bin", "sbin", "lib")


def base_key(arch: ArmArch) -> str:
    text = "\n".join((arch.debian_arch, SUITE, RECIPE_VERSION, *sorted(BASE_PACKAGES)))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def base_tree(arch: ArmArch, cache: Path) -> Path:
    return cache / "arm" / arch.debian_arch / f"base-{base_key(arch)}"


# -- pure: what the package lists and maintainer scripts say --------------------------------


def stanzas(text: str) -> list[dict[str, str]]:
    """Debian control stanzas (Packages lists, dpkg-deb control): field -> value, the
    continuation lines kept in the value."""
    found: list[dict[str, str]] = []
    current: dict[str, str] = {}
    field = ""
    for line in text.splitlines():
        if not line.strip():
            if current:
                found.append(current)
            current, field = {}, ""
        elif line[0] in " \t" and field:
            current[field] += "\n" + line
        elif ":" in line:
            field, _, value = line.partition(":")
            current[field] = value.strip()
    if current:
        found.append(current)
    return found


def essential_packages(available: str) -> list[str]:
    """The names of the Essential: yes packages in `apt-cache dumpavail` output."""
    names = {s["Package"] for s in stanzas(available) if s.get("Essential") == "yes"}
    return sorted(names)


@dataclass(frozen=True)
class Alternative:
    link: str  # /usr/bin/awk
    name: str  # awk: /etc/alternatives/<name>
    path: str  # /usr/bin/mawk
    priority: int


_ALTERNATIVE = re.compile(
    r"update-alternatives\s+--install\s+(\S+)\s+(\S+)\s+(\S+)\s+(-?\d+)"
)  # fmt: skip


def literal_alternatives(script: str) -> list[Alternative]:
    """The `update-alternatives --install LINK NAME PATH PRIORITY` calls of a maintainer
    script whose arguments are written out (a `$variable` one is left out)."""
    found = []
    for link, name, path, priority in _ALTERNATIVE.findall(script.replace("\\\n", " ")):
        if "$" in link + name + path:
            continue
        found.append(Alternative(link, name, path, int(priority)))
    return found


def chosen_alternatives(
    alternatives: Iterable[Alternative], exists: Callable[[str], bool]
) -> dict[str, Alternative]:
    """update-alternatives' automatic mode: per name, the highest priority whose path
    exists."""
    chosen: dict[str, Alternative] = {}
    for alternative in alternatives:
        if not exists(alternative.path):
            continue
        best = chosen.get(alternative.name)
        if best is None or alternative.priority > best.priority:
            chosen[alternative.name] = alternative
    return chosen


def shadowed(table: str, fields: int) -> tuple[str, str]:
    """pwconv/grpconv on base-passwd's master file: (the table with `x` for each password,
    its shadow file with the password -- `*`, locked, in the masters); `fields` is the
    shadow entry's field count after name and password (7 for shadow, 2 for gshadow)."""
    public, shadow = [], []
    for line in table.splitlines():
        if not line.strip():
            continue
        name, password, rest = [*line.split(":", 2), "", ""][:3]
        public.append(f"{name}:x:{rest}\n")
        extra = ["19000", "0", "99999", "7", "", "", ""] if fields == 7 else ["", ""]
        shadow.append(":".join([name, password or "*", *extra]) + "\n")
    return "".join(public), "".join(shadow)


def dpkg_status(controls: Iterable[str]) -> str:
    """dpkg's status database for packages unpacked and configured: each control file
    with `Status: install ok installed` after its Package field, sorted by name."""
    entries = []
    for control in controls:
        lines = control.strip().splitlines()
        if not lines or not lines[0].startswith("Package:"):
            raise BoardError(f"a package control file starts with {lines[:1]}, not Package:")
        entries.append((lines[0], [lines[0], "Status: install ok installed", *lines[1:]]))
    return "".join("\n".join(lines) + "\n\n" for _, lines in sorted(entries))


def python_minor(packages: Iterable[str]) -> tuple[int, int] | None:
    """The guest's Python version from its package names (libpython3.11-minimal)."""
    for package in packages:
        found = re.fullmatch(r"libpython(\d+)\.(\d+)-minimal", package)
        if found:
            return int(found.group(1)), int(found.group(2))
    return None


# -- building -------------------------------------------------------------------------------


def check_prerequisites() -> list[tuple[str, str]]:
    """The host programs the base build runs, with their Debian packages."""
    return [("apt-get", "apt"), ("dpkg-deb", "dpkg"), ("tar", "tar")]


def build_base_tree(
    arch: ArmArch, apt: PrivateApt, tree: Path, emulate: Emulate, progress: Progress
) -> None:
    """Build the base system into `tree` (a new directory)."""
    began = time.monotonic()
    essential = essential_packages(apt.available())
    debs_dir = tree.with_name(tree.name + ".debs")
    shutil.rmtree(debs_dir, ignore_errors=True)
    progress(
        f"{arch.board}: resolving and downloading Debian {SUITE} {arch.debian_arch}: "
        f"{len(essential)} Essential packages + {len(BASE_PACKAGES)} named ones and their "
        "dependencies"
    )
    debs = apt.download_closure([*essential, *BASE_PACKAGES], debs_dir)
    downloaded = time.monotonic()
    controls = extract(debs, tree, progress, arch.board)
    shutil.rmtree(debs_dir, ignore_errors=True)
    extracted = time.monotonic()
    configure(tree, controls)
    run_ldconfig(arch, tree)
    configured = time.monotonic()
    packages = [stanzas(control)[0]["Package"] for control, _ in controls]
    compiled = compile_python(tree, python_minor(packages), emulate, progress, arch.board)
    progress(
        f"{arch.board}: base system of {len(debs)} packages in "
        f"{time.monotonic() - began:.0f} s (download {downloaded - began:.0f} s, extract "
        f"{extracted - downloaded:.0f} s, configure + ldconfig "
        f"{configured - extracted:.1f} s, {compiled} .py compiled "
        f"{time.monotonic() - configured:.0f} s)"
    )


def extract(
    debs: Sequence[Path], tree: Path, progress: Progress, board: str
) -> list[tuple[str, str]]:
    """Every package's files into `tree`; (control, postinst) text of each."""
    tree.mkdir(parents=True, exist_ok=True)
    for directory in MERGED_USR:
        (tree / "usr" / directory).mkdir(parents=True, exist_ok=True)
        (tree / directory).symlink_to(f"usr/{directory}")
    excluded = [f"--exclude=./{path}/*" for path in TRIMMED_DIRS if path != "usr/share/doc"]
    controls = []
    last_said = time.monotonic()
    with_scripts = tree.with_name(tree.name + ".control")
    for count, deb in enumerate(debs, 1):
        unpack = subprocess.run(
            f"dpkg-deb --fsys-tarfile {_quote(deb)} | tar -x --keep-directory-symlink "
            f"--numeric-owner --wildcards {' '.join(excluded)} -C {_quote(tree)}",
            shell=True,
            capture_output=True,
            text=True,
            check=False,
        )
        if unpack.returncode != 0:
            raise BoardError(f"unpacking {deb.name} failed: {unpack.stderr.strip()[-500:]}")
        shutil.rmtree(with_scripts, ignore_errors=True)
        done = subprocess.run(
            ["dpkg-deb", "-e", str(deb), str(with_scripts)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BoardError(f"dpkg-deb -e {deb.name} failed: {done.stderr.strip()}")
        postinst = with_scripts / "postinst"
        controls.append(
            (
                (with_scripts / "control").read_text(),
                postinst.read_text(errors="replace") if postinst.is_file() else "",
            )
        )
        if time.monotonic() - last_said > 20 or count == len(debs):
            progress(f"{board}: unpacked {count} of {len(debs)} packages")
            last_said = time.monotonic()
    shutil.rmtree(with_scripts, ignore_errors=True)
    _trim_docs(tree / "usr" / "share" / "doc")
    return controls


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


def _trim_docs(doc: Path) -> None:
    if not doc.is_dir():
        return
    for package in doc.iterdir():
        if package.is_symlink() or not package.is_dir():
            continue
        for entry in package.iterdir():
            if entry.name == KEPT_DOC_FILE:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def configure(tree: Path, controls: Sequence[tuple[str, str]]) -> None:
    """What the maintainer scripts would have left that the board uses."""
    etc = tree / "etc"
    masters = tree / "usr" / "share" / "base-passwd"
    passwd, shadow = shadowed((masters / "passwd.master").read_text(), 7)
    group, gshadow = shadowed((masters / "group.master").read_text(), 2)
    shadow_gid = next(
        (line.split(":")[2] for line in group.splitlines() if line.startswith("shadow:")), "0"
    )
    for name, text, mode in (
        ("passwd", passwd, 0o644),
        ("group", group, 0o644),
        ("shadow", shadow, 0o640),
        ("gshadow", gshadow, 0o640),
    ):
        (etc / name).write_text(text)
        (etc / name).chmod(mode)
        if name.endswith("shadow"):
            os.chown(etc / name, 0, int(shadow_gid))
    # base-files
    defaults = tree / "usr" / "share" / "base-files"
    for source, target in (
        ("dot.profile", "root/.profile"),
        ("dot.bashrc", "root/.bashrc"),
        ("profile", "etc/profile"),
        ("motd", "etc/motd"),
    ):
        if (defaults / source).is_file() and not (tree / target).exists():
            (tree / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(defaults / source, tree / target)
    for directory in ("mnt", "srv", "opt", "etc/opt", "var/opt", "media", "var/mail"):
        (tree / directory).mkdir(parents=True, exist_ok=True)
    (tree / "run" / "lock").mkdir(parents=True, exist_ok=True)
    (tree / "run" / "lock").chmod(0o1777)
    for link, target in (("var/run", "/run"), ("var/lock", "/run/lock")):
        _replace_with_link(tree / link, target)
    _link_if_missing(tree / "var" / "spool" / "mail", "../mail")
    if (etc / "dpkg" / "origins" / "debian").exists():
        _link_if_missing(etc / "dpkg" / "origins" / "default", "debian")
    # python3, python3.11-minimal
    (etc / "python3").mkdir(exist_ok=True)
    config = etc / "python3" / "debian_config"
    if not config.exists():
        config.write_text("[DEFAULT]\n# how to byte-compile\nbyte-compile = standard\n")
    (tree / "usr" / "local" / "lib" / "python3.11" / "dist-packages").mkdir(
        parents=True, exist_ok=True
    )
    # update-alternatives, automatic mode
    alternatives = [a for _, script in controls for a in literal_alternatives(script)]
    chosen = chosen_alternatives(alternatives, lambda path: (tree / path.lstrip("/")).exists())
    for alternative in chosen.values():
        _replace_with_link(etc / "alternatives" / alternative.name, alternative.path)
        public = tree / alternative.link.lstrip("/")
        if not public.exists() or public.is_symlink():
            _replace_with_link(public, f"/etc/alternatives/{alternative.name}")
    # dpkg's database: `dpkg -l` on the board lists what is there
    status = tree / "var" / "lib" / "dpkg" / "status"
    status.parent.mkdir(parents=True, exist_ok=True)
    status.write_text(dpkg_status(control for control, _ in controls))


def _replace_with_link(path: Path, target: str) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)  # base-files ships var/run and var/lock as empty directories
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def _link_if_missing(path: Path, target: str) -> None:
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


def run_ldconfig(arch: ArmArch, tree: Path) -> None:
    """/etc/ld.so.cache by the guest's own static ldconfig, through qemu-user directly
    (no chroot, no binfmt_misc): `-r` makes it read and write the tree."""
    ldconfig = tree / "usr" / "sbin" / "ldconfig"
    done = subprocess.run(
        [f"/usr/bin/{arch.qemu_user}", str(ldconfig), "-r", str(tree)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0 or not (tree / "etc" / "ld.so.cache").is_file():
        raise BoardError(
            f"ldconfig -r for the {arch.board} tree failed ({arch.qemu_user}): "
            + (done.stderr.strip()[-500:] or f"exit {done.returncode}")
        )


PYTHON_DIRS = ("usr/lib/python3/dist-packages",)


def compile_python(
    tree: Path,
    guest: tuple[int, int] | None,
    emulate: Emulate,
    progress: Progress,
    board: str,
) -> int:
    """Byte-compile the tree's Python as py3compile would; the number of .py files."""
    if guest is None:
        return 0
    dirs = [f"usr/lib/python{guest[0]}.{guest[1]}", *PYTHON_DIRS]
    sources = sum(1 for d in dirs for _ in (tree / d).rglob("*.py"))
    if sys.version_info[:2] == guest:
        progress(f"{board}: byte-compiling {sources} .py files with the host's Python")
        for directory in dirs:
            # a few files are syntax-error fixtures (lib2to3's tests): left uncompiled,
            # as Debian leaves them
            compileall.compile_dir(
                str(tree / directory),
                quiet=2,
                stripdir=str(tree),
                prependdir="/",
                workers=1,
            )
    else:
        progress(
            f"{board}: byte-compiling {sources} .py files under emulation (the host's "
            f"Python is {sys.version_info[0]}.{sys.version_info[1]}, the board's "
            f"{guest[0]}.{guest[1]})"
        )
        emulate(tree, f"python3 -m compileall -q {' '.join('/' + d for d in dirs)} || true")
    return sources
