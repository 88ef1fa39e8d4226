# SPDX-License-Identifier: MIT
"""The results JSON model (schema "pytest-hwcrypto/1"; docs/architecture.md, "Results JSON").

One file carries what a session (or `hwcrypto parse`) learnt: the kernel, the /proc/crypto
inventory, throughput measurements, findings and rule verdicts.  Other tools read these
files (`hwcrypto compare`, CI dashboards), so:

* loading validates every field and reports bad input in one line naming the file and the
  place (JSON line/column, or the entry and key), never with a traceback;
* keys this version does not know are kept (in each object's `extra`) and written back, so a
  file passed through an older tool loses nothing;
* optional fields that are unset are left out of the JSON rather than written as null, so
  parser output stays small and readable.

The only I/O here is `read_json_object`, `load_results` and `save_results`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, Union

from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.vocabulary import RESULTS_SCHEMA, FindingKind, RateUnit

SCHEMA = RESULTS_SCHEMA
FINDING_KINDS = frozenset(FindingKind.values())

PathLike = Union[str, "os.PathLike[str]"]

# Measurement.extra: measurements carrying the same value were sampled in the same rounds
# (measure/runner.py interleaves every cell of a plan, one sample each per round), so
# sample i of one and sample i of another were taken next to each other in time.
ROUNDS_KEY = "rounds_id"
# Measurement.extra: user-space speed (bytes/s, measure/host_speed.py) around each sample,
# aligned with `samples`: how much CPU the board had while sample i was taken.
HOST_SPEED_KEY = "host_speed"


class ResultsError(ValueError):
    """Bad results input; the message is one line naming the file and the place."""


@dataclass
class Measurement:
    """One throughput figure: an algorithm through one path, driver, key size and block size.

    `bytes_per_second` is the headline number (the median when samples exist).  `samples`
    are bytes/s per repetition; when present, verdicts use their statistics.  `ci_low` and
    `ci_high` carry an interval from a source that has no raw samples (pytest-benchmark).
    `extra[ROUNDS_KEY]` says which run's rounds the samples belong to, when they do.
    `concurrency` is how many requests were in flight at once (None: not a measured
    dimension, one at a time as far as the source says); `cpu_per_byte` is CPU seconds
    per byte of the measured path (measure/cpu.py says which CPU counts).
    """

    source: str
    algorithm: str
    driver: str | None
    key_bits: int | None
    block_size: int | None
    op: str
    bytes_per_second: float
    samples: list[float] = field(default_factory=list)
    ci_low: float | None = None
    ci_high: float | None = None
    cov: float | None = None
    cpu_seconds: float | None = None
    bytes_per_cpu_second: float | None = None
    driver_class: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    concurrency: int | None = None
    cpu_per_byte: float | None = None
    # What `bytes_per_second` counts: None (bytes/s, the default) or "op/s" (RateUnit):
    # public-key operations per second, where a block size means nothing.
    unit: str | None = None

    @property
    def level(self) -> int:
        """Requests in flight: `concurrency`, or 1 where the source does not say."""
        return self.concurrency or 1

    def sample_stats(self) -> SampleStats:
        """Statistics to decide on: from samples when present, else the point value."""
        if self.samples:
            return SampleStats.from_samples(self.samples)
        return SampleStats.from_point(self.bytes_per_second, self.ci_low, self.ci_high)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "source": self.source,
            "algorithm": self.algorithm,
            "driver": self.driver,
            "key_bits": self.key_bits,
            "block_size": self.block_size,
            "op": self.op,
            "bytes_per_second": self.bytes_per_second,
        }
        if self.samples:
            data["samples"] = list(self.samples)
        for name in _MEASUREMENT_OPTIONAL_NUMBERS:
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.driver_class is not None:
            data["driver_class"] = self.driver_class
        if self.concurrency is not None:
            data["concurrency"] = self.concurrency
        if self.cpu_per_byte is not None:
            data["cpu_per_byte"] = self.cpu_per_byte
        if self.unit is not None:
            data["unit"] = self.unit
        # extra keeps what has no field: a field's name there, written where the field is
        # None, would be read back as that field (an rng suite's extra "unit": "bytes/s"
        # once made the session's own results file unreadable)
        extra = {k: v for k, v in self.extra.items() if k not in _MEASUREMENT_FIELD_NAMES}
        return _with_extra(data, extra)

    @classmethod
    def from_json(cls, data: Any, where: str) -> Measurement:
        reader = _ObjectReader(data, where)
        measurement = cls(
            source=reader.string("source"),
            algorithm=reader.string("algorithm"),
            driver=reader.optional_string("driver"),
            key_bits=reader.optional_int("key_bits"),
            block_size=reader.optional_int("block_size"),
            op=reader.string("op"),
            bytes_per_second=reader.number("bytes_per_second"),
            samples=reader.number_list("samples"),
            ci_low=reader.optional_number("ci_low"),
            ci_high=reader.optional_number("ci_high"),
            cov=reader.optional_number("cov"),
            cpu_seconds=reader.optional_number("cpu_seconds"),
            bytes_per_cpu_second=reader.optional_number("bytes_per_cpu_second"),
            driver_class=reader.optional_string("driver_class"),
            concurrency=reader.optional_int("concurrency"),
            cpu_per_byte=reader.optional_number("cpu_per_byte"),
            unit=reader.optional_string("unit"),
        )
        if measurement.unit is not None and measurement.unit not in RATE_UNITS:
            raise ResultsError(
                f"{where}: 'unit' must be one of {', '.join(RATE_UNITS)}, not {measurement.unit!r}"
            )
        if measurement.concurrency is not None and measurement.concurrency < 1:
            raise ResultsError(f"{where}: 'concurrency' must be 1 or more")
        measurement.extra = reader.unread()
        return measurement


RATE_UNITS = tuple(str(unit) for unit in RateUnit)
_MEASUREMENT_FIELD_NAMES = frozenset(f.name for f in fields(Measurement)) - {"extra"}
_MEASUREMENT_OPTIONAL_NUMBERS = ("ci_low", "ci_high", "cov", "cpu_seconds", "bytes_per_cpu_second")


@dataclass
class Finding:
    """Something worth a human's attention, found with or without a rule."""

    kind: str
    algorithm: str
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in FINDING_KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r} (known: {_known(FINDING_KINDS)})")

    def to_json(self) -> dict[str, Any]:
        data = {"kind": self.kind, "algorithm": self.algorithm, "detail": self.detail}
        return _with_extra(data, self.extra)

    @classmethod
    def from_json(cls, data: Any, where: str) -> Finding:
        reader = _ObjectReader(data, where)
        kind = reader.string("kind")
        if kind not in FINDING_KINDS:
            raise ResultsError(
                f"{where}: unknown finding kind {kind!r} (known: {_known(FINDING_KINDS)})"
            )
        finding = cls(
            kind=kind, algorithm=reader.string("algorithm"), detail=reader.string("detail")
        )
        finding.extra = reader.unread()
        return finding


