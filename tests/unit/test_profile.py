# SPDX-License-Identifier: MIT
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.profile import ProfileError, load_profile, parse_profile

GOOD = """
[board]
name = "qemu-virtio"

[[expect]]
algorithm = "cbc(aes)"
driver = "virtio_crypto_aes_cbc"

[[expect]]
algorithm = "xts(aes)"
class = "cpu-accel"
module = "aesni_intel"

[[waive]]
driver = "virtio-crypto-rsa"
check = "selftest"
reason = "builtin backend lacks RSA raw padding"

[[rule]]
type = "hw-beats-sw"
algorithm = "cbc(aes)"
hw = "offload"
sw = "generic"
min_ratio = 1.0
block_sizes = ">=65536"

[settings]
suite = "inventory"
"""


def test_good_profile_loads_everything() -> None:
    profile = parse_profile(GOOD, Path("b.toml"))
    assert profile.name == "qemu-virtio"
    assert [e.describe() for e in profile.expectations] == [
        "cbc(aes) by virtio_crypto_aes_cbc",
        "xts(aes) by a cpu-accel driver",
    ]
    assert profile.expectations[1].module == "aesni_intel"
    assert profile.waiver_for("virtio-crypto-rsa", "selftest") is not None
    assert profile.waiver_for("virtio-crypto-rsa", "throughput") is None
    assert profile.rules[0]["type"] == "hw-beats-sw"
    assert profile.rules[0]["location"] == "b.toml:19: [rule #1]"
    assert profile.settings == {"suite": "inventory"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[board]\n", "b.toml:1: [board] name: a board name (string) is required"),
        (
            '[board]\nname="x"\n[[expect]]\ndriver = "d"\n',
            "b.toml:3: [expect #1]: missing required key 'algorithm'",
        ),
        (
            '[board]\nname="x"\n[[expect]]\nalgorithm = "a"\n',
            "b.toml:3: [expect #1]: give a driver or a class for a",
        ),
        (
            '[board]\nname="x"\n[[expect]]\nalgorithm = "a"\ndriver="d"\nspeed = 3\n',
            "b.toml:6: [expect #1] speed: unknown key "
            "(allowed: algorithm, driver, class, module, reason, dmcrypt)",
        ),
        (
            '[board]\nname="x"\n[[rule]]\ntype = "fastest"\n',
            "b.toml:4: [rule #1] type: unknown rule type 'fastest' "
            "(choose from hw-beats-sw, floor, winner-fastest, no-regression)",
        ),
        (
            '[board]\nname="x"\n[[waive]]\ndriver = "d"\n',
            "b.toml:3: [waive #1]: missing required key 'reason'",
        ),
        (
            '[board]\nname="x"\n[[classify]]\ndriver = "ss-*"\nclass = "fast"\n',
            "b.toml:5: [classify #1] class: unknown class 'fast' "
            "(choose from generic, cpu-accel, offload)",
        ),
        (
            '[board]\nname="x"\n[[classify]]\nclass = "offload"\n',
            "b.toml:3: [classify #1]: missing required key 'driver'",
        ),
        (
            '[board]\nname="x"\n[[classify]]\ndriver = "ss-*"\nclass = "offload"\nwhy = "x"\n',
            "b.toml:6: [classify #1] why: unknown key (allowed: driver, module, class, reason)",
        ),
        (
            '[boards]\nname="x"\n',
            "b.toml: unknown table 'boards' "
            "(expected one of board, expect, rule, waive, settings, containers, classify)",
        ),
    ],
)
def test_errors_name_file_line_entry_and_key(text: str, message: str) -> None:
    with pytest.raises(ProfileError) as error:
        parse_profile(text, Path("b.toml"))
    assert str(error.value) == message


def test_toml_syntax_error_names_the_line() -> None:
    with pytest.raises(ProfileError, match=r"b.toml: not valid TOML: .*line 2"):
        parse_profile('[board]\nname = "x\n', Path("b.toml"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"board profile .*nope\.toml not found"):
        load_profile(tmp_path / "nope.toml")


def test_the_profiles_pages_example_loads_and_every_rule_reads() -> None:
    """docs/profiles.md's example is what a newcomer copies: it must stay valid."""
    from pytest_hwcrypto.verdict.rules.reader import rules_from_profile

    page = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text()
    text = page.split("```toml\n", 1)[1].split("```", 1)[0]
    profile = parse_profile(text, Path("docs/profiles.md"))
    rules = rules_from_profile(profile)
    assert rules and all(rule.error is None for rule in rules), rules
    relative = [r.rule for r in rules if getattr(r.rule, "relative_to", None)]
    assert [getattr(rule, "relative_to", None) for rule in relative] == ["software"]
