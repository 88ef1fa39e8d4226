# SPDX-License-Identifier: MIT
"""LAVA test cases of a run: names, grouping and the lines LAVA reads (pure).

LAVA's test shell reads results from the console: `<LAVA_SIGNAL_TESTSET START name>`,
`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=name RESULT=pass MEASUREMENT=12.5 UNITS=MiB/s>`,
`<LAVA_SIGNAL_TESTSET STOP>`; its `lava-test-case` / `lava-test-set` helpers print the
same lines. The dispatcher splits a signal's parameters on whitespace and each at `=`,
and refuses a test case id it has already seen in the job, so names here are:

* sanitised to letters, digits, `.`, `_` and `-` (everything else becomes `_`);
* at most 100 characters (LAVA's test case name field), a longer one cut and ended with
  a digest of the whole name, so two long names never meet;
* unique across the whole run, and stable across runs: cases are named in a sorted order
  (pytest node ids, measured cells), never in the order xdist workers finished them.

Each suite is one test set, holding its tests and its measurements (one case per measured
cell in MiB/s, one per HW/SW ratio). Tests outside the shipped suites go into a set named
after their module.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.report.junit_properties import SUITE_SOURCES
from pytest_hwcrypto.report.throughput_table import measurement_id, throughput_tables
from pytest_hwcrypto.vocabulary import XDIST_MEASURING_GROUP

MAX_NAME = 100
_DIGEST_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_UNDERSCORE_AT_DOT = re.compile(r"_*\._*")
PASS, FAIL, SKIP = "pass", "fail", "skip"
MIB_S = "MiB/s"
RATIO = "x"


def sanitize(name: str) -> str:
    """A name LAVA accepts: `test_x[cbc(aes)]` -> `test_x_cbc_aes`,
    `afalg.cbc(aes).128` -> `afalg.cbc_aes.128`."""
    clean = _UNSAFE.sub("_", name)
    clean = _UNDERSCORE_AT_DOT.sub(".", clean).strip("_.") or "unnamed"
    if len(clean) <= MAX_NAME:
        return clean
    digest = hashlib.sha256(name.encode()).hexdigest()[:_DIGEST_CHARS]
    return f"{clean[: MAX_NAME - _DIGEST_CHARS - 1]}-{digest}"


@dataclass(frozen=True)
class Case:
    name: str
    result: str  # pass | fail | skip
    measurement: float | None = None
    units: str | None = None

    def signal(self) -> str:
        words = [f"TEST_CASE_ID={self.name}", f"RESULT={self.result}"]
        if self.measurement is not None:
            words.append(f"MEASUREMENT={_number(self.measurement)}")
            if self.units:
                words.append(f"UNITS={self.units}")
        return f"<LAVA_SIGNAL_TESTCASE {' '.join(words)}>"

    def helper_argv(self) -> list[str]:
        argv = ["lava-test-case", self.name, "--result", self.result]
        if self.measurement is not None:
            argv += ["--measurement", _number(self.measurement)]
            if self.units:
                argv += ["--units", self.units]
        return argv


@dataclass(frozen=True)
class CaseSet:
    name: str
    cases: tuple[Case, ...]

    def signals(self) -> list[str]:
        return [
            f"<LAVA_SIGNAL_TESTSET START {self.name}>",
            *(case.signal() for case in self.cases),
            "<LAVA_SIGNAL_TESTSET STOP>",
        ]

    def helper_argvs(self) -> list[list[str]]:
        return [
            ["lava-test-set", "start", self.name],
            *(case.helper_argv() for case in self.cases),
            ["lava-test-set", "stop"],
        ]


@dataclass
class Outcomes:
    """Each test's LAVA result, from pytest's reports of its phases.

    A failure in any phase fails the test; a skip in setup or call skips it; otherwise it
    passed once its call passed.
    """

    results: dict[str, str] = field(default_factory=dict)
    sets: dict[str, str] = field(default_factory=dict)  # node id -> test set

    def record(self, nodeid: str, when: str, outcome: str, test_set: str) -> None:
        self.sets.setdefault(nodeid, test_set)
        current = self.results.get(nodeid)
        if outcome == "failed":
            self.results[nodeid] = FAIL
        elif current == FAIL:
            return
        elif outcome == "skipped" and when in ("setup", "call"):
            self.results[nodeid] = SKIP
        elif outcome == "passed" and when == "call":
            self.results[nodeid] = PASS


def case_sets(outcomes: Outcomes, results: Results) -> list[CaseSet]:
    """Every test and every measurement as LAVA test cases, one test set per suite."""
    used: set[str] = set()
    cases: dict[str, list[Case]] = {}
    for nodeid in sorted(outcomes.results):
        name = _unique(sanitize(_test_name(nodeid)), used)
        cases.setdefault(outcomes.sets[nodeid], []).append(Case(name, outcomes.results[nodeid]))
    for test_set, case in measurement_cases(results, used):
        cases.setdefault(test_set, []).append(case)
    return [CaseSet(sanitize(name), tuple(members)) for name, members in sorted(cases.items())]


def measurement_cases(results: Results, used: set[str]) -> list[tuple[str, Case]]:
    """(test set, case) per measured cell (MiB/s) and per HW/SW ratio (x)."""
    suite_of = _suite_of_source(SUITE_SOURCES)
    found: list[tuple[str, Case]] = []
    for table in throughput_tables(results):
        test_set = suite_of.get(table.source, "measurements")
        for row in table.rows:
            for size, mib_s in sorted(row.mib_s.items(), key=lambda item: item[0] or 0):
                cell = sanitize(measurement_id(table, row.driver, size))
                found.append((test_set, Case(_unique(cell, used), PASS, mib_s, MIB_S)))
                if size is not None and size in row.ratios:
                    ratio_name = _unique(sanitize(f"{cell}.ratio"), used)
                    found.append((test_set, Case(ratio_name, PASS, row.ratios[size], RATIO)))
    return found


def case_set_of(markers: Iterable[str], module: str, suites: Sequence[str]) -> str:
    """The suite a test belongs to (its `hwcrypto_<suite>` marker), else its module."""
    for marker in markers:
        suite = marker.removeprefix("hwcrypto_")
        if marker.startswith("hwcrypto_") and suite in suites:
            return suite
    return module


def _test_name(nodeid: str) -> str:
    """`suites/test_inventory.py::test_selftest_passed[aes-generic]` ->
    `inventory.test_selftest_passed[aes-generic]`: the module keeps same-named tests of
    two modules apart without a counter that would shift when the selection changes."""
    path, _, name = nodeid.partition("::")
    # pytest-xdist's loadgroup names a test's group after it: not part of its name
    name = name.removesuffix(f"@{XDIST_MEASURING_GROUP}")
    module = path.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
    return f"{module}.{name}" if name else module


def _unique(name: str, used: set[str]) -> str:
    candidate, count = name, 1
    while candidate in used:
        count += 1
        suffix = f"-{count}"
        candidate = f"{name[: MAX_NAME - len(suffix)]}{suffix}"
    used.add(candidate)
    return candidate


def _suite_of_source(suite_sources: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    return {source: suite for suite, sources in suite_sources.items() for source in sources}


def _number(value: float) -> str:
    """A decimal LAVA's Decimal() reads: no exponent, enough digits for 0.0300 MiB/s."""
    return f"{value:.6f}".rstrip("0").rstrip(".") if value else "0"
