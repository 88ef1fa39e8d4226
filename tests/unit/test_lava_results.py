# SPDX-License-Identifier: MIT
"""A LAVA job's test cases back to a results file (lab/lava_results.py).

tests/data/lava/lava-lab-job-qemu-strict.log is an excerpt of a job's log as this project's
local lab served it through its REST API (`hwcrypto lava lab submit --profile qemu-strict`
on the QEMU device, job 1, 2026-12-06): the hwcrypto suite's results lines (the AF_ALG
cbc(aes) cells of three drivers and their ratios, a few tcrypt ones), the job's, and the
results file the definition printed.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.lab import lava_local, lava_results
from pytest_hwcrypto.lab.lava_results import Case, Job, LavaResultsError
from pytest_hwcrypto.vocabulary import MIB

LOG = Path(__file__).parent.parent / "data" / "lava" / "lava-lab-job-qemu-strict.log"


def log_cases() -> list[dict[str, Any]]:
    found = []
    for line in LOG.read_text().splitlines():
        level, message = lava_results.parse_log_line(line)
        if level == "results" and isinstance(message, dict):
            found.append(message)
    return found


def cases_file(tmp_path: Path, with_results_file: bool) -> Path:
    outcome = lava_local.RunOutcome(
        finished=True,
        cases=log_cases(),
        results_file=lava_results.results_from_log(LOG.read_text()) if with_results_file else None,
        failure_comment=None,
        seconds=1.0,
    )
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(lava_local.cases_document(outcome, "7")))
    return path


def test_the_log_carries_measured_cases_and_a_failed_rule() -> None:
    cases = [c for c in log_cases() if c.get("definition") == "0_hwcrypto"]
    measured = [c for c in cases if "measurement" in c]
    assert len(measured) >= 8 and all(c["units"] for c in measured)
    assert [c["case"] for c in cases if c["result"] == "fail"] == [
        "throughput.test_profile_rule_hw-beats-sw_cbc_aes_offload_vs_generic"
    ]
    afalg = {c["case"].split(".")[4] for c in measured if c["case"].startswith("afalg.")}
    assert afalg == {"virtio_crypto_aes_cbc", "cbc-aes-aesni", "cbc_aes-generic"}


def test_cases_alone_make_comparable_measurements_and_failed_verdicts(tmp_path: Path) -> None:
    job = lava_results.read_job_file(cases_file(tmp_path, with_results_file=False), None)
    assert job.failure is None and job.job_id == "7"
    results = lava_results.to_results(job)
    assert len(results.measurements) >= 8
    first = results.measurements[0]
    case = next(c for c in job.hwcrypto_cases() if c.name == first.extra["lava_case"])
    assert first.bytes_per_second == pytest.approx(float(case.measurement or 0) * MIB)
    assert first.block_size is not None and first.op in ("encrypt", "decrypt")
    assert any(not verdict.passed for verdict in results.verdicts)
    assert "failed" in lava_results.summary_line(job)


def test_the_results_file_from_the_log_wins(tmp_path: Path) -> None:
    job = lava_results.read_job_file(cases_file(tmp_path, with_results_file=True), None)
    results = lava_results.to_results(job)
    assert results.kernel.get("release")  # only the run's own file knows the kernel
    assert any("(" in m.algorithm for m in results.measurements)  # exact kernel names
    assert results.environment["lava"]["job"] == "7"


def test_a_measured_case_name_round_trips() -> None:
    case = Case("0_hwcrypto", "afalg.cbc_aes.128.encrypt.cbc-aes-aesni.4096", "pass", 12.5, "MiB/s")
    measurement = lava_results.measurement_from_case(case)
    assert measurement is not None
    assert (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.op,
        measurement.driver,
        measurement.block_size,
    ) == ("afalg", "cbc_aes", 128, "encrypt", "cbc-aes-aesni", 4096)
    no_key = Case("0_hwcrypto", "cryptsetup.aes-xts.encrypt.software.all", "pass", 1.0, "MiB/s")
    measured = lava_results.measurement_from_case(no_key)
    assert measured is not None and measured.key_bits is None and measured.block_size is None


@pytest.mark.parametrize(
    ("cases", "health", "comment", "reason"),
    [
        ([], "Incomplete", "Infrastructure error: login timed out", "login timed out"),
        (
            [
                Case(
                    "lava",
                    "job",
                    "fail",
                    metadata={"error_type": "Test", "error_msg": "hwcrypto: installing failed"},
                )
            ],
            None,
            None,
            "Test: hwcrypto: installing failed",
        ),
        ([Case("lava", "auto-login-action", "fail")], "Incomplete", None, "auto-login-action"),
        ([], "Canceled", None, "job Canceled"),
    ],
)
def test_a_failed_job_says_lavas_reason_in_one_line(
    cases: list[Case], health: str | None, comment: str | None, reason: str
) -> None:
    failure = lava_results.failure_of(cases, health, comment)
    assert failure is not None and reason in failure and "\n" not in failure
    job = Job("9", cases, health, failure, where="http://lava")
    assert lava_results.summary_line(job).startswith("hwcrypto lava: job 9 on http://lava did not")


def test_lavas_folded_metadata_is_read_whole() -> None:
    """The REST API's metadata as lava-server sent it for a job whose install failed."""
    metadata = (
        "case: job\ndefinition: lava\nerror_msg: 'hwcrypto: installing the plugin (wheel "
        "http://10.0.2.2:43569/pytest_hwcrypto-0.0.0-py3-none-any.whl)\n  failed'\n"
        "error_type: Test\nresult: fail\n"
    )
    (case,) = lava_results.cases_from_json(
        [{"suite": "lava", "name": "job", "result": "fail", "metadata": metadata}]
    )
    assert lava_results.failure_of([case], "Incomplete", None) == (
        "Test: hwcrypto: installing the plugin (wheel "
        "http://10.0.2.2:43569/pytest_hwcrypto-0.0.0-py3-none-any.whl) failed"
    )


