# SPDX-License-Identifier: MIT
"""How fast this CPU runs plain user-space code right now: the yardstick that lets paired
kernel comparisons cancel a shared host's load.

On a shared machine a board's speed moves with the host's load from one second to the
next (benchmarks/ab-bisect.md: at load 5-12 the log ratio of two slices of the
same kernel seconds apart spread by 0.1-0.2). Everything the board runs slows alike then,
its user-space code as much as its kernel crypto. So a fixed piece of user-space work --
SHA-256 over a buffer, through the C library, with no system call inside the loop --
timed right before and right after each throughput sample says how much CPU the board
had during that sample, and the sample divided by it keeps what the kernel did with that
CPU. A kernel change to the crypto path leaves the yardstick alone; one that slows plain
user-space code (CPU frequency, cache or TLB handling, mitigations on every context
switch) moves it too -- which is why `hwcrypto ab` shows the yardstick as a series of its
own, judged like the others.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

# Long enough for a few hundred buffer passes on a board (timer reads under UML are
# system calls of ~10 us), short enough to cost little beside a 0.1-0.5 s sample.
PROBE_SECONDS = 0.02
PROBE_BUFFER = b"\x5a" * (64 * 1024)

Clock = Callable[[], float]


def user_space_speed(seconds: float = PROBE_SECONDS, clock: Clock = time.perf_counter) -> float:
    """Bytes a second SHA-256 ran at in user space for about `seconds` (at least one pass)."""
    passes = 0
    started = clock()
    while True:
        hashlib.sha256(PROBE_BUFFER).digest()
        passes += 1
        elapsed = clock() - started
        if elapsed >= seconds:
            return passes * len(PROBE_BUFFER) / max(elapsed, 1e-9)
