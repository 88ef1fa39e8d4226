# SPDX-License-Identifier: MIT
"""LAVA on this machine: the QEMU guest image, `lava-run` without a server, the local lab.

`hwcrypto lava run` is what CI runs: build (or find) the guest image, serve the wheel to
the guest over QEMU's user network (the guest reaches the host's 127.0.0.1 as 10.0.2.2),
write a job with `lava_job`, render the QEMU device dictionary from lava-server's own
template with the job's context, run Debian's `lava-run` on it, and turn the dispatcher's
`results` log lines into `cases.json`, which `hwcrypto lava results --file` reads like a
server's answer. Every process it starts (the wheel server, lava-run) is ended by its PID.

Debian's LAVA is Python 3 code installed for /usr/bin/python3 (Django, jinja2, voluptuous),
not for the plugin's virtualenv, so its pieces are called as programs.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, TextIO

from pytest_hwcrypto.lab.lava_results import parse_log_line, results_from_log

SYSTEM_PYTHON = "/usr/bin/python3"
LAVA_RUN = "lava-run"
DEVICE_TYPES = Path("/usr/share/lava-server/device-types")
GUEST_HOST_ADDRESS = "10.0.2.2"  # QEMU user networking: the host's loopback
INSTALL_HINT = (
    "apt-get install --no-install-recommends lava-dispatcher lava-server "
    "(lava-server only for its device-type templates)"
)


class LocalLavaError(RuntimeError):
    """LAVA cannot run here, or the job could not be run: one line saying why."""


def script(name: str) -> Path:
    """A shell script shipped in this package (guest-image.sh, lava-lab.sh)."""
    path = Path(str(resources.files("pytest_hwcrypto.lab").joinpath(name)))
    if not path.is_file():
        raise LocalLavaError(f"{name} is missing from the installed package ({path})")
    return path


def shipped_profile(name: str = "qemu-strict.toml") -> Path:
    return Path(str(resources.files("pytest_hwcrypto.lab").joinpath("profiles").joinpath(name)))


def missing_prerequisites() -> str | None:
    """Why lava-run cannot run here (and how to fix it), or None."""
    if os.geteuid() != 0:
        return "lava-run needs root (it runs QEMU and libguestfs as the dispatcher does)"
    if shutil.which(LAVA_RUN) is None or not Path(SYSTEM_PYTHON).exists():
        return f"lava-run not found: {INSTALL_HINT}"
    if not (DEVICE_TYPES / "qemu.jinja2").exists():
        return f"no {DEVICE_TYPES}/qemu.jinja2: {INSTALL_HINT}"
    return None


def build_guest(cache: Path | None, out: TextIO) -> Path:
    """The guest image's directory (vmlinuz, guest.cpio), built once and cached; the
    builder's progress lines go to `out` as they come."""
    argv = ["bash", str(script("guest-image.sh"))] + ([str(cache)] if cache else [])
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    assert process.stderr is not None and process.stdout is not None
    for line in process.stderr:
        out.write(line)
        out.flush()
    where = process.stdout.read().strip().splitlines()
    if process.wait() != 0 or not where:
        raise LocalLavaError("the guest image could not be built (its messages are above)")
    return Path(where[-1])


def render_device(context: Mapping[str, Any], target: Path) -> None:
    """The QEMU device dictionary, from lava-server's qemu.jinja2 with the job's context
    (what the server does when it schedules a job; lava-run alone does not)."""
    variables = {"boot_retry": 1, **context}
    program = (
        "import json, sys, jinja2\n"
        "env = jinja2.Environment(loader=jinja2.FileSystemLoader([sys.argv[1]]),"
        " autoescape=False, trim_blocks=True)\n"
        "template = env.from_string(\"{% extends 'qemu.jinja2' %}\")\n"
        "sys.stdout.write(template.render(**json.loads(sys.argv[2])))\n"
    )
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", program, str(DEVICE_TYPES), json.dumps(variables)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise LocalLavaError(f"rendering the qemu device dictionary failed: {tail[0]}")
    target.write_text(done.stdout, encoding="utf-8")


