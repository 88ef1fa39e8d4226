# SPDX-License-Identifier: MIT
"""Cross-build a small arm64 kernel from Debian's linux-source-6.1 for the qemu-arm64 board
(see README.md): a developer's own kernel, not Debian's.

    nice -n 19 .venv/bin/python tests/data/own_arm64_kernel/build.py WORK_DIR [--jobs N]

WORK_DIR gets the source tree (`linux-source-6.1/`, built in place: it is the `build`
link modules are cross-built against), the modules (`modules/lib/modules/<release>/`,
with modules.dep and the `build` link) and `build-info.json` (release, paths, the time
of each step, sizes), which tests/board_arm/test_own_kernel.py reads. Needs, from Debian:
linux-source-6.1 gcc-aarch64-linux-gnu make bc flex bison kmod. Each step prints one line;
a missing prerequisite or an option the configuration could not keep is one line too.
Steps already done (an unpacked tree, a configured tree) are not redone; make itself
rebuilds only what changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRAGMENT = HERE / "hwcrypto-arm64.config"
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
TREE_NAME = "linux-source-6.1"
LOCALVERSION = "-hwcrypto"
MAKE_VARS = ("ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-")
PROGRAMS = {
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "make": "make",
    "bc": "bc",
    "flex": "flex",
    "bison": "bison",
    "depmod": "kmod",
}


class BuildError(Exception):
    """One line saying what is missing and how to get it."""


def say(line: str) -> None:
    print(f"own-arm64-kernel: {line}", flush=True)


def check_prerequisites() -> None:
    if not TARBALL.is_file():
        raise BuildError(f"{TARBALL} is missing: apt-get install linux-source-6.1")
    for program, package in PROGRAMS.items():
        if shutil.which(program) is None and not Path("/sbin", program).exists():
            raise BuildError(f"building needs {program}: apt-get install {package}")


def wanted_options(fragment: str) -> dict[str, str]:
    """CONFIG_X -> "y"/"m"/"n"/value, from the fragment's lines (`# CONFIG_X is not set`
    is "n")."""
    wanted = {}
    for line in fragment.splitlines():
        line = line.strip()
        if line.startswith("# CONFIG_") and line.endswith(" is not set"):
            wanted[line[2:].split()[0]] = "n"
        elif line.startswith("CONFIG_") and "=" in line:
            name, _, value = line.partition("=")
            wanted[name] = value
    return wanted


def options_not_kept(wanted: dict[str, str], config: str) -> list[str]:
    """The fragment's options the resulting .config does not have as asked (a dependency
    the fragment forgot turns them off silently)."""
    have = wanted_options(config)
    return [
        f"{name}={value} (got {have.get(name, 'n')})"
        for name, value in wanted.items()
        if have.get(name, "n") != value
    ]


def run(argv: list[str], cwd: Path, log: Path) -> None:
    with open(log, "a") as output:
        output.write(f"\n$ {' '.join(argv)}\n")
        output.flush()
        done = subprocess.run(argv, cwd=cwd, stdout=output, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise BuildError(f"{' '.join(argv)} failed (exit {done.returncode}), log {log}:\n{tail}")


def unpack(work: Path) -> Path:
    tree = work / TREE_NAME
    if (tree / "Makefile").is_file():
        say(f"source tree {tree} already unpacked")
        return tree
    began = time.monotonic()
    say(f"unpacking {TARBALL} into {work}")
    run(["tar", "-xaf", str(TARBALL), "-C", str(work)], work, work / "build.log")
    say(f"unpacked in {time.monotonic() - began:.0f} s")
    return tree


def du_bytes(path: Path) -> int:
    done = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=False)
    return int(done.stdout.split()[0]) if done.returncode == 0 else 0


def build(work: Path, jobs: int) -> dict[str, object]:
    check_prerequisites()
    work.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    times: dict[str, float] = {}
    began = time.monotonic()
    tree = unpack(work)
    times["unpack"] = time.monotonic() - began
    make = ["make", *MAKE_VARS, f"LOCALVERSION={LOCALVERSION}"]
    fragment = FRAGMENT.read_text()
    step = time.monotonic()
    applied = tree / ".hwcrypto-fragment"
    if not applied.is_file() or applied.read_text() != fragment:
        say("configuring: make allnoconfig with hwcrypto-arm64.config")
        run([*make, f"KCONFIG_ALLCONFIG={FRAGMENT}", "allnoconfig"], tree, log)
        applied.write_text(fragment)
    lost = options_not_kept(wanted_options(fragment), (tree / ".config").read_text())
    if lost:
        raise BuildError(f"the configuration did not keep: {', '.join(lost)}")
    times["configure"] = time.monotonic() - step
    step = time.monotonic()
    say(f"building Image and modules (make -j{jobs}; log {log})")
    run([*make, f"-j{jobs}", "Image", "modules"], tree, log)
    times["make"] = time.monotonic() - step
    release = (tree / "include" / "config" / "kernel.release").read_text().strip()
    step = time.monotonic()
    modules_root = work / "modules"
    shutil.rmtree(modules_root / "lib" / "modules" / release, ignore_errors=True)
    run([*make, f"INSTALL_MOD_PATH={modules_root}", "modules_install"], tree, log)
    times["modules_install"] = time.monotonic() - step
    modules_dir = modules_root / "lib" / "modules" / release
    build_link = modules_dir / "build"
    if not (build_link / "Makefile").is_file():
        # modules_install writes it; make sure it names this tree whatever the make version
        build_link.unlink(missing_ok=True)
        build_link.symlink_to(tree)
    image = tree / "arch" / "arm64" / "boot" / "Image"
    info: dict[str, object] = {
        "release": release,
        "image": str(image),
        "modules": str(modules_dir),
        "tree": str(tree),
        "seconds": {name: round(value, 1) for name, value in times.items()},
        "image_bytes": image.stat().st_size,
        "modules_bytes": du_bytes(modules_dir / "kernel"),
        "module_count": sum(1 for _ in (modules_dir / "kernel").rglob("*.ko")),
        "tree_bytes": du_bytes(tree),
        "load_average": Path("/proc/loadavg").read_text().split()[:3],
        "jobs": jobs,
    }
    (work / "build-info.json").write_text(json.dumps(info, indent=2) + "\n")
    say(f"release {release}: make {times['make']:.0f} s, Image {info['image_bytes']} bytes")
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="directory for the tree, modules and info")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    try:
        info = build(args.work.resolve(), args.jobs)
    except BuildError as error:
        print(f"own-arm64-kernel: {error}", file=sys.stderr)
        return 1
    print(
        "boot it: hwcrypto vm qemu-arm64 "
        f"--kernel {info['image']} --modules {info['modules']} --exec 'hwcrypto inventory'"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
