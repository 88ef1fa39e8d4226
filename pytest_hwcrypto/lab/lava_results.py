# SPDX-License-Identifier: MIT
"""A finished LAVA job's test cases back to a results file (pure, plus one HTTP reader).

Where the cases come from:

* the server's REST API: `GET /api/v0.2/jobs/ID/` (health, failure comment) and
  `GET /api/v0.2/jobs/ID/tests/` (paged; each case with its suite, result, measurement
  and units), `GET /api/v0.2/jobs/ID/suites/` for the suites' names;
* a downloaded file: one of those pages' JSON, a JSON list of cases, or `lavacli results
  ID --yaml` (needs PyYAML, which Debian's lavacli brings);
* `hwcrypto lava run`'s `cases.json` (the cases `lava-run` logged).

What comes back: every case of the `hwcrypto` suite (LAVA names it `<n>_hwcrypto`). A case
with units MiB/s is a measured cell, named `source.algorithm[.key_bits].op.driver.size` by
report/lava.py; it becomes a `Measurement` with the case-name spelling of algorithm and
driver (`cbc_aes`, not `cbc(aes)`), so two jobs read back this way compare with each
other. A failed case without a measurement is a failed test or rule: a failed verdict.
When the job log carries the run's own results file (the definition prints it between
HWCRYPTO-RESULTS markers), that file is used instead: exact names, samples, findings.

A job that did not complete (never booted, install failed, device offline, cancelled) has
no results: `failure` holds LAVA's own reason -- the job's failure comment, else the error
of the `lava` suite's `job` case -- and the CLI says it in one line.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.lab.lava_job import DEFINITION_NAME, RESULTS_BEGIN, RESULTS_END
from pytest_hwcrypto.model.results import Measurement, Results, ResultsError, Verdict
from pytest_hwcrypto.report.lava import MIB_S
from pytest_hwcrypto.vocabulary import MIB

LAVA_SUITE = "lava"
_LOG_MESSAGE = re.compile(r'"lvl": "(?P<lvl>[a-z]+)", "msg": (?P<msg>.*)}\s*$')
_YAML_TAG = re.compile(r":\s*!\s+\"")
_BASE64_LINE = re.compile(r"^[A-Za-z0-9+/=]+$")
_SUITE_INDEX = re.compile(r"^\d+_")
_HTTP_TIMEOUT = 30.0


class LavaResultsError(ValueError):
    """Cannot read the job: one line naming the server, job or file."""


@dataclass(frozen=True)
class Case:
    suite: str
    name: str
    result: str
    measurement: float | None = None
    units: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Job:
    job_id: str
    cases: list[Case]
    health: str | None = None  # Complete, Incomplete, Canceled (None: unknown, a file)
    failure: str | None = None  # LAVA's reason when the job did not complete
    results_file: dict[str, Any] | None = None  # the run's own results, from the log
    where: str = ""

    def hwcrypto_cases(self) -> list[Case]:
        return [case for case in self.cases if suite_name(case.suite) == DEFINITION_NAME]


def suite_name(suite: str) -> str:
    """`0_hwcrypto` -> `hwcrypto` (LAVA prefixes a definition's suite with its index)."""
    return _SUITE_INDEX.sub("", suite, count=1)


def cases_from_json(data: Any, suites: Mapping[Any, str] | None = None) -> list[Case]:
    """Cases from the REST API's tests page (`{"results": [...]}`), a plain list of them, or
    lavacli's YAML list (already loaded); `suites` maps the API's suite ids to names."""
    items = data.get("results", []) if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise LavaResultsError("not a list of LAVA test cases")
    cases = []
    for item in items:
        if not isinstance(item, Mapping) or "name" not in item or "result" not in item:
            raise LavaResultsError(f"not a LAVA test case: {str(item)[:80]}")
        suite = item.get("suite", "")
        suite = (suites or {}).get(suite, suite)
        cases.append(
            Case(
                suite=str(suite),
                name=str(item["name"]),
                result=str(item["result"]),
                measurement=_number(item.get("measurement")),
                units=str(item["unit"] if "unit" in item else item.get("units") or "") or None,
                metadata=_metadata(item.get("metadata")),
            )
        )
    return cases


def failure_of(cases: Sequence[Case], health: str | None, comment: str | None) -> str | None:
    """LAVA's reason for a job that did not complete, in one line; None when it did."""
    job_case = next(
        (c for c in cases if suite_name(c.suite) == LAVA_SUITE and c.name == "job"), None
    )
    failed = (health not in (None, "Complete")) or (
        job_case is not None and job_case.result == "fail"
    )
    if not failed:
        return None
    reason = comment
    if not reason and job_case is not None:
        error = job_case.metadata.get("error_msg")
        kind = job_case.metadata.get("error_type")
        reason = f"{kind}: {error}" if kind and error else (error or None)
    if not reason:
        failed_lava = [
            c.name for c in cases if suite_name(c.suite) == LAVA_SUITE and c.result == "fail"
        ]
        reason = "failed actions: " + ", ".join(failed_lava) if failed_lava else None
    return " ".join(str(reason or f"job {health or 'failed'}").split())


def results_from_log(text: str) -> dict[str, Any] | None:
    """The run's results file printed between the definition's markers, if the log has it
    (a LAVA log is YAML lines `- {"dt": ..., "lvl": "target", "msg": "..."}`; plain console
    text works too)."""
    lines = [_message(line) for line in text.splitlines()]
    try:
        start = lines.index(RESULTS_BEGIN)
        end = lines.index(RESULTS_END, start)
    except ValueError:
        return None
    # between the markers: the base64 lines, and the shell's `+ ...` trace lines
    body = [line for line in lines[start + 1 : end] if _BASE64_LINE.match(line)]
    try:
        packed = base64.b64decode("".join(body), validate=False)
        data = json.loads(gzip.decompress(packed))
    except (binascii.Error, OSError, ValueError, EOFError):
        return None
    return data if isinstance(data, dict) else None


def to_results(job: Job) -> Results:
    """The results file of a completed job (module docstring: which source wins)."""
    if job.results_file is not None:
        try:
            results = Results.from_json(job.results_file, f"job {job.job_id} log")
        except ResultsError:
            results = None
        if results is not None:
            results.environment.setdefault("lava", {"job": job.job_id, "server": job.where})
            return results
    measurements: list[Measurement] = []
    verdicts: list[Verdict] = []
    for case in job.hwcrypto_cases():
        if case.measurement is not None and case.units == MIB_S:
            measurement = measurement_from_case(case)
            if measurement is not None:
                measurements.append(measurement)
        elif case.measurement is None and case.result in ("pass", "fail"):
            verdicts.append(Verdict(case.name, case.result == "pass", f"LAVA: {case.result}"))
    return Results(
        kernel={},
        measurements=measurements,
        verdicts=verdicts,
        environment={"lava": {"job": job.job_id, "server": job.where}},
    )


def measurement_from_case(case: Case) -> Measurement | None:
    """`afalg.cbc_aes.128.encrypt.cbc-aes-aesni.4096` (MiB/s) -> a Measurement."""
    parts = case.name.split(".")
    if len(parts) < 5 or case.measurement is None:
        return None
    source, *middle, op, driver, size = parts
    key_bits = None
    if len(middle) > 1 and middle[-1].isdigit():
        key_bits = int(middle.pop())
    return Measurement(
        source=source,
        algorithm=".".join(middle),
        driver=driver,
        key_bits=key_bits,
        block_size=int(size) if size.isdigit() else None,
        op=op,
        bytes_per_second=case.measurement * MIB,
        extra={"lava_case": case.name},
    )


def summary_line(job: Job) -> str:
    """One line about the job: its failure, else what it returned."""
    where = f"job {job.job_id}" + (f" on {job.where}" if job.where else "")
    if job.failure is not None:
        return f"hwcrypto lava: {where} did not complete: {job.failure}"
    cases = job.hwcrypto_cases()
    measured = sum(1 for case in cases if case.measurement is not None)
    failed = [case.name for case in cases if case.result == "fail"]
    text = f"hwcrypto lava: {where}: {len(cases)} hwcrypto test cases, {measured} with measurements"
    if failed:
        text += (
            f", {len(failed)} failed ({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''})"
        )
    return text


def read_job_file(path: Path, job_id: str | None) -> Job:
    """A downloaded file: REST JSON, a JSON list of cases, or lavacli's YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise LavaResultsError(f"{path}: {error.strerror or error}") from None
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = _yaml(text, path)
    return job_from_document(data, str(path), job_id)


def job_from_document(data: Any, where: str, job_id: str | None = None) -> Job:
    """A job from a decoded file (pure): `hwcrypto lava run`'s cases.json, the REST API's
    tests page, or a list of cases; errors name `where`."""
    try:
        if isinstance(data, Mapping) and "cases" in data:  # hwcrypto lava run's cases.json
            cases = cases_from_json(data["cases"])
            health, comment = data.get("health"), data.get("failure_comment")
            results_file = data.get("results_file")
        else:
            cases, health, comment, results_file = cases_from_json(data), None, None, None
    except LavaResultsError as error:
        raise LavaResultsError(f"{where}: {error}") from None
    return Job(
        job_id=str(job_id or (data.get("job") if isinstance(data, Mapping) else None) or "?"),
        cases=cases,
        health=health,
        failure=failure_of(cases, health, comment),
        results_file=results_file if isinstance(results_file, dict) else None,
        where=where,
    )


def fetch_job(server: str, job_id: str, token: str | None = None) -> Job:
    """The job, its cases and its log from a LAVA server's REST API (v0.2)."""
    base = server.rstrip("/")
    if not re.match(r"^https?://", base):
        raise LavaResultsError(f"--server {server!r}: give a URL such as http://lava:8000")
    if not str(job_id).isdigit():
        raise LavaResultsError(f"--job {job_id!r}: a LAVA job id is a number")
    api = f"{base}/api/v0.2/jobs/{job_id}"
    detail = _get_json(f"{api}/", token, server, job_id)
    state = detail.get("state")
    if state not in (None, "Finished"):
        raise LavaResultsError(f"job {job_id} on {server} is {state}, not finished yet")
    suites = {
        s.get("id"): str(s.get("name")) for s in _pages(f"{api}/suites/", token, server, job_id)
    }
    cases = cases_from_json(list(_pages(f"{api}/tests/", token, server, job_id)), suites)
    results_file = None
    with contextlib.suppress(LavaResultsError):  # the cases alone still make a results file
        results_file = results_from_log(_get(f"{api}/logs/", token, server, job_id))
    health = detail.get("health")
    return Job(
        job_id=str(job_id),
        cases=cases,
        health=str(health) if health else None,
        failure=failure_of(cases, str(health) if health else None, detail.get("failure_comment")),
        results_file=results_file,
        where=base,
    )


def _pages(url: str, token: str | None, server: str, job_id: str) -> Iterable[Mapping[str, Any]]:
    next_url: str | None = url
    while next_url:
        page = _get_json(next_url, token, server, job_id)
        items = page.get("results", [])
        yield from (item for item in items if isinstance(item, Mapping))
        next_url = page.get("next") or None


def _get_json(url: str, token: str | None, server: str, job_id: str) -> dict[str, Any]:
    text = _get(url, token, server, job_id)
    try:
        data = json.loads(text)
    except ValueError:
        raise LavaResultsError(f"{url}: the server did not answer JSON") from None
    if not isinstance(data, dict):
        raise LavaResultsError(f"{url}: unexpected answer")
    return data


def _get(url: str, token: str | None, server: str, job_id: str) -> str:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Token {token}")
    try:
        with urllib.request.urlopen(request, timeout=_HTTP_TIMEOUT) as answer:
            body: bytes = answer.read()
            return body.decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise LavaResultsError(f"job {job_id} not found on {server}") from None
        raise LavaResultsError(f"{url}: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise LavaResultsError(f"cannot reach {server}: {reason}") from None


def parse_log_line(line: str) -> tuple[str | None, Any]:
    """(level, message) of one LAVA log line, `{"dt": ..., "lvl": "results", "msg": {...}}`
    (lava-run's output; a server's log has `- ` before it). The dispatcher writes YAML flow
    mappings that are JSON but for `! "..."` tags on some strings."""
    match = _LOG_MESSAGE.search(line)
    if match is None:
        return None, None
    raw = _YAML_TAG.sub(': "', match.group("msg"))
    try:
        return match.group("lvl"), json.loads(raw)
    except ValueError:
        return match.group("lvl"), None


def _message(line: str) -> str:
    """The text a log line carries: a target line's message, or the line itself."""
    level, message = parse_log_line(line)
    if level is not None and isinstance(message, str):
        return message.strip()
    return line.strip()


def _number(value: Any) -> float | None:
    if value in (None, "", "None"):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _metadata(value: Any) -> Mapping[str, Any]:
    """The API gives a case's metadata as YAML text ({key: value} lines): read the flat
    `key: value` pairs without a YAML parser."""
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, str):
        return {}
    pairs: dict[str, str] = {}
    last = None
    for line in value.splitlines():
        if line.startswith((" ", "\t")) and last is not None:  # YAML folded a long value
            pairs[last] += " " + line.strip()
            continue
        key, colon, rest = line.partition(":")
        last = None
        if colon and key and not key.startswith(("-", "{")):
            last = key.strip()
            pairs[last] = rest.strip()
    return {key: text.strip("'\"") for key, text in pairs.items()}


def _yaml(text: str, path: Path) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise LavaResultsError(
            f"{path}: not JSON, and reading lavacli's YAML needs PyYAML (apt-get install "
            "python3-yaml, or pip install pyyaml); or download the REST API's JSON"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise LavaResultsError(f"{path}: neither JSON nor YAML ({error})") from None
