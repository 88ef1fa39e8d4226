"""The test-only drivers' parameters: array values, insmod arguments, set-and-restore."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.kernel import test_drivers
from pytest_hwcrypto.kernel.test_drivers import (
    CBC_A,
    CBC_B,
    GCM,
    MODULE_NAME,
    SHA256,
    TestDriversControl,
    TestDriversError,
)


def test_one_value_per_driver_changes_only_that_driver() -> None:
    values = test_drivers.split_values("-1,-1,-1,-1\n")
    assert test_drivers.with_value(values, GCM, 4096) == ["-1", "-1", "4096", "-1"]
    assert test_drivers.with_value(["N"] * 4, CBC_B, True) == ["N", "Y", "N", "N"]
    with pytest.raises(TestDriversError, match="not a test-only driver"):
        test_drivers.with_value(values, "cbc-aes-aesni", 1)
    with pytest.raises(TestDriversError, match="one per driver"):
        test_drivers.with_value(["1", "2"], CBC_A, 1)


def test_load_arguments_fill_the_other_drivers_with_defaults() -> None:
    arguments = test_drivers.load_arguments(
        {"priority": {CBC_A: 1000}, "stale_iv": {CBC_B: True}, "delay_us": {SHA256: 5}}
    )
    assert arguments == ["priority=1000,50,50,50", "stale_iv=N,Y,N,N", "delay_us=0,0,0,5"]
    with pytest.raises(TestDriversError, match="no parameter 'speed'"):
        test_drivers.load_arguments({"speed": {CBC_A: 1}})


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    parameters = tmp_path / MODULE_NAME / "parameters"
    parameters.mkdir(parents=True)
    for name, default in test_drivers.RUNTIME_DEFAULTS.items():
        (parameters / name).write_text(",".join([default] * 4) + "\n")
    (parameters / "priority").write_text("50,50,50,50\n")
    return tmp_path


def test_setting_puts_the_old_value_back_also_after_a_failure(sysfs: Path) -> None:
    control = TestDriversControl(None, sys_module=sysfs)
    with pytest.raises(RuntimeError), control.setting("wrong_min_bytes", GCM, 512):
        assert control.value("wrong_min_bytes", GCM) == "512"
        assert control.value("wrong_min_bytes", CBC_A) == "-1"
        raise RuntimeError("the test failed")
    assert control.read("wrong_min_bytes") == ["-1"] * 4


def test_priority_is_read_only_at_run_time(sysfs: Path) -> None:
    control = TestDriversControl(None, sys_module=sysfs)
    with pytest.raises(TestDriversError, match="no run-time parameter 'priority'"):
        control.write("priority", ["1"] * 4)


class FakeModuleTools:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        failed = argv[0] == "insmod" and "priority=bad,50,50,50" in argv
        return subprocess.CompletedProcess(argv, 1 if failed else 0, "", "insmod: invalid")


def test_loaded_with_reloads_then_reloads_with_defaults(sysfs: Path) -> None:
    tools = FakeModuleTools()
    control = TestDriversControl(Path("/run/x/hwcrypto_test.ko"), sysfs, tools)
    with control.loaded_with({"wrong_decrypt": {CBC_A: True}}):
        pass
    assert tools.calls == [
        ["rmmod", MODULE_NAME],
        ["insmod", "/run/x/hwcrypto_test.ko", "wrong_decrypt=Y,N,N,N"],
        ["rmmod", MODULE_NAME],
        ["insmod", "/run/x/hwcrypto_test.ko"],
    ]
    with pytest.raises(TestDriversError, match=r"insmod .* failed \(exit 1\): insmod: invalid"):
        control._reload(["priority=bad,50,50,50"])


def test_a_module_the_board_did_not_load_cannot_be_reloaded(sysfs: Path) -> None:
    control = TestDriversControl(None, sysfs, FakeModuleTools())
    reload = control.loaded_with({"priority": {CBC_A: 1000}})
    with pytest.raises(TestDriversError, match="not loaded by this board"), reload:
        pass


def test_the_parameters_named_here_are_the_modules_own() -> None:
    """Python's list of parameters, their run-time writability and the README's table say
    what tests/kmod/hwcrypto_test.c declares (a parameter added there must be added here)."""
    import re

    kmod = Path(__file__).resolve().parents[1] / "kmod"
    source = (kmod / "hwcrypto_test.c").read_text()
    declared = dict(re.findall(r"module_param_array\((\w+), \w+, NULL, (0\d+)\);", source))
    assert declared == {
        **{name: "0644" for name in test_drivers.RUNTIME_DEFAULTS},
        **{name: "0444" for name in test_drivers.LOAD_TIME},
    }
    readme = (kmod / "README.md").read_text()
    assert set(re.findall(r"^\| `(\w+)` \|", readme, re.MULTILINE)) >= set(declared)