def test_a_complete_job_has_no_failure() -> None:
    assert lava_results.failure_of([Case("lava", "job", "pass")], "Complete", None) is None


class _Api(http.server.BaseHTTPRequestHandler):
    """LAVA's REST API shape for one job (unit test of the paging and the wording only;
    the real server answers in the local lab)."""

    pages: dict[str, Any] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    tests = [
        {
            "suite": 5,
            "name": "afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096",
            "result": "pass",
            "measurement": "10.5",
            "units": "MiB/s",
        },
        {"suite": 5, "name": "throughput.test_profile_rule_x", "result": "fail"},
        {"suite": 6, "name": "job", "result": "pass", "measurement": None, "units": ""},
    ]
    page_2 = "/api/v0.2/jobs/12/tests/?page=2"
    _Api.pages = {
        "/api/v0.2/jobs/12/": {"id": 12, "state": "Finished", "health": "Complete"},
        "/api/v0.2/jobs/12/suites/": {
            "results": [{"id": 5, "name": "0_hwcrypto"}, {"id": 6, "name": "lava"}],
            "next": None,
        },
        "/api/v0.2/jobs/12/tests/": {"results": tests[:2], "next": f"{base}{page_2}"},
        "/api/v0.2/jobs/12/tests/?page=2": {"results": tests[2:], "next": None},
        "/api/v0.2/jobs/12/logs/": '- {"dt": "x", "lvl": "target", "msg": "hello"}\n',
        "/api/v0.2/jobs/13/": {"id": 13, "state": "Running", "health": "Unknown"},
    }
    yield base
    server.shutdown()
    server.server_close()


def test_a_job_read_from_the_rest_api_across_pages(api: str) -> None:
    job = lava_results.fetch_job(api, "12")
    assert job.failure is None
    assert [c.name for c in job.hwcrypto_cases()] == [
        "afalg.cbc_aes.128.encrypt.cbc_aes-generic.4096",
        "throughput.test_profile_rule_x",
    ]
    results = lava_results.to_results(job)
    assert results.measurements[0].bytes_per_second == pytest.approx(10.5 * MIB)
    assert [v.passed for v in results.verdicts] == [False]


@pytest.mark.parametrize(
    ("job_id", "message"),
    [("404", "job 404 not found on"), ("13", "is Running, not finished yet"), ("x", "a number")],
)
def test_server_mistakes_are_one_line(api: str, job_id: str, message: str) -> None:
    with pytest.raises(LavaResultsError, match=message):
        lava_results.fetch_job(api, job_id)


def test_an_unreachable_server_is_one_line() -> None:
    with pytest.raises(LavaResultsError, match=r"cannot reach http://127\.0\.0\.1:9"):
        lava_results.fetch_job("http://127.0.0.1:9", "1")


def test_cli_results_from_files_and_compare_across_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_hwcrypto.cli import main

    source = cases_file(tmp_path, with_results_file=False)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["lava", "results", "--file", str(source), "-o", str(first)]) == 1  # a rule failed
    assert main(["lava", "results", "--file", str(source), "-o", str(second)]) == 1
    assert main(["compare", str(first), str(second)]) == 0
    (tmp_path / "junk.json").write_text("[1, 2]")
    assert main(["lava", "results", "--file", str(tmp_path / "junk.json")]) == 2
    assert main(["lava", "results", "--file", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert "junk.json: not a LAVA test case: 1" in err and "none.json: No such file" in err
