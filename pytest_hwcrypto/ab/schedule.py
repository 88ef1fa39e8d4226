# SPDX-License-Identifier: MIT
"""Which side goes first in each pair (pure).

Order matters on a machine whose speed drifts: if A always ran first, a board that gets
slower during a run would make every B look slower. Pairs therefore come in blocks of two,
one AB and one BA, which of the two first drawn from the seed: a steady drift cancels
within each block, and an effect of going first or second cancels over blocks. The order
of pair i depends only on (seed, i), so a resumed run continues the same schedule.
"""

from __future__ import annotations

import random

AB = "AB"
BA = "BA"


def pair_order(seed: int, index: int) -> str:
    """ "AB" or "BA" for pair `index` (0-based) of a run seeded with `seed`."""
    if index < 0:
        raise ValueError(f"pair index must be >= 0, got {index}")
    block = random.Random(f"hwcrypto-ab:{seed}:{index // 2}")
    first = block.choice((AB, BA))
    if index % 2 == 0:
        return first
    return BA if first == AB else AB


def sides_in_order(order: str) -> tuple[str, str]:
    if order not in (AB, BA):
        raise ValueError(f"order must be AB or BA, got {order!r}")
    return (order[0], order[1])
