# SPDX-License-Identifier: MIT
"""Reading `[[rule]]` tables (TOML, or any mapping) into rules; errors name where and the key.

Rule types (the `type` key):

* ``hw-beats-sw``: algorithm, hw, sw (each a driver name or a class: generic, cpu-accel,
  offload), min_ratio (default 1.0), block_sizes, source, and cpu_per_byte (optional: hw
  may spend at most this multiple of sw's CPU seconds per byte, e.g. 0.2 -- "a fifth of
  its CPU").  When a side is a class, the fastest (median) driver of that class at each
  block size stands for it, and is named.
* ``floor``: algorithm, driver *or* class, min_mib_s, block_sizes, source.
* ``winner-fastest``: algorithm, tolerance (default 0.05), block_sizes, source.
* ``no-regression``: max_drop (default 10 %; 0.1 or "10%"), optional algorithm, driver,
  block_sizes, source, relative_to (a driver, or "software": throughput as a multiple of
  that reference measured in the same run); checked against a baseline Results.

All rules also take optional ``name`` (for the verdict), ``key_bits``, ``op``,
``where`` ("host", the default, or "container": measurements the lxc suite took inside an
LXC container) and ``concurrency`` (the series measured with that many requests in flight,
--hwcrypto-concurrency; default 1, one at a time). The board profile loader (profile.py)
checks only each table's type and adds its ``location`` (file:line); everything else is
checked here, where the rules are understood.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, BlockSizeRange, parse_block_sizes
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.verdict.rules.judge import (
    FloorRule,
    HwBeatsSwRule,
    NoRegressionRule,
    Rule,
    WinnerFastestRule,
)
from pytest_hwcrypto.verdict.rules.model import DEFAULT_WINNER_TOLERANCE, RuleError, Scope
from pytest_hwcrypto.vocabulary import (
    DEFAULT_MAX_DROP,
    DEFAULT_MIN_RATIO,
    PROFILE_DRIVER_CLASSES,
    Place,
    RuleType,
)


class CollectedRule(NamedTuple):
    """A profile rule as collected: the label for its test id, and the rule or the error."""

    label: str
    rule: Rule | None
    error: str | None = None


def rule_from_dict(data: Mapping[str, Any], where: str) -> Rule:
    """Build the rule a `[[rule]]` table describes; RuleError names `where` and the key."""
    if not isinstance(data, Mapping):
        raise RuleError(f"{where}: expected a table, got {type(data).__name__}")
    rule_type = data.get("type")
    if rule_type is None:
        raise RuleError(f"{where}: missing key 'type' (one of {', '.join(RULE_TYPES)})")
    if rule_type not in RULE_TYPES:
        raise RuleError(
            f"{where}: unknown rule type {rule_type!r} (one of {', '.join(RULE_TYPES)})"
        )
    reader = _RuleReader(data, where)
    rule = RULE_TYPES[rule_type](reader)
    reader.finish()
    # checked after finish(), so a misspelt key is reported before what it led to
    if isinstance(rule, HwBeatsSwRule) and rule.hw == rule.sw:
        raise RuleError(f"{where}: 'hw' and 'sw' are both {rule.hw!r}")
    return rule


def rules_from_list(tables: Sequence[Mapping[str, Any]], file_name: str) -> list[Rule]:
    """All `[[rule]]` tables of a profile; rules are numbered from 1 in messages.  The first
    bad table raises."""
    return [
        rule_from_dict(*_located(table, number, file_name))
        for number, table in enumerate(tables, 1)
    ]


def rules_from_profile(profile: BoardProfile | None) -> list[CollectedRule]:
    """Every rule of a loaded profile, each read on its own: a bad table becomes its error,
    so it fails its own test while the profile's other rules still run."""
    if profile is None:
        return []
    collected = []
    for number, table in enumerate(profile.rules, 1):
        try:
            rule = rule_from_dict(*_located(table, number, str(profile.path)))
        except RuleError as error:
            label = f"rule #{number} {table.get('type', '?')} (invalid)"
            collected.append(CollectedRule(label, None, str(error)))
            continue
        collected.append(CollectedRule(rule.label, rule))
    return collected


def _located(table: Any, number: int, file_name: str) -> tuple[Any, str]:
    """The table without its `location`, and that location: the profile loader's file:line
    when it gave one, else '<file> rule #<number>'."""
    if isinstance(table, Mapping) and "location" in table:
        rest = {key: value for key, value in table.items() if key != "location"}
        return rest, str(table["location"])
    return table, f"{file_name} rule #{number}"


# ---------------------------------------------------------------------------------------
# one reader per type: keys are read in the order their errors should be reported


def _hw_beats_sw(reader: _RuleReader) -> HwBeatsSwRule:
    return HwBeatsSwRule(
        scope=reader.scope(algorithm_required=True),
        hw=reader.string("hw"),
        sw=reader.string("sw"),
        min_ratio=reader.positive_number("min_ratio", DEFAULT_MIN_RATIO),
        name=reader.optional_string("name"),
        cpu_per_byte=reader.optional_positive_number("cpu_per_byte"),
    )


