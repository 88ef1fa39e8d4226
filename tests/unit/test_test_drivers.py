# SPDX-License-Identifier: MIT
"""The test-only drivers' parameters: array values, insmod arguments, set-and-restore."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
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
    what pytest_hwcrypto/kmod/hwcrypto_test.c declares (a parameter added there must be added
    here)."""
    kmod = Path(test_drivers.__file__).resolve().parents[1] / "kmod"
    source = (kmod / "hwcrypto_test.c").read_text()
    declared = dict(re.findall(r"module_param_array\((\w+), \w+, NULL, (0\d+)\);", source))
    assert declared == {
        **{name: "0644" for name in test_drivers.RUNTIME_DEFAULTS},
        **{name: "0444" for name in test_drivers.LOAD_TIME},
    }
    # the parameter table, not the mode table below it, whose rows also start with a name
    readme = (kmod / "README.md").read_text().split("## Which test catches each mode")[0]
    assert set(re.findall(r"^\| `(\w+)` \|", readme, re.MULTILINE)) >= set(declared)


def test_the_asynchronous_drivers_parameters_are_in_the_readme_table() -> None:
    """The asynchronous driver's plain (not array) parameters: each declared one has a row,
    with its run-time writability as the README says (load time or run time)."""
    kmod = Path(test_drivers.__file__).resolve().parents[1] / "kmod"
    source = (kmod / "hwcrypto_test.c").read_text()
    declared = dict(re.findall(r"module_param\((\w+), \w+, (0\d+)\);", source))
    declared |= dict(re.findall(r"module_param_cb\((\w+), &\w+, NULL, (0\d+)\);", source))
    declared = {name: mode for name, mode in declared.items() if not name.startswith("rng_")}
    assert set(declared) == {
        "async_flows",
        "async_latency_us",
        "async_ns_per_kib",
        "async_priority",
        "async_driver_only",
        "async_skip_compute",
        "async_lose_every",
        "async_lost",
        "async_queue_len",
        "async_busy",
        "async_busy_drops",
        "async_reorder_every",
        "async_reorder_swap",
        "async_reordered",
    }
    readme = (kmod / "README.md").read_text().split("## Which test catches each mode")[0]
    rows = dict(re.findall(r"^\| `(async_\w+)` \| [^|]+ \| ([^\n]+) \|$", readme, re.MULTILINE))
    assert set(rows) == set(declared)
    for name, mode in declared.items():
        assert ("(load time)" in rows[name]) == (mode == "0444"), name


def test_the_test_rng_parameters_are_in_the_readme_table() -> None:
    """The hw_random source's parameters: each declared one is in RNG_DEFAULTS, writable at
    run time, with a row in the README."""
    kmod = Path(test_drivers.__file__).resolve().parents[1] / "kmod"
    source = (kmod / "hwcrypto_test.c").read_text()
    declared = dict(re.findall(r"module_param\((rng_\w+), \w+, (0\d+)\);", source))
    assert set(declared) == set(test_drivers.RNG_DEFAULTS)
    assert set(declared.values()) == {"0644"}
    readme = (kmod / "README.md").read_text().split("## Which test catches each mode")[0]
    rows = dict(re.findall(r"^\| `(rng_\w+)` \| ([^|]+) \| [^\n]+ \(run time\) \|$", readme, re.M))
    assert rows == {name: default for name, default in test_drivers.RNG_DEFAULTS.items()}


# pytest_hwcrypto/kmod/README.md's table "Which test catches each mode", checked against the board
# tests it names.
KMOD_README = Path(test_drivers.__file__).resolve().parents[1] / "kmod" / "README.md"
FAULTY_DRIVERS_TESTS = Path(__file__).resolve().parents[1] / "board" / "test_faulty_drivers.py"
# the asynchronous engine's completion-order faults are proven with its other
# requests-in-flight tests
CONCURRENCY_TESTS = FAULTY_DRIVERS_TESTS.with_name("test_concurrency.py")


def mode_table() -> list[dict[str, str]]:
    """The rows of the README's mode table, by column heading."""
    section = KMOD_README.read_text().split("## Which test catches each mode", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]
    heading, _rule, *rows = cells
    assert all(len(row) == len(heading) for row in rows), rows
    return [dict(zip(heading, row)) for row in rows]


def collected(*selection: str) -> set[str]:
    """Names (function[param]) pytest collects from the faulty-driver board tests."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [*command, *selection, str(FAULTY_DRIVERS_TESTS), str(CONCURRENCY_TESTS)],
        cwd=FAULTY_DRIVERS_TESTS.parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("::", 1)[1] for line in result.stdout.splitlines() if "::" in line}


def backticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_mode_table_names_the_board_tests_and_what_ci_runs() -> None:
    rows = mode_table()
    every, in_ci = collected(), collected("-m", "not slow_board")
    for row in rows:
        tests = [name for name in backticked(row["test"]) if name.startswith("test_")]
        if not tests:  # a mode no board test provokes, or a benchmark run by hand
            assert row["CI"] == "—", row
            continue
        for name in tests:
            assert name in every, f"{name} is not a board test of the test drivers"
            assert row["CI"] == ("yes" if name in in_ci else "no"), row
    named = {name.split("=")[0] for row in rows for name in backticked(row["mode"])}
    assert named >= set(test_drivers.RUNTIME_DEFAULTS), "a run-time parameter has no row"


def test_the_mode_table_has_a_row_for_every_fault_of_every_correctness_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = importlib.util.spec_from_file_location("faulty_drivers", FAULTY_DRIVERS_TESTS)
    assert spec is not None and spec.loader is not None
    board_tests = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the module runs
    monkeypatch.setitem(sys.modules, spec.name, board_tests)
    spec.loader.exec_module(board_tests)
    rows = {(row["mode"], row["driver"], row["test"]) for row in mode_table()}
    for round_name, chosen in board_tests.CORRECTNESS_ROUNDS.items():
        for fault in chosen.faults:
            mode = fault.parameter if fault.value is True else f"{fault.parameter}={fault.value}"
            test = f"test_correctness_suite_catches_each_faulty_mode[{round_name}]"
            assert (f"`{mode}`", f"`{fault.driver}`", f"`{test}`") in rows, fault.describe()
