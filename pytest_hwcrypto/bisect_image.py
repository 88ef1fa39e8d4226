# SPDX-License-Identifier: MIT
"""Which kernel image a bisection step boots, and whether the build just run made it.

A step that boots an image its build did not write measures one kernel at every step and
names a wrong culprit with exit codes that look right: issue 48, where `--kernel`
defaulted to side B of --good, a copy kept outside the tree (`hwcrypto ab --kernel
good.uml --kernel slow.uml`), and every step measured slow.uml. So, without --kernel, the
image is the one the build writes in the tree; and an image older than the build step, or
that is --good's side B outside the tree, is refused (bisect-run and bisect-confirm stop
with one line).
"""

from __future__ import annotations

import math
import os
import subprocess
import time
from pathlib import Path

from pytest_hwcrypto.ab.document import AbDocument

# Where `make` leaves the bootable image, per architecture: UML, x86, arm64.
TREE_IMAGES = ("linux", "arch/x86/boot/bzImage", "arch/arm64/boot/Image")


class ImageRefused(Exception):
    """The image to boot is not what the build made, or cannot be told; one line."""


def tree_root() -> Path:
    """The kernel tree the bisection runs in: git's top level, else the working directory."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
        )
    except OSError:
        return Path.cwd()
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else Path.cwd()


def tree_image(tree: Path) -> Path:
    """The one image the build wrote in `tree`; none or several cannot be told apart."""
    found = [tree / relative for relative in TREE_IMAGES if (tree / relative).is_file()]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(TREE_IMAGES)
    if not found:
        raise ImageRefused(f"no kernel image in {tree} (looked for {listed}): give --kernel")
    names = ", ".join(str(path.relative_to(tree)) for path in found)
    raise ImageRefused(f"several kernel images in {tree} ({names}): give --kernel")


def check_image(
    image: Path,
    tree: Path,
    build_started: float | None,
    good_side_b: str | None,
    good_side_a: str | None = None,
) -> None:
    """Refuse `image` when the build just run (started at `build_started`, None: no build)
    did not make it. A missing image is left to the board's own check."""
    if not image.exists():
        return
    if good_side_a and _same_file(image, Path(good_side_a)):
        # side A is the good kernel every step is measured against: booting it as B
        # compares it with itself, and a build writing it would change the yardstick
        raise ImageRefused(
            f"{image} is side A of --good, the good kernel: keep a copy of it outside the "
            "tree for --good, and give --kernel with the image the build writes"
        )
    if good_side_b and _same_file(image, Path(good_side_b)) and not _inside(image, tree):
        raise ImageRefused(
            f"{image} is side B of --good, kept outside the tree {tree}: every step would "
            "measure that copy, not what the build makes; give --kernel with the tree's image"
        )
    # Whole seconds: a file system that keeps coarse timestamps rounds the image down.
    if build_started is not None and image.stat().st_mtime < math.floor(build_started):
        written = time.strftime("%H:%M:%S", time.localtime(image.stat().st_mtime))
        began = time.strftime("%H:%M:%S", time.localtime(build_started))
        # make leaves an image it finds up to date alone (UML's ./linux is a hard link to
        # vmlinux, relinked only when an object changed): the message says how to go on.
        raise ImageRefused(
            f"{image} was written at {written}, before the build step began ({began}): "
            "not what this commit built; give --kernel with the image the build writes, "
            "or, if the build found it up to date, end the build command with `touch` on it"
        )


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def _inside(path: Path, tree: Path) -> bool:
    return path.resolve().is_relative_to(tree.resolve())


def built_image(kernel: str | None, build_started: float | None, good: AbDocument) -> Path:
    """The image to boot: --kernel, or the one the build wrote in the tree; refused when
    the build just run did not make it."""
    tree = tree_root()
    image = Path(kernel) if kernel else tree_image(tree)
    check_image(image, tree, build_started, good.sides["B"].kernel, good.sides["A"].kernel)
    return image
