# SPDX-License-Identifier: MIT
"""`hwcrypto ab` between two UML kernels with one AES driver each (issue 48), from the host.

Both kernels are Debian's linux-source-6.1 built for UML with aes-fixed-time as the only
AES driver (one_driver_kernels.py: built once per machine into the cache); the slow one
adds a busy loop after every block aes-fixed-time encrypts. Before, `hwcrypto ab` stopped
after one boot: "nothing measured: no algorithm asked for has two drivers here".

Asked nothing, ab measures the winners of xts(aes), cbc(aes) and sha256 where present;
the slowed driver must come out regressed (exit 1), sha256-generic, which nothing
touched, must not (this configuration leaves it out). The A/A of one kernel must come
out clean (exit 0, nothing regressed). The planted drop (SLOW_ROUNDS) is far beyond the
boot-to-boot noise of this board, which reached a factor of two on a loaded host
(test_ab_uml.py), so no pair of a loaded host reverses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hwcrypto_cli import run_ab
from one_driver_kernels import SOURCE, one_driver_kernels

from pytest_hwcrypto.boards.uml import UmlBoard

# One block size: a slice too short for every algorithm asked for takes longer (ab/slice.py
# slice_plan), so fewer cells keep the pairs short.
SLICE = ["--block-sizes", "65536"]


@pytest.fixture(scope="module")
def kernels() -> tuple[Path, Path]:
    if not SOURCE.exists():
        pytest.skip(f"{SOURCE} missing: apt-get install linux-source-6.1 bc flex bison libelf-dev")
    return one_driver_kernels()


def _series(out: Path) -> dict[str, dict[str, object]]:
    verdict = json.loads(out.read_text())["verdict"]
    return {str(s["driver"]): s for s in verdict["series"]}


def test_a_slowed_only_driver_is_regressed(
    uml_board: UmlBoard, kernels: tuple[Path, Path], tmp_path: Path
) -> None:
    good, slow = kernels
    out = tmp_path / "ab.json"
    # Up to three series (the defaults' winners at one block size): 10 pairs all one way
    # reach 0.01 / 3 (p = 2 / 1024); 12 leave room for a pair of a loaded host near 0.
    done = run_ab("--kernel", str(good), "--kernel", str(slow), *SLICE, "--slice-seconds", "2",
               "--pairs", "12", "--out", str(out))  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    series = _series(out)
    # sha256-generic when this configuration builds it in (the winners where present)
    assert set(series) - {"sha256-generic"} == {"cbc(aes-fixed-time)", "xts(ecb(aes-fixed-time))"}
    assert series["cbc(aes-fixed-time)"]["verdict"] == "regressed", series
    assert series["xts(ecb(aes-fixed-time))"]["verdict"] == "regressed", series
    assert series.get("sha256-generic", {}).get("verdict") != "regressed", series
    assert "nothing measured" not in done.stdout + done.stderr


def test_the_same_one_driver_kernel_twice_is_clean(
    uml_board: UmlBoard, kernels: tuple[Path, Path], tmp_path: Path
) -> None:
    good, _ = kernels
    out = tmp_path / "aa.json"
    # One series at --alpha 0.001: an unchanged kernel is called regressed with a chance
    # of at most 1 in 1000 (11 pairs is the fewest that can reach that level).
    done = run_ab("--kernel", str(good), "--kernel", str(good), *SLICE, "--slice-seconds", "1",
               "--algorithm", "cbc(aes)", "--alpha", "0.001", "--pairs", "11",
               "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    series = _series(out)
    assert list(series) == ["cbc(aes-fixed-time)"]
    assert series["cbc(aes-fixed-time)"]["verdict"] != "regressed"
    assert "regressed" not in done.stdout
