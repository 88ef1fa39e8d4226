# SPDX-License-Identifier: MIT
"""verdict/rule_level.py: a profile rule at a level of requests in flight the run did not
measure is skipped with how to judge it (it used to fail as 'no offload measured')."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_hwcrypto.boards.profiles as shipped
from pytest_hwcrypto.measure.parallel import DEFAULT_CONCURRENCY
from pytest_hwcrypto.profile import load_profile
from pytest_hwcrypto.verdict.rule_level import unmeasured_level
from pytest_hwcrypto.verdict.rules import rules_from_profile

PROFILES = Path(next(iter(shipped.__path__)))


def test_a_level_not_measured_says_which_to_add() -> None:
    reason = unmeasured_level("hw-beats-sw cbc(aes) offload vs generic", 4, (1,))
    assert reason == (
        "hw-beats-sw cbc(aes) offload vs generic: judged with 4 requests in flight, a level "
        "this run did not measure (--hwcrypto-concurrency=1): add 4 to "
        "--hwcrypto-concurrency to judge it"
    )


def test_measured_levels_and_rules_of_every_level_are_judged() -> None:
    assert unmeasured_level("r", 4, (1, 4)) is None
    assert unmeasured_level("r", None, (1,)) is None
    assert unmeasured_level("r", 1, (1, 8)) is None
    assert unmeasured_level("r", 1, (4,)) is not None


@pytest.mark.parametrize("board", ["qemu-arm64", "qemu-armhf"])
def test_arm_profiles_carry_no_throughput_rule_under_emulation(board: str) -> None:
    """Under TCG virtio-crypto against generic swung with the host's load (0.14-0.65x one
    request at a time, 0.70-1.84x with 4 in flight): the shipped ARM profiles judge no
    throughput, and say why in a comment (a real board's profile does)."""
    rules = [c.rule for c in rules_from_profile(load_profile(PROFILES / f"{board}.toml"))]
    assert [r for r in rules if r is not None and getattr(r, "hw", None)] == []
    assert "No throughput rule" in (PROFILES / f"{board}.toml").read_text()


def test_a_rule_at_four_in_flight_is_judged_only_where_four_was_measured() -> None:
    assert unmeasured_level("offload vs generic", 4, tuple(DEFAULT_CONCURRENCY)) is not None
    assert unmeasured_level("offload vs generic", 4, (1, 4)) is None
