# SPDX-License-Identifier: MIT
"""Real /proc/crypto captures from public posts (tests/data/world/proc_crypto): every one is
read without an exception other than the one-line ProcCryptoError, through the library and
the CLI; the share of drivers classed as their .expect.json says is measured; no hardware
driver is ever called generic. The captures and expectations are collected by hand (sources
in each .expect.json) and are not edited to fit the classifier."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_capture
from pytest_hwcrypto.vocabulary import DriverClass

WORLD = Path(__file__).resolve().parent.parent / "data" / "world" / "proc_crypto"
# More captures, cut from snapshots the project may not commit, sit as data beside the
# checkout (tests/data/world/README.md); read when that directory is there.
SHARED_WORLD = Path(__file__).resolve().parents[3] / "shared" / "world" / "proc_crypto"
CAPTURES = sorted(WORLD.glob("*.txt")) + sorted(SHARED_WORLD.glob("*.txt"))
HARDWARE = {DriverClass.CPU_ACCEL, DriverClass.OFFLOAD}
# The share reached when this floor was set was 100 % of 496 drivers in 18 captures; the
# floor leaves room for captures still arriving that hold names no rule knows yet.
FLOOR = 0.95


def expected(capture: Path) -> dict[str, dict[str, str]]:
    path = capture.with_name(capture.name.removesuffix(".txt") + ".expect.json")
    if not path.exists():
        return {}
    drivers: dict[str, dict[str, str]] = json.loads(path.read_text())["drivers"]
    return drivers


def inventory(capture: Path) -> list[InventoryEntry]:
    try:
        return build_inventory(read_capture(capture).algs)
    except ProcCryptoError as error:
        assert "\n" not in str(error) and str(capture) in str(error)
        return []


def test_there_are_captures() -> None:
    assert len(CAPTURES) >= 10


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda path: path.name)
def test_cli_reads_every_capture_without_a_traceback(
    capture: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["inventory", "--json", "--proc-crypto", str(capture)])
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 0:
        entries = json.loads(out)["inventory"]
        assert all(entry["class_evidence"] for entry in entries)
    else:
        assert err.count("\n") == 1 and err.startswith("hwcrypto: error: ")


def test_share_classed_right_and_no_hardware_called_generic() -> None:
    right = total = 0
    evidence: Counter[str] = Counter()
    wrong: list[str] = []
    hardware_called_generic: list[str] = []
    for capture in CAPTURES:
        found = {entry.driver: entry for entry in inventory(capture)}
        for driver, want in expected(capture).items():
            total += 1
            entry = found.get(driver)
            if entry is None:
                wrong.append(f"{capture.name}: {driver} not read")
                continue
            evidence[entry.class_evidence.split(":", 1)[0]] += 1
            if entry.driver_class == want["class"]:
                right += 1
            else:
                wrong.append(
                    f"{capture.name}: {driver} is {entry.driver_class} ({entry.class_evidence}),"
                    f" expected {want['class']}"
                )
            if want["class"] in HARDWARE and entry.driver_class == DriverClass.GENERIC:
                hardware_called_generic.append(f"{capture.name}: {driver}")
    share = right / total
    print(f"\nclassed right: {right}/{total} = {share:.1%} in {len(CAPTURES)} captures")
    print("evidence that decided:", dict(evidence.most_common()))
    print("\n".join(wrong))
    assert hardware_called_generic == []
    assert share >= FLOOR, wrong