@dataclass
class Verdict:
    """The outcome of one rule: passed or not, and a message with the numbers."""

    rule: str
    passed: bool
    message: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = {"rule": self.rule, "passed": self.passed, "message": self.message}
        return _with_extra(data, self.extra)

    @classmethod
    def from_json(cls, data: Any, where: str) -> Verdict:
        reader = _ObjectReader(data, where)
        verdict = cls(
            rule=reader.string("rule"),
            passed=reader.boolean("passed"),
            message=reader.string("message"),
        )
        verdict.extra = reader.unread()
        return verdict


@dataclass(frozen=True)
class InventoryItem:
    """What the verdicts need of one /proc/crypto entry in a results file, typed.

    Results keep the inventory as the JSON objects they read (every key survives a round
    trip); `Results.inventory_items()` and `inventory_items()` give this view of them.
    Missing or malformed fields become None: old files and other tools' files differ.
    """

    name: str | None
    driver: str | None
    driver_class: str | None = None
    priority: int | None = None
    winner: bool | None = None
    # What decided driver_class ("sysfs: module virtio_crypto bound to ..."); older files: None.
    class_evidence: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InventoryItem:
        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value not in (None, "") else None

        priority, winner = data.get("priority"), data.get("winner")
        is_number = isinstance(priority, int) and not isinstance(priority, bool)
        return cls(
            name=text("name"),
            driver=text("driver"),
            driver_class=text("class"),
            priority=priority if is_number else None,
            winner=winner if isinstance(winner, bool) else None,
            class_evidence=text("class_evidence"),
        )


def inventory_items(entries: Sequence[Mapping[str, Any]]) -> list[InventoryItem]:
    return [InventoryItem.from_json(entry) for entry in entries]


@dataclass
class Results:
    """A whole results file."""

    kernel: dict[str, Any] = field(default_factory=dict)
    inventory: list[dict[str, Any]] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    # What else the numbers depend on: board, CPU, tools, plugin version, seed (written
    # only when known: parser output has none).
    environment: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def inventory_items(self) -> list[InventoryItem]:
        return inventory_items(self.inventory)

    def to_json(self) -> dict[str, Any]:
        data = {
            "schema": SCHEMA,
            "kernel": dict(self.kernel),
            "inventory": [dict(entry) for entry in self.inventory],
            "measurements": [measurement.to_json() for measurement in self.measurements],
            "findings": [finding.to_json() for finding in self.findings],
            "verdicts": [verdict.to_json() for verdict in self.verdicts],
        }
        if self.environment:
            data["environment"] = dict(self.environment)
        return _with_extra(data, self.extra)

    @classmethod
    def from_json(cls, data: Any, source_name: str) -> Results:
        """Validate and build from a decoded JSON document; errors name `source_name`."""
        reader = _ObjectReader(data, source_name)
        if "schema" not in data:
            raise ResultsError(
                f"{source_name}: not a pytest-hwcrypto results file (no 'schema' key)"
            )
        schema = reader.optional_string("schema")
        if schema != SCHEMA:
            raise ResultsError(
                f"{source_name}: unsupported schema {schema!r} (expected {SCHEMA!r})"
            )
        results = cls(
            kernel=reader.mapping("kernel"),
            inventory=[
                _plain_object(entry, f"{source_name}: inventory[{index}]")
                for index, entry in enumerate(reader.array("inventory"))
            ],
            measurements=[
                Measurement.from_json(entry, f"{source_name}: measurements[{index}]")
                for index, entry in enumerate(reader.array("measurements"))
            ],
            findings=[
                Finding.from_json(entry, f"{source_name}: findings[{index}]")
                for index, entry in enumerate(reader.array("findings"))
            ],
            verdicts=[
                Verdict.from_json(entry, f"{source_name}: verdicts[{index}]")
                for index, entry in enumerate(reader.array("verdicts"))
            ],
            environment=reader.mapping("environment"),
        )
        results.extra = reader.unread()
        return results


