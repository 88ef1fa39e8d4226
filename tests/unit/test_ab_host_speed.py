# SPDX-License-Identifier: MIT
"""Judging A/B pairs per unit of host speed (measure/host_speed.py, ab/series.py).

A fake board whose speed changes from one sample to the next, as a shared host's does
under load; every sample carries the user-space speed timed around it, which moves with
the same load. Judged per host speed, the load cancels; judged as measured, it does not.
"""

from __future__ import annotations

import io
import math
import random

import pytest

from pytest_hwcrypto.ab.document import AbDocument, Side
from pytest_hwcrypto.ab.engine import SliceOutcome, run_ab
from pytest_hwcrypto.ab.series import HOST_SPEED_SERIES, collect_pairs, host_speeds
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.measure.host_speed import user_space_speed
from pytest_hwcrypto.model.results import HOST_SPEED_KEY
from pytest_hwcrypto.verdict.paired import PairedVerdict
from tests.factories import measurement

MIB = 1024.0 * 1024.0
USER_SPACE = 400 * MIB


class LoadedBoard:
    """Each sample runs at a share of the CPU drawn anew (0.3-1.0: other boards come and
    go); B's driver 'slow' does `drop` less per CPU; B's user space runs `user_drop`
    slower (a kernel that slows plain code too)."""

    def __init__(
        self, drop: float = 0.0, user_drop: float = 0.0, seed: int = 0, probe: bool = True
    ) -> None:
        self.drop, self.user_drop, self.probe = drop, user_drop, probe
        self.rng = random.Random(seed)

    def describe(self, side: str) -> str:
        return f"kernel {side} (fake)"

    def run_slice(self, side: str, pair_index: int) -> SliceOutcome:
        user = 1.0 - self.user_drop if side == "B" else 1.0
        measurements = []
        for driver, base in (("fast", 200.0), ("slow", 100.0)):
            factor = 1.0 - self.drop if (side == "B" and driver == "slow") else 1.0
            samples, speeds = [], []
            for _ in range(6):
                share = self.rng.uniform(0.3, 1.0)
                noise = math.exp(self.rng.gauss(0, 0.01))
                samples.append(base * MIB * share * user * factor * noise)
                speeds.append(USER_SPACE * share * user * math.exp(self.rng.gauss(0, 0.01)))
            extra = {HOST_SPEED_KEY: speeds} if self.probe else {}
            measurements.append(
                {
                    "source": "afalg",
                    "algorithm": "cbc(aes)",
                    "driver": driver,
                    "key_bits": 128,
                    "block_size": 65536,
                    "op": "encrypt",
                    "bytes_per_second": sorted(samples)[3],
                    "samples": samples,
                    **extra,
                }
            )
        inventory = [{"name": "cbc(aes)", "driver": "slow", "priority": 100, "winner": True}]
        return SliceOutcome(
            {"schema": "pytest-hwcrypto/1", "inventory": inventory, "measurements": measurements},
            0.5,
        )


def document(host_speed: bool = True) -> AbDocument:
    return AbDocument(
        board="uml",
        sides={"A": Side("A", "/k/a"), "B": Side("B", "/k/b")},
        slice=SliceSpec(seconds=1.0, block_sizes=(65536,), host_speed=host_speed),
        seed=3,
        max_drop=0.02,
        alpha=0.05,
        steps=[10, 20],
    )


def verdicts(board: LoadedBoard) -> dict[str, PairedVerdict]:
    outcome = run_ab(document(board.probe), board, None, stream=io.StringIO())
    return {v.key[5]: v.comparison.verdict for v in outcome.verdicts}


def test_per_host_speed_a_5_percent_drop_is_found_where_bytes_per_second_cannot_tell() -> None:
    found = verdicts(LoadedBoard(drop=0.05, seed=1))
    assert found["slow"] is PairedVerdict.REGRESSED
    assert found["fast"] is PairedVerdict.SAME
    assert found["(host speed)"] is not PairedVerdict.REGRESSED
    raw = verdicts(LoadedBoard(drop=0.05, seed=1, probe=False))
    assert raw["slow"] is PairedVerdict.UNKNOWN
    assert "(host speed)" not in raw


def test_an_unchanged_kernel_is_same_per_host_speed_over_many_runs() -> None:
    for seed in range(10):
        found = verdicts(LoadedBoard(seed=seed))
        assert PairedVerdict.REGRESSED not in found.values()


def test_a_kernel_that_slows_user_space_shows_as_the_yardstick_regressing() -> None:
    # every byte of crypto per byte of the yardstick is unchanged: only the yardstick's own
    # series can say the kernel made everything slower
    found = verdicts(LoadedBoard(user_drop=0.10, seed=2))
    assert found["(host speed)"] is PairedVerdict.REGRESSED
    assert found["slow"] is not PairedVerdict.REGRESSED


def test_a_pair_where_one_measurement_lacks_host_speeds_is_judged_as_measured() -> None:
    board = LoadedBoard(seed=4)
    run_ab(doc := document(), board, None, stream=io.StringIO())
    pair = doc.complete_pairs[0]
    results = pair.slices["B"].results
    assert results is not None
    del results["measurements"][0][HOST_SPEED_KEY]
    series = collect_pairs([pair])
    assert not series[next(k for k in series if k[5] == "fast")].normalised
    assert HOST_SPEED_SERIES not in series


@pytest.mark.parametrize(
    "speeds", [None, [1.0, 2.0], [1.0, 0.0, 2.0], "fast", [1.0, "x", 2.0]], ids=repr
)
def test_host_speeds_must_be_one_positive_number_per_sample(speeds: object) -> None:
    m = measurement("d", 1.0, block_size=65536, samples=[1.0] * 3)
    if speeds is not None:
        m.extra[HOST_SPEED_KEY] = speeds
    assert host_speeds(m) == []


def test_user_space_speed_runs_for_its_time_on_the_clock() -> None:
    ticks = iter([0.0, 0.01, 0.02, 0.03])
    # three passes of the 64 KiB buffer in 0.03 s of the fake clock
    assert user_space_speed(0.025, clock=lambda: next(ticks)) == pytest.approx(3 * 65536 / 0.03)


def test_judging_per_host_speed_is_asked_for_not_the_default() -> None:
    from pytest_hwcrypto import cli

    parse = cli.build_parser().parse_args
    assert parse(["ab", "--kernel", "a", "--kernel", "b"]).host_speed is False
    assert parse(["ab", "--kernel", "a", "--kernel", "b", "--host-speed"]).host_speed is True
