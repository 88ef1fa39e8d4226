# SPDX-License-Identifier: MIT
"""The crossover block size of a hardware path against software.

Offload engines pay a fixed cost per request (DMA setup, interrupts, a trip through a
queue), so they typically lose at small blocks and win at large ones: the Marvell CESA case
was ~48x slower at 16 B and ~1.6x faster at 16 KiB.  The crossover is the smallest block
size from which the hardware keeps up for good, i.e. HW >= min_ratio x SW at that size and
at every larger size measured.  A dip (a middle size where HW loses again) moves the
crossover above the dip: "from here on it holds" must really hold from there on.
"""

from __future__ import annotations

from collections.abc import Mapping


def crossover(ratios: Mapping[int, float], min_ratio: float) -> int | None:
    """Smallest block size from which ratios[size] >= min_ratio for every larger size.

    `ratios` maps block size to HW/SW throughput ratio.  None when not even the largest
    measured size holds (or nothing was measured).
    """
    found: int | None = None
    for block_size in sorted(ratios, reverse=True):
        if not ratios[block_size] >= min_ratio:  # written so that NaN counts as a miss
            break
        found = block_size
    return found
