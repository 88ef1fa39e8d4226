# SPDX-License-Identifier: MIT
"""LAVA test definitions and jobs (lab/lava_job.py): LAVA's own schema accepts them.

The validation runs Debian's lava-common (lava_common.schemas.validate, strict) under
/usr/bin/python3, as the dispatcher and the server do; one subprocess for every document.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.lab import lava_job
from pytest_hwcrypto.lab.lava_job import DefinitionSpec, JobSpec, JobSpecError

SYSTEM_PYTHON = "/usr/bin/python3"
# The dispatcher's schema (lava_common) and, where lava-server is installed, the server's
# own submission check, which is stricter (no `params` in an inline definition).
CHECK = """
import json, sys, yaml
from lava_common.schemas import validate
from lava_common.schemas.test.testdef import validate as validate_testdef
try:
    from django.conf import settings
    settings.configure(EXTRA_CONTEXT_VARIABLES=[])
    from lava_scheduler_app.schema import validate_submission
except ImportError:
    validate_submission = None
out = []
for kind, text in json.load(sys.stdin):
    data = yaml.safe_load(text)
    try:
        if kind == "definition":
            validate_testdef(data)
        else:
            validate(data, strict=True)
            if validate_submission is not None:
                validate_submission(data)
        out.append({"ok": True, "data": data, "server": validate_submission is not None})
    except Exception as error:
        out.append({"ok": False, "error": str(error), "data": data})
json.dump(out, sys.stdout)
"""


def lava_check(documents: list[tuple[str, str]]) -> list[dict[str, Any]]:
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import lava_common.schemas, yaml"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip("LAVA's schema: apt-get install --no-install-recommends lava-dispatcher")
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", CHECK],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        check=True,
    )
    answer: list[dict[str, Any]] = json.loads(done.stdout)
    return answer


PROFILE = '[board]\nname = "x"\n'
QEMU = JobSpec(
    definition=DefinitionSpec(wheel="http://10.0.2.2:8000/p.whl", profile_toml=PROFILE),
    kernel="file:///guest/vmlinuz",
    rootfs="file:///guest/guest.cpio",
)
BOARD = JobSpec(
    definition=DefinitionSpec(install="apt", wheel="https://example.org/p.whl"),
    device_type="beaglebone-black",
)


def test_lava_accepts_the_definition_and_the_jobs_and_reads_them_back_exactly() -> None:
    documents = [
        ("definition", lava_job.definition_yaml(QEMU.definition)),
        ("job", lava_job.job_yaml(QEMU)),
        ("job", lava_job.job_yaml(BOARD)),
    ]
    answers = lava_check(documents)
    assert [answer["ok"] for answer in answers] == [True, True, True], answers
    assert answers[0]["data"] == lava_job.definition(QEMU.definition)
    assert answers[1]["data"] == lava_job.job(QEMU)[0]
    assert answers[2]["data"] == lava_job.job(BOARD)[0]


def test_lava_refuses_a_broken_job_through_the_same_check() -> None:
    text = lava_job.job_yaml(QEMU).replace("visibility: public", "visibility: everyone")
    (answer,) = lava_check([("job", text)])
    assert not answer["ok"] and "visibility" in answer["error"]


def test_the_qemu_job_boots_the_guest_under_tcg_with_an_offload_engine() -> None:
    data, comments = lava_job.job(QEMU)
    assert comments == {}
    assert data["context"]["no_kvm"] == "True" and data["context"]["arch"] == "amd64"
    assert "-device virtio-crypto-pci,id=crypto0,cryptodev=cd0" in data["context"]["extra_options"]
    deploy, boot, test = (next(iter(action.values())) for action in data["actions"])
    assert deploy["images"]["initrd"]["url"] == "file:///guest/guest.cpio"
    assert boot["prompts"] == [lava_job.GUEST_PROMPT]
    repository = test["definitions"][0]["repository"]
    assert "params" not in repository  # lava-server refuses them inline
    exports = dict(
        step.removeprefix("export ").split("=", 1)
        for step in repository["run"]["steps"]
        if step.startswith("export ") and "=" in step
    )
    assert base64.b64decode(exports["PROFILE_B64"].strip("'")).decode() == PROFILE
    assert exports["WHEEL"] == "http://10.0.2.2:8000/p.whl"
    assert lava_job.definition(QEMU.definition)["params"]["WHEEL"] == exports["WHEEL"]


def test_a_real_device_type_gets_marked_placeholders() -> None:
    text = lava_job.job_yaml(BOARD)
    assert text.startswith("# Values marked REPLACE_ME")
    assert "# REPLACE_ME: your kernel build's URL" in text
    data, comments = lava_job.job(BOARD)
    assert data["actions"][0]["deploy"]["kernel"]["url"].startswith("https://REPLACE_ME")
    assert set(comments) >= {"actions.0.deploy", "actions.1.boot", "actions.0.deploy.kernel"}
    given = JobSpec(
        BOARD.definition,
        "beaglebone-black",
        kernel="https://k/zImage",
        rootfs="https://k/rootfs.tar.xz",
        dtb="https://k/am335x-boneblack.dtb",
    )
    assert "REPLACE_ME.invalid" not in lava_job.job_yaml(given)


def test_the_definition_installs_as_users_do_and_reports_every_case() -> None:
    steps = "\n".join(lava_job.definition(QEMU.definition)["run"]["steps"])
    assert "python3 -m venv --system-site-packages" in steps
    assert 'pip" install -q --no-deps "$WHEEL"' in steps
    assert "--hwcrypto-lava" in steps and 'lava-test-raise "hwcrypto: installing' in steps
    assert lava_job.RESULTS_BEGIN in steps


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (JobSpec(DefinitionSpec(wheel="w.whl")), "needs --kernel URL and --rootfs URL"),
        (JobSpec(DefinitionSpec(install="conda")), "--install 'conda'"),
        (JobSpec(DefinitionSpec(install="wheel")), "needs --wheel"),
    ],
)
def test_bad_choices_are_one_line(spec: JobSpec, message: str) -> None:
    with pytest.raises(JobSpecError, match=message):
        lava_job.job(spec)


def test_the_cli_writes_them_and_says_what_is_wrong_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_hwcrypto.cli import main

    out = tmp_path / "job.yaml"
    argv = ["lava", "job", "--kernel", "file:///k", "--rootfs", "file:///r", "--wheel", "w.whl"]
    assert main([*argv, "-o", str(out), "--", "-k", "cbc"]) == 0
    assert "export PYTEST_ARGS='-k cbc'" in out.read_text()
    assert main(["lava", "job", "--wheel", "w.whl"]) == 2
    assert main(["lava", "definition", "--wheel", "w", "--suite", "nope"]) == 2
    assert main(["lava", "definition", "--wheel", "w", "--profile", str(tmp_path / "no")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert [line.split(":")[1].strip() for line in errors if "error" in line] == ["error"] * 3
    assert any("--suite: unknown suite nope" in line for line in errors)
