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
def test_arm_offload_rule_is_judged_at_four_in_flight(board: str) -> None:
    """Under TCG virtio-crypto lost to generic one request at a time in every run (0.14-0.65x
    at 64 KiB); at N=4 it won in 5 runs of 6 (1.12-1.84x; 0.70x on armhf at load 3): the
    shipped rule judges N=4 only."""
    rules = [c.rule for c in rules_from_profile(load_profile(PROFILES / f"{board}.toml"))]
    offload = [r for r in rules if r is not None and getattr(r, "hw", None) == "offload"]
    assert [r.scope.concurrency for r in offload] == [4]
    label = offload[0].label
    assert unmeasured_level(label, 4, tuple(DEFAULT_CONCURRENCY)) is not None
    assert unmeasured_level(label, 4, (1, 4)) is None