RESULTS_SCHEMA_FILE = "results.schema.json"
COMPARE_SCHEMA_FILE = "compare.schema.json"


def json_schema(name: str = RESULTS_SCHEMA_FILE) -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) shipped with the package: the results file's
    (`results.schema.json`) or `hwcrypto compare --json`'s (`compare.schema.json`)."""
    text = resources.files("pytest_hwcrypto.model").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def read_json_object(path: PathLike) -> dict[str, Any]:
    """Read a JSON file whose top level is an object; ResultsError names file and line/col."""
    name = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ResultsError(f"{name}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ResultsError(f"{name}: not UTF-8 text ({error.reason})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsError(
            f"{name}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(document, dict):
        raise ResultsError(
            f"{name}: expected a JSON object at the top level, got {_type_name(document)}"
        )
    return document


def load_results(path: PathLike) -> Results:
    """Load and validate a results file."""
    return Results.from_json(read_json_object(path), os.fspath(path))


def save_results(results: Results, path: PathLike) -> None:
    """Write `results` as JSON, atomically: a killed run never leaves half a file behind."""
    target = Path(path)
    text = json.dumps(results.to_json(), indent=2, allow_nan=False) + "\n"
    # a sibling temporary (same file system, so the rename is atomic) created with the
    # caller's umask, unlike tempfile's private 0600 files
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class _ObjectReader:
    """Typed, error-reporting access to one JSON object; remembers which keys were read."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise ResultsError(f"{where}: expected an object, got {_type_name(data)}")
        self._data = data
        self._where = where
        self._read: set[str] = set()

    def unread(self) -> dict[str, Any]:
        return {key: value for key, value in self._data.items() if key not in self._read}

    def _get(self, key: str, required: bool) -> Any:
        self._read.add(key)
        if key not in self._data:
            if required:
                raise ResultsError(f"{self._where}: missing key {key!r}")
            return None
        return self._data[key]

    def _wrong_type(self, key: str, expected: str, value: Any) -> ResultsError:
        return ResultsError(
            f"{self._where}: key {key!r} must be {expected}, "
            f"got {_type_name(value)} {_short_repr(value)}"
        )

    def string(self, key: str) -> str:
        value = self._get(key, required=True)
        if not isinstance(value, str):
            raise self._wrong_type(key, "a string", value)
        return value

    def optional_string(self, key: str) -> str | None:
        value = self._get(key, required=False)
        if value is not None and not isinstance(value, str):
            raise self._wrong_type(key, "a string or null", value)
        return value

    def boolean(self, key: str) -> bool:
        value = self._get(key, required=True)
        if not isinstance(value, bool):
            raise self._wrong_type(key, "true or false", value)
        return value

    def optional_int(self, key: str) -> int | None:
        value = self._get(key, required=False)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise self._wrong_type(key, "an integer or null", value)
        return value

    def number(self, key: str) -> float:
        value = self._get(key, required=True)
        if not _is_throughput(value):
            raise self._wrong_type(key, "a finite number >= 0", value)
        return float(value)

    def optional_number(self, key: str) -> float | None:
        value = self._get(key, required=False)
        if value is None:
            return None
        if not _is_throughput(value):
            raise self._wrong_type(key, "a finite number >= 0 or null", value)
        return float(value)

    def number_list(self, key: str) -> list[float]:
        value = self._get(key, required=False)
        if value is None:
            return []
        if not isinstance(value, list) or not all(_is_throughput(item) for item in value):
            raise self._wrong_type(key, "a list of finite numbers >= 0", value)
        return [float(item) for item in value]

    def mapping(self, key: str) -> dict[str, Any]:
        value = self._get(key, required=False)
        if value is None:
            return {}
        return _plain_object(value, f"{self._where}: {key}")

    def array(self, key: str) -> Sequence[Any]:
        value = self._get(key, required=False)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong_type(key, "a list", value)
        return value


def _with_extra(known: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Known keys first (readable files), then preserved unknown keys; known keys win."""
    for key, value in extra.items():
        known.setdefault(key, value)
    return known


def _plain_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ResultsError(f"{where}: expected an object, got {_type_name(value)}")
    return dict(value)


def _is_throughput(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0


def _type_name(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _known(names: frozenset[str]) -> str:
    return ", ".join(sorted(names))