def validate_job(job_file: Path) -> str | None:
    """LAVA's own verdict on a job (lava_common.schemas.validate, strict): None when valid,
    else its message."""
    program = (
        "import sys, yaml\n"
        "from lava_common.schemas import validate\n"
        "validate(yaml.safe_load(open(sys.argv[1])), strict=True)\n"
    )
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", program, str(job_file)], capture_output=True, text=True, check=False
    )
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


@contextlib.contextmanager
def serve_directory(directory: Path) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 for the guest to fetch the wheel from (a thread of this
    process: nothing to end by PID, nothing left behind); yields its port."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class RunOutcome:
    finished: bool  # "Job finished correctly"
    cases: list[dict[str, Any]]
    results_file: dict[str, Any] | None
    failure_comment: str | None
    seconds: float


def run_lava(
    job_file: Path,
    device_file: Path,
    output_dir: Path,
    log_file: Path,
    progress: Callable[[str], None],
    timeout: float = 3600.0,
) -> RunOutcome:
    """Run lava-run on one job and device; progress lines as the job moves."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
        # LAVA builds its overlay disk with libguestfs: no KVM here, and keep libguestfs's
        # appliance (~675 MB) out of /var/tmp.
        "LIBGUESTFS_BACKEND_SETTINGS": "force_tcg",
        "LIBGUESTFS_CACHEDIR": str(_guestfs_cache()),
        "HOME": os.environ.get("HOME", "/root"),
    }
    _guestfs_cache().mkdir(parents=True, exist_ok=True)
    job_id = str(int(time.time()) % 1_000_000)
    argv = [LAVA_RUN, "--job-id", job_id, "--output-dir", str(output_dir / "out")]
    argv += ["--device", str(device_file), str(job_file)]
    started = time.monotonic()
    cases: list[dict[str, Any]] = []
    finished = False
    with open(log_file, "w", encoding="utf-8", buffering=1) as log:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert process.stdout is not None
        try:
            for line in _lines_until(process, timeout, started):
                log.write(line)
                level, message = parse_log_line(line)
                if level == "results" and isinstance(message, dict):
                    cases.append(message)
                    measured = sum(1 for case in cases if "measurement" in case)
                    _case_progress(message, progress, measured)
                elif isinstance(message, str):
                    if message.startswith("start: ") and message.count(".") == 0:
                        progress(f"lava-run: {message.split(' (')[0]}")
                    elif message == "Job finished correctly":
                        finished = True
        finally:
            if process.poll() is None:
                process.kill()  # our own lava-run, by its PID
            process.wait()
    text = log_file.read_text(encoding="utf-8", errors="replace")
    failure = None
    job_case = next((c for c in cases if c.get("case") == "job"), None)
    if job_case is not None and job_case.get("result") == "fail":
        failure = str(job_case.get("error_msg") or "the job failed")
    elif not finished:
        failure = "lava-run ended without 'Job finished correctly'"
    return RunOutcome(
        finished=finished,
        cases=cases,
        results_file=results_from_log(text),
        failure_comment=failure,
        seconds=time.monotonic() - started,
    )


def cases_document(outcome: RunOutcome, job_id: str) -> dict[str, Any]:
    """cases.json: the run's test cases in the REST API's shape, for `lava results --file`."""
    cases = []
    for entry in outcome.cases:
        case = {
            "suite": entry.get("definition", ""),
            "name": entry.get("case", ""),
            "result": entry.get("result", ""),
        }
        if "measurement" in entry:
            case["measurement"] = entry["measurement"]
            case["units"] = entry.get("units")
        metadata = {
            key: value
            for key, value in entry.items()
            if key not in ("case", "definition", "result", "measurement", "units")
        }
        if metadata:
            case["metadata"] = metadata
        cases.append(case)
    return {
        "job": job_id,
        "health": "Complete"
        if outcome.finished and outcome.failure_comment is None
        else "Incomplete",
        "failure_comment": outcome.failure_comment,
        "cases": cases,
        "results_file": outcome.results_file,
        "seconds": round(outcome.seconds, 1),
    }


_MEASURED_EVERY = 50


def _case_progress(
    entry: Mapping[str, Any], progress: Callable[[str], None], measured_so_far: int
) -> None:
    """A line per test case that is not a measurement; measurements only counted, every
    fiftieth (a job can send hundreds)."""
    suite = str(entry.get("definition", ""))
    if suite == "lava" and entry.get("case") not in ("job", "login-action"):
        return
    if "measurement" in entry:
        if measured_so_far % _MEASURED_EVERY == 0:
            progress(f"lava-run:   {suite}: {measured_so_far} measurements so far")
        return
    progress(f"lava-run:   {suite}/{entry.get('case')}: {entry.get('result')}")


def _lines_until(process: subprocess.Popen[str], timeout: float, started: float) -> Iterator[str]:
    assert process.stdout is not None
    for line in process.stdout:
        yield line
        if time.monotonic() - started > timeout:
            raise LocalLavaError(f"lava-run took more than {timeout:.0f} s: ended")


def _guestfs_cache() -> Path:
    """libguestfs's appliance (~675 MB), kept between runs beside the guest images rather
    than in every output directory."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path(os.environ.get("HOME", "/root")) / ".cache")
    return Path(base) / "pytest-hwcrypto" / "libguestfs"


