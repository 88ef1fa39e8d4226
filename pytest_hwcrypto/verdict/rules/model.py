# SPDX-License-Identifier: MIT
"""The values the rule modules hand each other: scopes, candidates, points, outcomes.

The rule types themselves live in judge.py beside the judging each of them does: callers
ask a rule to `evaluate` itself, and keeping the types here would make this module and
the judges import each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from pytest_hwcrypto.model.results import Finding, InventoryItem, Measurement, Verdict
from pytest_hwcrypto.model.stats import RatioInterval, SampleStats
from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, BlockSizeRange
from pytest_hwcrypto.vocabulary import Place

# Differences smaller than this are not worth a winner-not-fastest report even when
# statistically clear: priorities are set per architecture, not per board.
DEFAULT_WINNER_TOLERANCE = 0.05

# /proc/crypto as a results file gives it (model.results.InventoryItem)
Inventory = Sequence[InventoryItem]

# (source, key_bits, op, requests in flight): the measurements one comparison series is
# made of; drivers are compared at the same level of requests in flight
GroupKey = tuple[str, Optional[int], str, int]


class RuleError(ValueError):
    """A rule in a profile is malformed; the message names where and the key."""


@dataclass(frozen=True)
class RuleOutcome:
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class Scope:
    """The measurements a rule is about; None means "any"."""

    algorithm: str | None
    block_sizes: BlockSizeRange = ALL_BLOCK_SIZES
    source: str | None = None
    key_bits: int | None = None
    op: str | None = None
    # Measurements taken inside a container carry extra["where"] = "container"; a rule
    # without `where` looks at the host's only, so the two are never mixed in one series.
    place: str | None = None
    # Requests in flight (Measurement.level); None: every level, each its own series. A
    # profile rule without `concurrency` reads 1 (reader.py): what it always judged.
    concurrency: int | None = None

    def admits_path(self, measurement: Measurement) -> bool:
        """Everything but the block size (crossovers look beyond the range)."""
        return (
            (self.algorithm is None or measurement.algorithm == self.algorithm)
            and (self.source is None or measurement.source == self.source)
            and (self.key_bits is None or measurement.key_bits == self.key_bits)
            and (self.op is None or measurement.op == self.op)
            and measurement.extra.get("where", Place.HOST) == (self.place or Place.HOST)
            and (self.concurrency is None or measurement.level == self.concurrency)
        )

    def admits(self, measurement: Measurement) -> bool:
        return self.admits_path(measurement) and self.block_sizes.contains(measurement.block_size)


@dataclass(frozen=True)
class Candidate:
    """The driver standing for one side at one block size, with its statistics and the
    measurements they were pooled from (so two sides of one run can be paired by round)."""

    driver: str
    driver_class: str | None
    stats: SampleStats
    members: tuple[Measurement, ...] = ()


@dataclass(frozen=True)
class PairPoint:
    """One side against the other at one block size."""

    block_size: int | None
    first: Candidate
    second: Candidate
    interval: RatioInterval


@dataclass(frozen=True)
class Winner:
    """The driver the kernel hands out for an algorithm, and its priority when known."""

    driver: str
    priority: int | None
