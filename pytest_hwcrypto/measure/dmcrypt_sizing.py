# SPDX-License-Identifier: MIT
"""How much of a dm-crypt volume the dmcrypt suite's integrity check can afford (pure).

The check writes a seeded pattern through the volume, reads it back through a fresh open
and decrypts the raw sectors with pyca: three passes over the pattern. At the default
256 MiB a volume that is fast on a laptop takes minutes on a slow board (the QEMU board's
dmcrypt suite ran over 10 minutes at defaults). So the suite first times the whole check
on a small probe, and checks as much as its share of the budget then allows:
`--hwcrypto-dmcrypt-bytes` stays the upper bound, the probe the lower one, and a check cut
short says so (a `dmcrypt-shortened` finding naming both sizes and the rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_hwcrypto.vocabulary import MIB

PROBE_BYTES = 8 * MIB
# However many volumes share the budget, each may take this long: a check of a few seconds
# is cheap next to the volume's setup, and less would leave it little more than the probe.
MIN_ALLOWANCE = 5.0


@dataclass(frozen=True)
class Sizing:
    bytes: int  # what the check will cover
    upper: int  # --hwcrypto-dmcrypt-bytes
    rate: float  # bytes a second the probe's check ran at (0: not measured)
    allowance: float  # seconds this volume's check may take

    @property
    def shortened(self) -> bool:
        return self.bytes < self.upper

    def detail(self, driver: str) -> str:
        return (
            f"checked {self.bytes // MIB} MiB of {self.upper // MIB} MiB through {driver}: "
            f"the check (write, read back, decrypt with pyca) ran at "
            f"{self.rate / MIB:.1f} MiB/s on a {PROBE_BYTES // MIB} MiB probe and a volume "
            f"may take {self.allowance:.0f} s of the budget (raise --hwcrypto-budget to "
            "check more)"
        )


def allowance(budget: float, volumes: int) -> float:
    """Seconds one volume's check may take: its share of the budget, not below the minimum."""
    return max(MIN_ALLOWANCE, budget / max(volumes, 1))


def size_check(
    upper: int, probe_bytes: int, probe_seconds: float, seconds: float, fixed: float = 0.0
) -> Sizing:
    """The bytes to check: what the probe's rate covers in what is left of `seconds` after
    the probe and the second check's `fixed` cost (the part of the probe's time that does
    not grow with the bytes: the cache drop and the fresh open), in whole MiB, at least the
    probe and at most `upper`; the whole of `upper` when the probe's bytes took no
    measurable time."""
    fixed = min(max(fixed, 0.0), probe_seconds)
    moving = probe_seconds - fixed
    if moving <= 0 or probe_bytes <= 0:
        return Sizing(upper, upper, 0.0, seconds)
    rate = probe_bytes / moving
    afforded = int(rate * (seconds - probe_seconds - fixed)) // MIB * MIB
    return Sizing(min(upper, max(probe_bytes, afforded)), upper, rate, seconds)