def echo(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


LAB_DIR_ENV = "HWCRYPTO_LAB_DIR"
DEFAULT_LAB_DIR = Path("/var/lib/hwcrypto-lava-lab")


@dataclass(frozen=True)
class LocalLab:
    """The lab lava-lab.sh started: its XML-RPC URI (with the admin token) and REST URL."""

    uri: str
    url: str
    token: str

    @classmethod
    def find(cls, environ: Mapping[str, str] | None = None) -> LocalLab:
        env = os.environ if environ is None else environ
        lab = Path(env.get(LAB_DIR_ENV) or DEFAULT_LAB_DIR)
        try:
            uri = (lab / "uri").read_text().strip()
            token = (lab / "admin-token").read_text().strip()
        except OSError:
            raise LocalLavaError(
                f"no local lab in {lab}: start one with `hwcrypto lava lab start`"
            ) from None
        match = re.match(r"^(https?)://[^@/]*@([^/]+)/", uri)
        if match is None:
            raise LocalLavaError(f"{lab}/uri: not a lavacli URI")
        return cls(uri=uri, url=f"{match.group(1)}://{match.group(2)}", token=token)

    def submit(self, job_file: Path) -> str:
        done = subprocess.run(
            ["lavacli", "--uri", self.uri, "jobs", "submit", str(job_file)],
            capture_output=True,
            text=True,
            check=False,
        )
        job_id = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
        if not job_id or not job_id[0].isdigit():
            lines = (done.stderr or done.stdout).strip().splitlines()
            raise LocalLavaError(f"lavacli jobs submit refused the job: {lines[-1:] or '?'}")
        return job_id[0]

    def wait(self, job_id: str, progress: Callable[[str], None], timeout: float) -> None:
        """Until the job is finished, saying each state it passes through."""
        started, seen = time.monotonic(), ""
        while time.monotonic() - started < timeout:
            done = subprocess.run(
                ["lavacli", "--uri", self.uri, "jobs", "show", job_id],
                capture_output=True,
                text=True,
                check=False,
            )
            fields = dict(
                (key.strip(), value.strip())
                for key, _, value in (line.partition(":") for line in done.stdout.splitlines())
            )
            state = f"{fields.get('state', '?')} {fields.get('Health', fields.get('health', ''))}"
            if state != seen:
                progress(
                    f"lava-lab: job {job_id}: {state.strip()} ({time.monotonic() - started:.0f} s)"
                )
                seen = state
            if fields.get("state") == "Finished":
                return
            time.sleep(3)
        raise LocalLavaError(f"job {job_id} not finished after {timeout:.0f} s")
