# SPDX-License-Identifier: MIT
"""LAVA test definitions and jobs that run the shipped suites on a lab's boards (pure).

`definition(spec)` is a Lava-Test Test Definition 1.0: it installs the plugin on the device
the way users install it (README, "Installing on a board") and runs the chosen suites with
`--hwcrypto-lava`, so every test, measurement (MiB/s) and HW/SW ratio (x) arrives as a LAVA
test case and every failed rule as a failed one. Install modes (`params: INSTALL`):

* `wheel` -- a venv over the system's python3-* packages and `pip install --no-deps WHEEL`
  (WHEEL: a URL or a path on the device): the Debian-image path, no PyPI needed;
* `apt` -- the same, after `apt-get install` of Debian's python3-* packages;
* `pypi` -- a fresh venv and `pip install WHEEL` (or `pytest-hwcrypto`) with dependencies;
* `none` -- the image already has it: `python3 -m pytest`.

A failed install ends the job through `lava-test-raise`, so LAVA itself reports why.

`job(spec)` wraps it in a job (deploy, boot, test, timeouts, context). For `qemu` every
part is known (kernel and guest initramfs URLs, TCG options, virtio-crypto); for any other
device type the deploy and boot parts depend on the lab's device dictionary and images,
so they are written with `REPLACE_ME` values and a comment above each one.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_hwcrypto.lab.yaml_text import to_yaml

DEFINITION_NAME = "hwcrypto"
INSTALL_MODES = ("wheel", "apt", "pypi", "none")
PLACEHOLDER = "REPLACE_ME"
GUEST_PROMPT = "hwcrypto-guest:~# "
QEMU = "qemu"
DEBIAN_PYTHON_PACKAGES = (
    "python3-venv python3-pytest python3-pytest-benchmark python3-pytest-xdist "
    "python3-pexpect python3-cryptography python3-cryptography-vectors"
)
# Console markers around the results file, which `hwcrypto lava results` can read back
# from the job log for every field the test case names leave out.
RESULTS_BEGIN = "HWCRYPTO-RESULTS-BEGIN"
RESULTS_END = "HWCRYPTO-RESULTS-END"
DEVICE_RESULTS = "/tmp/hwcrypto-results.json"
DEVICE_KCIDB = "/tmp/hwcrypto-kcidb.json"


class JobSpecError(ValueError):
    """A bad choice for a definition or job; one line naming the option."""


@dataclass(frozen=True)
class DefinitionSpec:
    suites: str = "inventory,throughput"
    install: str = "wheel"
    wheel: str = ""
    profile_toml: str | None = None  # the board profile's text, carried inside the job
    pytest_args: Sequence[str] = ()
    kcidb_origin: str | None = None

    def check(self) -> None:
        if self.install not in INSTALL_MODES:
            raise JobSpecError(
                f"--install {self.install!r}: choose one of {', '.join(INSTALL_MODES)}"
            )
        if self.install in ("wheel", "apt") and not self.wheel:
            raise JobSpecError(f"--install {self.install} needs --wheel URL-or-path-on-device")


@dataclass(frozen=True)
class JobSpec:
    definition: DefinitionSpec = field(default_factory=DefinitionSpec)
    device_type: str = QEMU
    kernel: str | None = None
    rootfs: str | None = None  # qemu: the guest initramfs (cpio); others: the rootfs
    dtb: str | None = None
    job_name: str | None = None
    timeout_minutes: int = 40
    test_minutes: int = 30
    memory_mb: int = 2048
    virtio_crypto: bool = True
    tags: Sequence[str] = ()


def definition(spec: DefinitionSpec, inline: bool = False) -> dict[str, Any]:
    """The Lava-Test Test Definition 1.0 (a mapping; `definition_yaml` for text).

    Standing alone (a file in a git repository) it carries `params`, which a job's
    `parameters` override. Inline in a job, lava-server's submission schema allows no
    `params` (only metadata, install, run, parse), so the values become `export` lines at
    the top of the steps."""
    spec.check()
    profile = base64.b64encode(spec.profile_toml.encode()).decode() if spec.profile_toml else ""
    kcidb = f" --hwcrypto-kcidb={DEVICE_KCIDB}" if spec.kcidb_origin else ""
    origin = f" --hwcrypto-kcidb-origin={spec.kcidb_origin}" if spec.kcidb_origin else ""
    steps = [
        "cd /tmp",
        'export HWCRYPTO_VENV="${VENV:-/tmp/hwcrypto-venv}"',
        # Debian's own python3-* packages, for images that lack them (apt mode only).
        'if [ "$INSTALL" = apt ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive '
        f"apt-get install -y -q --no-install-recommends {DEBIAN_PYTHON_PACKAGES} "
        '|| lava-test-raise "hwcrypto: apt-get install of the python3 packages failed"; fi',
        'case "$INSTALL" in '
        "none) HWCRYPTO_PY=python3 ;; "
        'pypi) python3 -m venv "$HWCRYPTO_VENV" && "$HWCRYPTO_VENV/bin/pip" install -q '
        '"${WHEEL:-pytest-hwcrypto}" && HWCRYPTO_PY="$HWCRYPTO_VENV/bin/python" ;; '
        '*) python3 -m venv --system-site-packages "$HWCRYPTO_VENV" && '
        '"$HWCRYPTO_VENV/bin/pip" install -q --no-deps "$WHEEL" && '
        'HWCRYPTO_PY="$HWCRYPTO_VENV/bin/python" ;; esac',
        'if [ -n "$HWCRYPTO_PY" ] && "$HWCRYPTO_PY" -c "import pytest_hwcrypto"; then '
        "lava-test-case hwcrypto-install --result pass; else "
        "lava-test-case hwcrypto-install --result fail; "
        'lava-test-raise "hwcrypto: installing the plugin ($INSTALL $WHEEL) failed"; fi',
        'HWCRYPTO_BOARD_ARG=""; if [ -n "$PROFILE_B64" ]; then '
        'echo "$PROFILE_B64" | base64 -d > /tmp/hwcrypto-profile.toml && '
        "HWCRYPTO_BOARD_ARG=--hwcrypto-board=/tmp/hwcrypto-profile.toml; fi",
        # PYTEST_ARGS is shell-quoted (shlex.join): `set --` gives the words back. pytest's
        # own exit code is not the job's: every test and rule is a test case.
        'eval "set -- $PYTEST_ARGS"; "$HWCRYPTO_PY" -m pytest -p no:cacheprovider -q -rN '
        '--hwcrypto --hwcrypto-suite="$SUITES" $HWCRYPTO_BOARD_ARG --hwcrypto-lava '
        f'--hwcrypto-json={DEVICE_RESULTS}{kcidb}{origin} "$@" || true',
        f'if [ -s {DEVICE_RESULTS} ]; then echo "{RESULTS_BEGIN}"; '
        f'gzip -c {DEVICE_RESULTS} | base64; echo "{RESULTS_END}"; fi',
    ]
    params = {
        "INSTALL": spec.install,
        "WHEEL": spec.wheel,
        "VENV": "/tmp/hwcrypto-venv",
        "SUITES": spec.suites,
        "PROFILE_B64": profile,
        "PYTEST_ARGS": shlex.join(spec.pytest_args),
    }
    if inline:
        steps = [f"export {name}={shlex.quote(value)}" for name, value in params.items()] + steps
    document: dict[str, Any] = {
        "metadata": {
            "format": "Lava-Test Test Definition 1.0",
            "name": DEFINITION_NAME,
            "description": "pytest-hwcrypto: kernel crypto drivers registered, correct, "
            "really used and fast enough (the board profile's rules)",
            "os": ["debian"],
            "scope": ["functional", "performance"],
        },
        "run": {"steps": steps},
    }
    if not inline:
        document["params"] = params
    return document


def definition_yaml(spec: DefinitionSpec) -> str:
    return to_yaml(definition(spec))


def job(spec: JobSpec) -> tuple[dict[str, Any], dict[str, str]]:
    """The job as a mapping, and the comments (key path -> text) marking placeholders."""
    test_definition = definition(spec.definition, inline=True)
    name = spec.job_name or f"hwcrypto {spec.definition.suites} on {spec.device_type}"
    data: dict[str, Any] = {
        "device_type": spec.device_type,
        "job_name": name,
        "timeouts": {
            "job": {"minutes": spec.timeout_minutes},
            "action": {"minutes": spec.test_minutes},
            "connection": {"minutes": 2},
        },
        "priority": "medium",
        "visibility": "public",
    }
    if spec.tags:
        data["tags"] = list(spec.tags)
    comments: dict[str, str] = {}
    if spec.device_type == QEMU:
        data["context"], deploy, boot = _qemu_parts(spec)
    else:
        deploy, boot, comments = _device_parts(spec)
    test = {
        "timeout": {"minutes": spec.test_minutes},
        "definitions": [
            {
                "repository": test_definition,
                "from": "inline",
                "name": DEFINITION_NAME,
                "path": "inline/hwcrypto.yaml",
            }
        ],
    }
    data["actions"] = [{"deploy": deploy}, {"boot": boot}, {"test": test}]
    return data, comments


def job_yaml(spec: JobSpec) -> str:
    data, comments = job(spec)
    header = ""
    if comments:
        header = (
            f"# Values marked {PLACEHOLDER} come from your lab (device dictionary, images): "
            "replace them before submitting.\n"
        )
    return header + to_yaml(data, comments)


def _qemu_parts(spec: JobSpec) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """x86-64 QEMU under TCG: the project's guest initramfs (python3 and Debian's python3-*
    packages; the job installs the plugin) and a virtio-crypto offload engine."""
    if not spec.kernel or not spec.rootfs:
        raise JobSpecError(
            "--device-type qemu needs --kernel URL and --rootfs URL (the guest initramfs; "
            "`hwcrypto lava guest` builds one)"
        )
    extra = ["-cpu max", "-smp 2"]
    if spec.virtio_crypto:
        extra += [
            "-object cryptodev-backend-builtin,id=cd0",
            "-device virtio-crypto-pci,id=crypto0,cryptodev=cd0",
        ]
    context: dict[str, Any] = {
        "arch": "amd64",
        "no_kvm": "True",
        "memory": spec.memory_mb,
        "extra_options": extra,
    }
    deploy = {
        "timeout": {"minutes": 5},
        "to": "tmpfs",
        "os": "debian",
        "images": {
            "kernel": {
                "url": spec.kernel,
                "image_arg": "-kernel {kernel} -append "
                '"console=ttyS0,115200 rdinit=/init panic=-1"',
            },
            "initrd": {"url": spec.rootfs, "image_arg": "-initrd {initrd}"},
        },
    }
    boot = {
        "timeout": {"minutes": 5},
        "method": "qemu",
        "media": "tmpfs",
        "prompts": [GUEST_PROMPT],
    }
    return context, deploy, boot


def _device_parts(spec: JobSpec) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """A real board, booted by U-Boot over TFTP with an NFS root: LAVA's most common
    arrangement. What only the lab knows is a placeholder with a comment."""
    deploy: dict[str, Any] = {
        "timeout": {"minutes": 10},
        "to": "tftp",
        "os": "debian",
        "kernel": {"url": spec.kernel or _url("kernel"), "type": "zimage"},
        "nfsrootfs": {"url": spec.rootfs or _url("rootfs.tar.xz"), "compression": "xz"},
    }
    if spec.dtb or not spec.kernel:
        deploy["dtb"] = {"url": spec.dtb or _url("board.dtb")}
    boot = {
        "timeout": {"minutes": 10},
        "method": "u-boot",
        "commands": "nfs",
        "prompts": [f"{PLACEHOLDER}-root@board:~# "],
        "auto_login": {"login_prompt": "login:", "username": "root"},
    }
    comments = {
        "actions.0.deploy": "how this device type is deployed (to: tftp, nfs, fastboot, flasher) "
        "depends on its device dictionary",
        "actions.1.boot": f"boot method and prompts of your device type; {PLACEHOLDER}: the "
        "rootfs's shell prompt",
    }
    if not spec.kernel:
        comments["actions.0.deploy.kernel"] = f"{PLACEHOLDER}: your kernel build's URL"
    if not spec.rootfs:
        comments["actions.0.deploy.nfsrootfs"] = (
            f"{PLACEHOLDER}: a rootfs with python3 (Debian 12: python3-pytest and friends, "
            "or use --install apt/pypi)"
        )
    return deploy, boot, comments


def _url(name: str) -> str:
    return f"https://{PLACEHOLDER}.invalid/{name}"


def parse_context_value(values: Mapping[str, Any]) -> dict[str, Any]:
    """A job's context as device dictionary variables (lava-run has no server to merge
    them): `no_kvm: "True"` becomes True, everything else stays."""
    return {key: (value == "True" if key == "no_kvm" else value) for key, value in values.items()}