def _floor(reader: _RuleReader) -> FloorRule:
    driver = reader.optional_string("driver")
    driver_class = reader.optional_string("class")
    if (driver is None) == (driver_class is None):
        raise RuleError(f"{reader.where}: give exactly one of 'driver' and 'class'")
    if driver_class is not None and driver_class not in PROFILE_DRIVER_CLASSES:
        raise RuleError(
            f"{reader.where}: key 'class' must be one of {', '.join(PROFILE_DRIVER_CLASSES)}, "
            f"got {driver_class!r}"
        )
    return FloorRule(
        scope=reader.scope(algorithm_required=True),
        target=driver or driver_class or "",
        min_mib_s=reader.positive_number("min_mib_s"),
        name=reader.optional_string("name"),
    )


def _winner_fastest(reader: _RuleReader) -> WinnerFastestRule:
    return WinnerFastestRule(
        scope=reader.scope(algorithm_required=True),
        tolerance=reader.fraction("tolerance", DEFAULT_WINNER_TOLERANCE),
        name=reader.optional_string("name"),
    )


def _no_regression(reader: _RuleReader) -> NoRegressionRule:
    return NoRegressionRule(
        scope=reader.scope(algorithm_required=False),
        max_drop=reader.fraction("max_drop", DEFAULT_MAX_DROP),
        driver=reader.optional_string("driver"),
        name=reader.optional_string("name"),
        relative_to=reader.optional_string("relative_to"),
    )


# in the order messages list them
RULE_TYPES: dict[RuleType, Callable[[_RuleReader], Rule]] = {
    HwBeatsSwRule.TYPE: _hw_beats_sw,
    FloorRule.TYPE: _floor,
    WinnerFastestRule.TYPE: _winner_fastest,
    NoRegressionRule.TYPE: _no_regression,
}


# ---------------------------------------------------------------------------------------
# reading rule tables


class _RuleReader:
    """Typed access to one rule table, whose type rule_from_dict has dispatched on; unknown
    keys are reported by finish()."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self._data = data
        self.where = where
        self._read = {"type"}

    def finish(self) -> None:
        unknown = [key for key in self._data if key not in self._read]
        if unknown:
            known = ", ".join(sorted(self._read - {"type"}))
            raise RuleError(f"{self.where}: unknown key {unknown[0]!r} (known: {known})")

    def _get(self, key: str) -> Any:
        self._read.add(key)
        return self._data.get(key)

    def _wrong(self, key: str, expected: str, value: Any) -> RuleError:
        return RuleError(
            f"{self.where}: key {key!r} must be {expected}, got {type(value).__name__} {value!r}"
        )

    def string(self, key: str) -> str:
        value = self._get(key)
        if value is None:
            raise RuleError(f"{self.where}: missing key {key!r}")
        if not isinstance(value, str) or not value:
            raise self._wrong(key, "a non-empty string", value)
        return value

    def optional_string(self, key: str) -> str | None:
        if self._get(key) is None:
            return None
        return self.string(key)

    def optional_int(self, key: str) -> int | None:
        value = self._get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value <= 0
        ):
            raise self._wrong(key, "a positive integer", value)
        return value

    def positive_number(self, key: str, default: float | None = None) -> float:
        value = self._get(key)
        if value is None:
            if default is None:
                raise RuleError(f"{self.where}: missing key {key!r}")
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self._wrong(key, "a positive number", value)
        return float(value)

    def optional_positive_number(self, key: str) -> float | None:
        if self._get(key) is None:
            return None
        return self.positive_number(key)

    def fraction(self, key: str, default: float) -> float:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, str):
            try:
                return parse_fraction(value)
            except ValueError as error:
                raise RuleError(f"{self.where}: key {key!r}: {error}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            raise self._wrong(key, "a fraction below 1 (0.1) or a percentage ('10%')", value)
        return float(value)

    def block_sizes(self) -> BlockSizeRange:
        value = self._get("block_sizes")
        if value is None:
            return ALL_BLOCK_SIZES
        if isinstance(value, list) and all(
            isinstance(item, int) and not isinstance(item, bool) for item in value
        ):
            value = ",".join(str(item) for item in value)
        if not isinstance(value, str):
            raise self._wrong("block_sizes", "a range string such as '>=65536'", value)
        try:
            return parse_block_sizes(value)
        except ValueError as error:
            raise RuleError(f"{self.where}: key 'block_sizes': {error}") from None

    def scope(self, algorithm_required: bool) -> Scope:
        algorithm = (
            self.string("algorithm") if algorithm_required else self.optional_string("algorithm")
        )
        return Scope(
            algorithm=algorithm,
            block_sizes=self.block_sizes(),
            source=self.optional_string("source"),
            key_bits=self.optional_int("key_bits"),
            op=self.optional_string("op"),
            place=self.place(),
            concurrency=self.optional_int("concurrency") or 1,
        )

    def place(self) -> str | None:
        value = self.optional_string("where")
        if value is not None and value not in Place.values():
            raise self._wrong("where", f"one of {', '.join(Place.values())}", value)
        return value
