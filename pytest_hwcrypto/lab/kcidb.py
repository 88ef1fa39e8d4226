# SPDX-License-Identifier: MIT
"""A run as KernelCI's KCIDB I/O data, schema v5.3 (pure): what `--hwcrypto-kcidb` writes.

KCIDB stores checkouts (the kernel source), builds (one kernel binary) and tests (one run
of one test on a build). A `pytest --hwcrypto` run becomes:

* one checkout and one build, identified by what the results file knows of the kernel
  (release, machine, the config digest): two runs on the same kernel name the same build,
  so KernelCI lines their tests up;
* one test per pytest test (PASS / FAIL / SKIP), per measured cell and per HW/SW ratio
  (DONE, with the figure in `number`: throughput as `value` bytes/s, `unit` "B/s",
  `prefix` "binary" -- shown as MiB/s --, a ratio dimensionless), and per board-profile
  rule (PASS / FAIL, its message in `comment`);
* a root test `hwcrypto` summarising them: FAIL if any of them failed.

Test paths: KCIDB allows only `[A-Za-z0-9_-]` in a path segment, dot-separated. The path
is `hwcrypto.<suite>.<the LAVA test case name>`, split at its dots; inside each segment
every run of other characters becomes one `_`, and `_` at either end is dropped -- the
spelling LAVA test cases already use (report/lava.py), so a lab's LAVA results and its
KCIDB tests carry the same names:

    cbc(aes)                         -> cbc_aes
    authenc(hmac(sha256),cbc(aes))   -> authenc_hmac_sha256_cbc_aes
    afalg cbc(aes) 128-bit encrypt, cbc-aes-aesni at 4096 B
        -> hwcrypto.throughput.afalg.cbc_aes.128.encrypt.cbc-aes-aesni.4096
    the same cell's HW/SW ratio     -> ....cbc-aes-aesni.4096.ratio
    the rule "hw-beats-sw cbc(aes)"  -> hwcrypto.rule.hw-beats-sw_cbc_aes

The spelling only depends on the name, never on the order tests ran in, so it is stable
across runs; a name longer than 100 characters keeps a digest of the whole name (LAVA's
rule). Test ids are `<origin>:<run>:<path>`, unique per run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.report.lava import FAIL, MIB_S, PASS, RATIO, SKIP, CaseSet, sanitize
from pytest_hwcrypto.vocabulary import MIB

SCHEMA_VERSION = {"major": 5, "minor": 3}
ROOT = "hwcrypto"
RULE_SET = "rule"
DEFAULT_ORIGIN = "hwcrypto"
ORIGIN_PATTERN = re.compile(r"^[a-z0-9_]+$")
_SEGMENT_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_STATUS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP"}
DONE = "DONE"


def check_origin(origin: str) -> str:
    """An origin KCIDB accepts (`[a-z0-9_]+`), else ValueError saying so."""
    if not ORIGIN_PATTERN.match(origin):
        raise ValueError(
            f"{origin!r} is not a KCIDB origin: lower-case letters, digits and '_' only"
        )
    return origin


def path_segment(name: str) -> str:
    """One level of a KCIDB test path: `cbc(aes)` -> `cbc_aes`."""
    return _SEGMENT_UNSAFE.sub("_", name).strip("_") or "unnamed"


def test_path(*names: str) -> str:
    """`hwcrypto`, `throughput`, `afalg.cbc(aes).128...` -> a dotted path KCIDB accepts.
    Each name is spelled as a LAVA test case name first (length rule), then split at dots."""
    segments: list[str] = []
    for name in names:
        segments += [path_segment(part) for part in sanitize(name).split(".") if part]
    return ".".join(segments)


def kcidb_data(
    results: Results,
    sets: Sequence[CaseSet],
    *,
    origin: str = DEFAULT_ORIGIN,
    run: str,
    start_time: str | None = None,
) -> dict[str, Any]:
    """The KCIDB document of one run: `sets` are the run's LAVA test sets
    (report.lava.case_sets), `run` makes the test ids unique (e.g. time and pid)."""
    check_origin(origin)
    kernel = results.kernel
    release = str(kernel.get("release") or "unknown")
    machine = str(kernel.get("machine") or "unknown")
    config = str(kernel.get("config_sha256") or "")
    checkout_id = f"{origin}:{release}"
    build_id = f"{origin}:{release}-{machine}" + (f"-{config[:12]}" if config else "")
    checkout: dict[str, Any] = {
        "id": checkout_id,
        "origin": origin,
        "comment": f"Linux {release}",
        "valid": True,
    }
    build: dict[str, Any] = {
        "id": build_id,
        "checkout_id": checkout_id,
        "origin": origin,
        "architecture": machine,
        "comment": f"Linux {release} ({machine})",
        "status": "PASS",
        "misc": {"kernel_release": release, **({"config_sha256": config} if config else {})},
    }
    common: dict[str, Any] = {"build_id": build_id, "origin": origin}
    if start_time:
        common["start_time"] = start_time
    environment = _environment(results)
    if environment:
        common["environment"] = environment
    tests: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(path: str, status: str, **fields: Any) -> None:
        unique, count = path, 1
        while unique in seen:  # two names that spell alike stay two tests
            count += 1
            unique = f"{path}-{count}"
        seen.add(unique)
        test = {"id": f"{origin}:{run}:{unique}", **common, "path": unique, "status": status}
        tests.append({**test, **fields})

    for case_set in sets:
        for case in case_set.cases:
            path = test_path(ROOT, case_set.name, case.name)
            if case.measurement is None:
                add(path, _STATUS.get(case.result, "ERROR"))
            else:
                add(path, DONE, number=_number(case.measurement, case.units))
    for verdict in results.verdicts:
        add(
            test_path(ROOT, RULE_SET, verdict.rule),
            "PASS" if verdict.passed else "FAIL",
            comment=verdict.message,
        )
    statuses = {test["status"] for test in tests}
    root_status = "FAIL" if "FAIL" in statuses else ("PASS" if tests else "SKIP")
    failed = [test["path"] for test in tests if test["status"] == "FAIL"]
    root: dict[str, Any] = {}
    if failed:
        root["comment"] = (
            f"{len(failed)} failed: " + ", ".join(failed[:5]) + (", ..." if len(failed) > 5 else "")
        )
    add(ROOT, root_status, **root)
    return {
        "version": dict(SCHEMA_VERSION),
        "checkouts": [checkout],
        "builds": [build],
        "tests": tests,
    }


def _number(value: float, units: str | None) -> dict[str, Any]:
    if units == MIB_S:
        return {"value": value * MIB, "unit": "B/s", "prefix": "binary"}
    if units == RATIO or not units:
        return {"value": value}
    return {"value": value, "unit": units}


def _environment(results: Results) -> dict[str, Any]:
    """Where the tests ran: the board the results file names, and its CPU, as KCIDB's
    free-form environment (comment + misc)."""
    env = results.environment
    board = env.get("board")
    misc = {key: env[key] for key in ("board", "cpu", "plugin_version") if env.get(key)}
    out: dict[str, Any] = {}
    if isinstance(board, dict) and board.get("kind"):
        name = board.get("profile_name")
        out["comment"] = f"board {board['kind']}" + (f", profile {name}" if name else "")
    if misc:
        out["misc"] = misc
    return out


def statuses(data: dict[str, Any]) -> dict[str, int]:
    """How many tests of a KCIDB document have each status (for messages and tests)."""
    counts: dict[str, int] = {}
    for test in _tests(data):
        counts[test["status"]] = counts.get(test["status"], 0) + 1
    return counts


def _tests(data: dict[str, Any]) -> Iterable[dict[str, Any]]:
    tests = data.get("tests", [])
    return tests if isinstance(tests, list) else []
