# SPDX-License-Identifier: MIT
"""LXC containers on a real kernel: the recipe's device passthrough, what happens without a
device policy, unprivileged containers, teardown after a failing test, and nothing left
after kill -9 (a hand-made container named like the plugin's survives the sweep).

Runs inside a board (`pytest --hwcrypto-vm=uml tests/board/test_lxc.py`; the QEMU board
adds a real /dev/crypto with --hwcrypto-cryptodev). Every test has its own ledger and LXC
directory (HWCRYPTO_STATE_DIR on the board's tmpfs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto import ledger
from pytest_hwcrypto.container import audit, lxc, probe
from pytest_hwcrypto.container.config import (
    ContainerSpec,
    has_device_policy,
    render_autodev_hook,
    render_config,
)
from pytest_hwcrypto.container.rootfs import build_rootfs, busybox_path
from pytest_hwcrypto.ledger import Ledger

# /dev/full: a standard node autodev makes but that the plugin's policy does not allow.
NOT_ALLOWED = "/dev/full"
PASSED = "/dev/crypto" if Path("/dev/crypto").exists() else "/dev/loop-control"

KILLED_CHILD = """
import os, signal
from pytest_hwcrypto.container.lxc import ContainerMaker
from pytest_hwcrypto.container.terminal import ContainerError
from pytest_hwcrypto.ledger import Ledger
maker = ContainerMaker(Ledger())
running = maker.create([{passed!r}])
running.start()
broken = maker.create([])
# A start that fails: a bind of a source that does not exist, not optional.
with open(broken.config_path, "a") as config:
    config.write("lxc.mount.entry = /nonexistent-hwcrypto srv none bind 0 0\\n")
try:
    broken.start()
except ContainerError:
    pass
print(running.name, broken.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def state(board_kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if board_kind == "host":
        pytest.skip("needs a board: pytest --hwcrypto-vm=uml tests/board")
    reason = lxc.unavailable_reason()
    if reason:
        pytest.skip(reason)
    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path))
    return tmp_path


