# SPDX-License-Identifier: MIT
"""Options that more than one command takes, defined once (bisect-run, bisect-confirm)."""

from __future__ import annotations

import argparse


def add_kernel_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kernel",
        help="the image the build makes (default: the tree's ./linux, "
        "arch/x86/boot/bzImage or arch/arm64/boot/Image, whichever one exists); "
        "refused when older than the build step, or when it is --good's side B outside "
        "the tree",
    )


def add_pairs_options(parser: argparse.ArgumentParser, budget: str, workdir: str) -> None:
    """How many pairs, where they are kept, how long a boot may take: both commands."""
    parser.add_argument("--pairs", type=int, help="exactly N pairs")
    parser.add_argument("--budget", type=float, help=budget)
    parser.add_argument("--first-pairs", type=int, default=12)
    parser.add_argument("--max-pairs", type=int, default=40)
    parser.add_argument("--workdir", default=".hwcrypto-bisect", help=workdir)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per boot (600)")
