# SPDX-License-Identifier: MIT
"""The test-only drivers of pytest_hwcrypto/kmod (module hwcrypto_test): their names and parameters.

The module registers four drivers that are correct by default and can be made wrong or
slow on purpose, one at a time, so a test can prove a suite catches a real faulty driver
in the kernel rather than bytes damaged after the fact. Every parameter is an array with
one value per driver (in DRIVERS order), written as "v0,v1,v2,v3" to
/sys/module/hwcrypto_test/parameters/<name>; pytest_hwcrypto/kmod/hwcrypto_test.c says what each
does. `priority` is read at load time only: a reload (`loaded_with`) or a re-rank
(kernel/rerank.py) changes which driver wins.

Pure except `TestDriversControl`, which reads and writes sysfs and runs insmod/rmmod.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

MODULE_NAME = "hwcrypto_test"
CBC_A = "cbc-aes-hwcrypto-test-a"
CBC_B = "cbc-aes-hwcrypto-test-b"
GCM = "gcm-aes-hwcrypto-test"
SHA256 = "sha256-hwcrypto-test"
DRIVERS: tuple[str, ...] = (CBC_A, CBC_B, GCM, SHA256)
ALGORITHM_OF = {CBC_A: "cbc(aes)", CBC_B: "cbc(aes)", GCM: "gcm(aes)", SHA256: "sha256"}

# Writable at run time, and the value that means "correct, at full speed".
RUNTIME_DEFAULTS: Mapping[str, str] = {
    "wrong_min_bytes": "-1",
    "wrong_decrypt": "N",
    "wrong_odd_split": "N",
    "wrong_key_bytes": "0",
    "stale_iv": "N",
    "delay_us": "0",
    "delay_ns_per_kib": "0",
    "work_per_kib": "0",
}
LOAD_TIME = ("priority",)
PARAMETERS = (*RUNTIME_DEFAULTS, *LOAD_TIME)
DEFAULT_PRIORITY = 50  # below the generic code's 100: nothing picks them by name unasked

SYS_MODULE = Path("/sys/module")

# The module's hw_random source and its fault modes (plain values, writable at run time),
# with the value that means "no fault".
RNG_SOURCE = "hwcrypto_test_rng"
RNG_DEFAULTS: Mapping[str, str] = {
    "rng_stuck_ones": "0",  # OR this mask into every 32-bit word
    "rng_repeat_every": "0",  # output repeats every N bytes
    "rng_delay_us": "0",  # sleep per read call
    "rng_short_read": "0",  # at most N bytes per read call
}


class TestDriversError(RuntimeError):
    """The module is missing, or a parameter could not be read or written."""

    __test__ = False  # a pytest collection hint: this is not a test class


def driver_index(driver: str) -> int:
    try:
        return DRIVERS.index(driver)
    except ValueError:
        raise TestDriversError(
            f"{driver} is not a test-only driver (choose from {', '.join(DRIVERS)})"
        ) from None


def check_parameter(name: str, *, runtime: bool) -> None:
    known = tuple(RUNTIME_DEFAULTS) if runtime else PARAMETERS
    if name not in known:
        raise TestDriversError(
            f"{MODULE_NAME} has no {'run-time ' if runtime else ''}parameter {name!r} "
            f"(choose from {', '.join(known)})"
        )


def split_values(text: str) -> list[str]:
    """A sysfs array parameter ("1,-1,-1,-1\\n") as its values."""
    return [value.strip() for value in text.strip().split(",")]


def with_value(values: list[str], driver: str, value: object) -> list[str]:
    """`values` with the one of `driver` replaced (booleans as the kernel spells them)."""
    index = driver_index(driver)
    if len(values) != len(DRIVERS):
        raise TestDriversError(f"expected {len(DRIVERS)} values, one per driver: {values}")
    changed = list(values)
    changed[index] = "Y" if value is True else "N" if value is False else str(value)
    return changed


def load_arguments(per_driver: Mapping[str, Mapping[str, object]]) -> list[str]:
    """insmod arguments ("stale_iv=N,Y,N,N") for {parameter: {driver: value}}."""
    arguments = []
    for name, values in per_driver.items():
        check_parameter(name, runtime=False)
        default = str(DEFAULT_PRIORITY) if name == "priority" else RUNTIME_DEFAULTS[name]
        array = [default] * len(DRIVERS)
        for driver, value in values.items():
            array = with_value(array, driver, value)
        arguments.append(f"{name}={','.join(array)}")
    return arguments


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


@dataclass
class TestDriversControl:
    """The loaded module's parameters, and reloading it with load-time parameters.

    `module_file` is the .ko the board loaded (None on a real board, where the module is
    whatever the user loaded: it can be tuned but not reloaded).
    """

    __test__ = False

    module_file: Path | None
    sys_module: Path = SYS_MODULE
    runner: Runner = subprocess.run

    @property
    def parameters_dir(self) -> Path:
        return self.sys_module / MODULE_NAME / "parameters"

    def loaded(self) -> bool:
        return self.parameters_dir.is_dir()

    def read(self, name: str) -> list[str]:
        check_parameter(name, runtime=False)
        try:
            return split_values((self.parameters_dir / name).read_text())
        except OSError as error:
            raise TestDriversError(f"cannot read {self.parameters_dir / name}: {error}") from None

    def value(self, name: str, driver: str) -> str:
        return self.read(name)[driver_index(driver)]

    def write(self, name: str, values: list[str]) -> None:
        check_parameter(name, runtime=True)
        path = self.parameters_dir / name
        try:
            path.write_text(",".join(values))
        except OSError as error:
            raise TestDriversError(f"cannot write {path}: {error}") from None

    @contextmanager
    def setting(self, name: str, driver: str, value: object) -> Iterator[None]:
        """`name` of `driver` set to `value` for the block; the old value put back after."""
        before = self.read(name)
        self.write(name, with_value(before, driver, value))
        try:
            yield
        finally:
            self.write(name, before)

    def reset(self) -> None:
        """Every driver correct and at full speed."""
        for name, default in RUNTIME_DEFAULTS.items():
            self.write(name, [default] * len(DRIVERS))

    @contextmanager
    def loaded_with(self, per_driver: Mapping[str, Mapping[str, object]]) -> Iterator[None]:
        """The module reloaded with load-time parameters (each driver self-tested again);
        reloaded with the defaults after."""
        arguments = load_arguments(per_driver)
        self._reload(arguments)
        try:
            yield
        finally:
            self._reload([])

    def _reload(self, arguments: list[str]) -> None:
        if self.module_file is None:
            raise TestDriversError(
                f"{MODULE_NAME} was not loaded by this board, so it cannot be reloaded with "
                "other load-time parameters (only the QEMU board's --hwcrypto-test-drivers can)"
            )
        if self.loaded():
            self._run(["rmmod", MODULE_NAME])
        self._run(["insmod", str(self.module_file), *arguments])

    def _run(self, argv: list[str]) -> None:
        done = self.runner(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip()
            raise TestDriversError(f"{' '.join(argv)} failed (exit {done.returncode}): {said}")