def lxc_state(name: str, lxc_path: Path) -> str:
    done = subprocess.run(
        ["lxc-info", "-n", name, "-P", str(lxc_path), "-s"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split(":", 1)[-1].strip() if done.returncode == 0 else "ABSENT"


# --- the recipe ------------------------------------------------------------------------


def test_passed_device_matches_the_host_and_others_are_refused(state: Path) -> None:
    maker = lxc.ContainerMaker(Ledger(state))
    host = probe.here("node", PASSED)
    with maker.container([PASSED], refused=[NOT_ALLOWED]) as container:
        assert lxc_state(container.name, maker.lxc_path) == "RUNNING"
        assert container.name.startswith("hwcrypto-")
        assert [e.key for e in maker.ledger.entries()] == [container.name]
        seen = container.probe("node", PASSED)
        assert {k: seen[k] for k in ("kind", "numbers", "mode", "open")} == {
            k: host[k] for k in ("kind", "numbers", "mode", "open")
        }
        assert container.probe("node", NOT_ALLOWED)["open"] == "EPERM"
        assert container.probe("mknod", "/tmp/again", "c", "1", "7")["mknod"] == "EPERM"
        done = container.run("exit 7")
        assert done.exit_code == 7
        # The hook brings the node back on a restart (autodev empties /dev each start).
        container.restart()
        assert container.probe("node", PASSED)["numbers"] == host["numbers"]
        cgroups = lxc.leftover_cgroups(container.name)
        assert cgroups, "LXC made no cgroup for the running container"
    assert lxc_state(container.name, maker.lxc_path) == "ABSENT"
    assert lxc.leftover_cgroups(container.name) == []
    assert maker.ledger.entries() == []


def test_without_a_device_policy_every_device_opens(state: Path) -> None:
    """What LXC's busybox template writes without common.conf: nothing is enforced, which
    is why the lxc suite reports such configs (container-devices-unrestricted)."""
    maker = lxc.ContainerMaker(Ledger(state))
    with maker.container([], device_policy=False) as container:
        assert not has_device_policy(container.config)
        assert audit.unrestricted_configs([str(container.config_path)]) == [container.config_path]
        made = container.probe("mknod", "/tmp/full", "c", "1", "7")
        assert made == {"path": "/tmp/full", "mknod": "ok", "open": "ok"}
        assert container.probe("node", NOT_ALLOWED)["open"] == "ok"


def test_unprivileged_container_gets_the_node_with_the_hosts_numbers(state: Path) -> None:
    private = lxc.ContainerMaker(Ledger(state))  # under pytest's 0700 temporary directory
    with pytest.raises(lxc.ContainerError, match="is not searchable by others"):
        private.create([PASSED], privileged=False)
    # A directory the container's mapped root can reach (/tmp is searchable).
    maker = lxc.ContainerMaker(Ledger(state), Path(tempfile.mkdtemp(prefix="hwcrypto-lxc-")))
    maker.lxc_path.chmod(0o711)
    try:
        host = probe.here("node", PASSED)
        with maker.container([PASSED], privileged=False) as container:
            assert "lxc.idmap = u 0 100000 65536" in container.config
            seen = container.probe("node", PASSED)
            assert (seen["kind"], seen["numbers"], seen["mode"]) == (
                host["kind"],
                host["numbers"],
                host["mode"],
            )
            # The node stays owned by the host's root, unmapped inside: its mode decides.
            world = int(str(host["mode"]), 8) & 0o006 == 0o006
            assert seen["open"] == ("ok" if world else "EACCES"), seen
            # The container's root is not root on the host: mknod is refused by the kernel.
            assert container.probe("mknod", "/tmp/x", "c", "1", "3")["mknod"] == "EPERM"
    finally:
        shutil.rmtree(maker.lxc_path)  # the containers are gone; their command log


# --- teardown and sweep -----------------------------------------------------------------

USER_TEST = """
def test_container(hwcrypto_lxc):
    container = hwcrypto_lxc([{passed!r}])
    print("CONTAINER", container.name)
    assert container.run("true").exit_code == 0
    raise AssertionError("this test fails on purpose")
"""


def test_a_failing_test_still_gets_its_container_removed(
    state: Path, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_user=USER_TEST.format(passed=PASSED))
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "-p", "no:cacheprovider", "-s", "test_user.py"
    )
    result.assert_outcomes(failed=1)
    line = next(line for line in result.outlines if "CONTAINER " in line)
    name = line.split("CONTAINER ", 1)[1].split()[0]
    assert lxc_state(name, lxc.default_lxc_path()) == "ABSENT"
    assert not (lxc.default_lxc_path() / name).exists()
    assert lxc.leftover_cgroups(name) == []


def _decoy(lxc_path: Path) -> Iterator[str]:
    """A container made by hand, named like the plugin's, in the plugin's own LXC path."""
    name = "hwcrypto-99999-deadbeef-1"
    directory = lxc_path / name
    busybox = busybox_path()
    assert busybox is not None
    build_rootfs(directory / "rootfs", busybox)
    (directory / "hook").write_text(render_autodev_hook(()))
    spec = ContainerSpec(name, str(directory / "rootfs"), str(directory / "hook"))
    (directory / "config").write_text(render_config(spec))
    os.chmod(directory / "hook", 0o755)
    subprocess.run(["lxc-start", "-n", name, "-P", str(lxc_path), "-d"], check=True)
    try:
        yield name
    finally:
        subprocess.run(["lxc-stop", "-n", name, "-P", str(lxc_path), "-k"], check=False)
        subprocess.run(["lxc-destroy", "-n", name, "-P", str(lxc_path), "-f"], check=False)


@pytest.fixture
def decoy(state: Path) -> Iterator[str]:
    lxc.default_lxc_path().mkdir()
    yield from _decoy(lxc.default_lxc_path())


def test_after_kill_9_hwcrypto_sweep_removes_the_containers_and_only_them(
    state: Path, decoy: str, hwcrypto_sweep: Callable[[], subprocess.CompletedProcess[str]]
) -> None:
    child = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD.format(passed=PASSED)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    running, broken = child.stdout.split()
    lxc_path = lxc.default_lxc_path()
    assert lxc_state(running, lxc_path) == "RUNNING", "the child died with it running"
    assert (lxc_path / broken).exists()
    journals = [path for path, _same_boot in ledger.stale_files(state)]
    assert len(journals) == 1
    recorded = [entry["key"] for entry in json.loads(journals[0].read_text())["entries"]]
    assert recorded == [running, broken], "recorded before being made"
    done = hwcrypto_sweep()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"removed container {running}" in done.stdout
    assert f"removed container {broken}" in done.stdout
    for name in (running, broken):
        assert lxc_state(name, lxc_path) == "ABSENT"
        assert not (lxc_path / name).exists()
        assert lxc.leftover_cgroups(name) == [], f"cgroups of {name} left"
    assert lxc_state(decoy, lxc_path) == "RUNNING", "the hand-made container was touched"
    assert list(state.glob("run-*.json")) == []


# --- the lxc suite with a board profile ---------------------------------------------------

PROFILE = """
[board]
name = "uml-lxc"

[containers]
configs = ["{configs}/*/config"]

[[rule]]
type = "hw-beats-sw"
algorithm = "cbc(aes)"
hw = "cbc(aes-generic)"
sw = "cbc(aes-fixed-time)"
min_ratio = 0.01
source = "afalg"
where = "container"
"""

WAIVER = """
[[waive]]
container = "{config}"
check = "container-devices-unrestricted"
reason = "kept to show the audit"
"""


def _run_suite(pytester: pytest.Pytester, profile: str) -> pytest.RunResult:
    board = pytester.path / "board.toml"
    board.write_text(profile)
    return pytester.runpytest_subprocess(
        "--hwcrypto",
        "--hwcrypto-suite=lxc",
        f"--hwcrypto-board={board}",
        "--hwcrypto-json=results.json",
        "-p",
        "no:cacheprovider",
        "-k",
        "configs or profile_rule",
        "-rA",
    )


def test_an_unrestricted_config_fails_the_suite_unless_waived_and_container_rules_run(
    state: Path, pytester: pytest.Pytester
) -> None:
    configs = state / "configs"
    bad = configs / "legacy" / "config"
    bad.parent.mkdir(parents=True)
    # As LXC's busybox template writes it without common.conf: no device lines.
    bad.write_text("lxc.uts.name = legacy\nlxc.rootfs.path = dir:/nonexistent\n")
    profile = PROFILE.format(configs=configs)
    result = _run_suite(pytester, profile)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*lxc-device-policy: *legacy/config has no device policy*",
            "*FAILED*test_container_configs_restrict_devices*",
        ]
    )
    results = json.loads((pytester.path / "results.json").read_text())
    kinds = [finding["kind"] for finding in results["findings"]]
    assert "container-devices-unrestricted" in kinds
    inside = [m for m in results["measurements"] if m.get("where") == "container"]
    assert {m["driver"] for m in inside} >= {"cbc(aes-generic)", "cbc(aes-fixed-time)"}

    waived = _run_suite(pytester, profile + WAIVER.format(config=bad))
    waived.assert_outcomes(passed=2)
