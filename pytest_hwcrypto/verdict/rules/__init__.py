# SPDX-License-Identifier: MIT
"""Throughput rules of a board profile, and findings that need no rule (pure).

One concern per module, each importing only those before it:

* model.py -- the values passed around: Scope, Candidate, PairPoint, Winner, RuleOutcome,
  RuleError;
* series.py -- which measurements are compared with which: groups of (source, key_bits,
  op), series per block size, the driver standing for each side, the winner;
* wording.py -- what verdicts and findings say, and the numbers findings carry;
* judge.py -- the four rule types (hw-beats-sw, floor, winner-fastest, no-regression) and
  how each is judged, and evaluate_rules;
* findings.py -- winner-not-fastest, hw-loses-to-sw and crossover for every algorithm;
* concurrency.py -- needs-concurrency: hardware that loses one request at a time and wins
  with several in flight;
* async_jobs.py -- async-jobs-serialized: OpenSSL's -async_jobs kept one request in flight
  where -multi kept several (the kernel completed AF_ALG's AIO synchronously);
* reader.py -- `[[rule]]` tables into rules, with errors that name where and the key.

Callers import from here; the names are those of the single module this package replaced.
"""

from __future__ import annotations

from pytest_hwcrypto.verdict.rules.async_jobs import (
    async_jobs_serialized_finding,
    judged_async_jobs,
)
from pytest_hwcrypto.verdict.rules.concurrency import needs_concurrency_findings
from pytest_hwcrypto.verdict.rules.findings import (
    crossover_findings,
    hw_loses_to_sw_findings,
    winner_not_fastest_findings,
)
from pytest_hwcrypto.verdict.rules.judge import (
    FloorRule,
    HwBeatsSwRule,
    NoRegressionRule,
    Rule,
    WinnerFastestRule,
    evaluate_rules,
)
from pytest_hwcrypto.verdict.rules.model import (
    DEFAULT_WINNER_TOLERANCE,
    Candidate,
    GroupKey,
    Inventory,
    PairPoint,
    RuleError,
    RuleOutcome,
    Scope,
    Winner,
)
from pytest_hwcrypto.verdict.rules.reader import (
    RULE_TYPES,
    CollectedRule,
    rule_from_dict,
    rules_from_list,
    rules_from_profile,
)
from pytest_hwcrypto.verdict.rules.series import (
    best_candidate,
    class_of,
    driver_classes,
    recorded_winner,
)

__all__ = [
    "DEFAULT_WINNER_TOLERANCE",
    "RULE_TYPES",
    "Candidate",
    "CollectedRule",
    "FloorRule",
    "GroupKey",
    "HwBeatsSwRule",
    "Inventory",
    "NoRegressionRule",
    "PairPoint",
    "Rule",
    "RuleError",
    "RuleOutcome",
    "Scope",
    "Winner",
    "WinnerFastestRule",
    "async_jobs_serialized_finding",
    "best_candidate",
    "class_of",
    "crossover_findings",
    "driver_classes",
    "evaluate_rules",
    "hw_loses_to_sw_findings",
    "judged_async_jobs",
    "needs_concurrency_findings",
    "recorded_winner",
    "rule_from_dict",
    "rules_from_list",
    "rules_from_profile",
    "winner_not_fastest_findings",
]
