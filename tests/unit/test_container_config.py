# SPDX-License-Identifier: MIT
"""The container config writer and the autodev hook (pure), the policy audit, and the
leftover-cgroup finder, on files made here; the containers themselves are tested on a
board (tests/board/test_lxc.py)."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from pytest_hwcrypto.container import audit, nodes
from pytest_hwcrypto.container.config import (
    ContainerSpec,
    DeviceNode,
    ReadOnlyBind,
    has_device_policy,
    render_autodev_hook,
    render_config,
)
from pytest_hwcrypto.container.lxc import leftover_cgroups
from pytest_hwcrypto.container.probe import parse_answer
from pytest_hwcrypto.container.terminal import Terminal

CRYPTO = DeviceNode("/dev/crypto", "c", 10, 124, 0o666)
HWRNG = DeviceNode("/dev/hwrng", "c", 10, 183, 0o600)


def spec(**changes: object) -> ContainerSpec:
    base: dict[str, object] = {
        "name": "hwcrypto-1-abc-1",
        "rootfs": "/run/x/rootfs",
        "hook_path": "/run/x/autodev-hook",
        "devices": (CRYPTO,),
    }
    base.update(changes)
    return ContainerSpec(**base)  # type: ignore[arg-type]


def lines(text: str) -> list[str]:
    return text.splitlines()


def test_a_passed_device_gets_allow_line_bind_and_autodev() -> None:
    config = lines(render_config(spec()))
    assert config.index("lxc.cgroup2.devices.deny = a") < config.index(
        "lxc.cgroup2.devices.allow = c 10:124 rwm"
    )
    assert "lxc.mount.entry = /dev/crypto dev/crypto none bind,create=file 0 0" in config
    assert "lxc.autodev = 1" in config
    assert "lxc.hook.autodev = /run/x/autodev-hook" in config
    assert "lxc.net.0.type = empty" in config
    assert not any(line.startswith("lxc.cgroup.devices") for line in config)


def test_the_v1_key_is_written_only_where_v1_devices_is_mounted() -> None:
    config = lines(render_config(spec(cgroup_v1_devices=True)))
    assert "lxc.cgroup.devices.deny = a" in config
    assert "lxc.cgroup.devices.allow = c 10:124 rwm" in config
    assert "lxc.cgroup2.devices.allow = c 10:124 rwm" in config


def test_a_refused_device_is_bound_but_never_allowed() -> None:
    config = render_config(spec(devices=(), refused=(HWRNG,)))
    assert "lxc.mount.entry = /dev/hwrng dev/hwrng none bind,create=file 0 0" in config
    assert "10:183" not in config
    assert has_device_policy(config)


def test_no_device_policy_writes_no_device_lines_and_is_seen_as_unrestricted() -> None:
    config = render_config(spec(device_policy=False))
    assert "devices" not in config
    assert not has_device_policy(config)


def test_read_only_binds_and_idmap() -> None:
    config = lines(render_config(spec(binds=(ReadOnlyBind("/usr"),), idmap=("u 0 100000 65536",))))
    assert "lxc.mount.entry = /usr usr none ro,rbind,create=dir 0 0" in config
    assert "lxc.idmap = u 0 100000 65536" in config


@pytest.mark.parametrize(
    ("path", "kind"), [("/etc/passwd", "c"), ("/dev/../etc/x", "c"), ("/dev/crypto", "x")]
)
def test_only_device_kinds_under_dev_are_accepted(path: str, kind: str) -> None:
    with pytest.raises(ValueError, match="dev"):
        DeviceNode(path, kind, 1, 1, 0o600)


def _fake_mknod(bin_dir: Path, calls: Path) -> None:
    """A mknod that records its arguments and makes a plain file (no device node here)."""
    bin_dir.mkdir()
    script = bin_dir / "mknod"
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n: > "$3"\n')
    script.chmod(0o755)


def test_the_hook_mknods_with_the_hosts_numbers_and_skips_an_existing_node(
    tmp_path: Path,
) -> None:
    hook = tmp_path / "hook"
    hook.write_text(render_autodev_hook((CRYPTO, HWRNG)))
    calls = tmp_path / "calls"
    _fake_mknod(tmp_path / "bin", calls)
    root = tmp_path / "root"
    root.mkdir()
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "LXC_ROOTFS_MOUNT": str(root)}
    subprocess.run(["sh", str(hook)], env=env, check=True)
    assert calls.read_text().splitlines() == [
        f"-m 666 {root}/dev/crypto c 10 124",
        f"-m 600 {root}/dev/hwrng c 10 183",
    ]
    # Started again (a restart, or beside a bind mount that made the node): no mknod.
    subprocess.run(["sh", str(hook)], env=env, check=True)
    assert len(calls.read_text().splitlines()) == 2


def test_read_node_takes_numbers_and_mode_from_stat(tmp_path: Path) -> None:
    node = nodes.read_node("/dev/null")
    info = os.stat("/dev/null")
    assert (node.kind, node.major, node.minor) == ("c", os.major(info.st_rdev), 3)
    assert node.mode == stat.S_IMODE(info.st_mode)
    plain = tmp_path / "file"
    plain.write_text("")
    with pytest.raises(ValueError, match=f"{plain}: not a device node"):
        nodes.read_node(str(plain))


def test_v1_devices_hierarchy_is_found_in_the_mount_table(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n")
    assert not nodes.cgroup_v1_devices_mounted(mounts)
    assert nodes.cgroup2_mounted(mounts)
    mounts.write_text("cgroup /sys/fs/cgroup/devices cgroup rw,nosuid,devices 0 0\n")
    assert nodes.cgroup_v1_devices_mounted(mounts)


def test_python_binds_are_outermost_and_unique() -> None:
    python = nodes.python_inside(Path("/usr/lib/python3/dist-packages/x"))
    binds = [b.path for b in python.binds]
    assert "/usr" in binds and "/etc" in binds
    assert not any(b.startswith("/usr/") for b in binds)
    assert python.pythonpath is None


def test_unprivileged_python_skips_what_others_cannot_reach() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as scratch:  # /tmp: searchable by all
        os.chmod(scratch, 0o755)
        hidden = Path(scratch) / "private"
        (hidden / "src" / "pkg").mkdir(parents=True)
        hidden.chmod(0o700)
        assert nodes.unreachable_ancestor(hidden / "src" / "pkg") == hidden
        assert nodes.unreachable_ancestor(Path(scratch) / "x") is None
        python = nodes.python_inside(hidden / "src" / "pkg", unprivileged=True)
        assert str(hidden / "src") not in [b.path for b in python.binds]
        assert (python.interpreter, python.pythonpath) == ("/usr/bin/python3", str(hidden / "src"))


def test_the_audit_follows_includes(tmp_path: Path) -> None:
    policy = tmp_path / "common.conf.d"
    policy.mkdir()
    (policy / "devices.conf").write_text("lxc.cgroup2.devices.deny = a\n")
    included = tmp_path / "a" / "config"
    included.parent.mkdir()
    included.write_text(f"lxc.uts.name = a\nlxc.include = {policy}\n")
    bare = tmp_path / "b" / "config"
    bare.parent.mkdir()
    bare.write_text("lxc.uts.name = b\n# lxc.cgroup2.devices.deny = a\n")
    assert audit.config_has_device_policy(included)
    assert audit.unrestricted_configs([f"{tmp_path}/*/config"]) == [bare]


def test_leftover_cgroups_are_only_those_of_the_named_container(tmp_path: Path) -> None:
    name = "hwcrypto-7-abcdef01-1"
    for cgroup in (
        f"lxc.payload.{name}",
        f"lxc.monitor.{name}",
        f"lxc.payload.{name}-1",
        f"devices/lxc.payload.{name}",
        f"lxc.payload.{name}0",  # another container (…-10): not ours
        "lxc.payload.decoy",
        "lxc.pivot",
    ):
        (tmp_path / cgroup).mkdir(parents=True)
    found = {str(p.relative_to(tmp_path)) for p in leftover_cgroups(name, tmp_path)}
    assert found == {
        f"lxc.payload.{name}",
        f"lxc.monitor.{name}",
        f"lxc.payload.{name}-1",
        f"devices/lxc.payload.{name}",
    }


def test_probe_answers_are_read_from_the_last_json_line() -> None:
    assert parse_answer('noise\n{"driver": "x"}\n') == {"driver": "x"}
    assert "no answer" in parse_answer("Traceback ...")["error"]


def test_the_terminal_returns_status_and_output_and_logs_each_command(tmp_path: Path) -> None:
    terminal = Terminal(tmp_path / "commands.log")
    done = terminal.run(["sh", "-c", "echo hello; exit 3"])
    assert (done.exit_code, done.output.strip()) == (3, "hello")
    log = (tmp_path / "commands.log").read_text()
    assert "$ sh -c 'echo hello; exit 3'\nhello\n# exit 3" in log


def test_an_undo_that_cannot_run_lxc_keeps_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_hwcrypto.container.lxc import undo_container

    (tmp_path / "hwcrypto-1-abcdef01-1" / "rootfs").mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no lxc-stop, no lxc-destroy
    with pytest.raises(OSError, match="lxc-stop"):
        undo_container({"name": "hwcrypto-1-abcdef01-1", "lxc_path": str(tmp_path)})
    assert (tmp_path / "hwcrypto-1-abcdef01-1").exists()
