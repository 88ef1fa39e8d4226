# SPDX-License-Identifier: MIT
"""A profile rule judged at a level of requests in flight the run did not measure.

A rule with `concurrency = N` has nothing to judge in a run without N among
--hwcrypto-concurrency; it used to fail there ("no offload measured (4 in flight)") as if
the engine were missing. The throughput suite skips it with this reason instead, as it
skips a rule whose algorithm is not among --hwcrypto-algorithm.
"""

from __future__ import annotations

from collections.abc import Collection


def unmeasured_level(label: str, concurrency: int | None, measured: Collection[int]) -> str | None:
    """Why `label` (judged at `concurrency` in flight; None: every level) cannot be judged
    in a run that measured `measured`, or None when it can."""
    if concurrency is None or concurrency in measured:
        return None
    levels = ",".join(str(level) for level in sorted(measured)) or "none"
    return (
        f"{label}: judged with {concurrency} requests in flight, a level this run did not "
        f"measure (--hwcrypto-concurrency={levels}): add {concurrency} to "
        "--hwcrypto-concurrency to judge it"
    )
