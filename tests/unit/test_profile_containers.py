# SPDX-License-Identifier: MIT
"""Board profile `[containers]`: the devices a board's containers must get, the configs to
audit, and waiving an unrestricted config by its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.profile import ProfileError, parse_profile
from pytest_hwcrypto.vocabulary import FindingKind
from tests.factories import measurement

HEAD = '[board]\nname = "omnia"\n'


def test_container_keys_are_read() -> None:
    profile = parse_profile(
        HEAD
        + '[containers]\ndevices = ["/dev/crypto"]\nconfigs = ["/srv/lxc/*/config"]\n'
        + '[[waive]]\ncontainer = "/srv/lxc/web/config"\n'
        + 'check = "container-devices-unrestricted"\nreason = "legacy, being fixed"\n',
        Path("omnia.toml"),
    )
    assert profile.containers is not None
    assert profile.containers.devices == ("/dev/crypto",)
    assert profile.containers.configs == ("/srv/lxc/*/config",)
    waiver = profile.waiver_for("/srv/lxc/web/config", FindingKind.CONTAINER_DEVICES_UNRESTRICTED)
    assert waiver is not None and waiver.reason == "legacy, being fixed"
    assert profile.waiver_for("/srv/lxc/db/config", "container-devices-unrestricted") is None


def test_without_the_table_nothing_is_required_and_the_default_path_is_audited() -> None:
    profile = parse_profile(HEAD, Path("p.toml"))
    assert profile.containers is None
    keys = parse_profile(HEAD + '[containers]\ndevices = ["/dev/crypto"]\n', Path("p.toml"))
    assert keys.containers is not None and keys.containers.configs is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[containers]\ndevice = ["/dev/crypto"]\n', "p.toml:4: [containers] device: unknown key"),
        ('[containers]\ndevices = "/dev/crypto"\n', "devices must be a list of strings"),
        ('[containers]\ndevices = ["/etc/passwd"]\n', "'/etc/passwd' is not under /dev"),
    ],
)
def test_bad_container_keys_name_the_file_line_and_key(table: str, message: str) -> None:
    with pytest.raises(ProfileError) as error:
        parse_profile(HEAD + table, Path("p.toml"))
    assert message in str(error.value)


def test_a_container_rule_sees_only_measurements_taken_inside_a_container() -> None:
    from pytest_hwcrypto.model.results import Measurement
    from pytest_hwcrypto.verdict.rules import rules_from_profile

    profile = parse_profile(
        HEAD
        + '[[rule]]\ntype = "hw-beats-sw"\nalgorithm = "cbc(aes)"\nhw = "hw-drv"\n'
        + 'sw = "sw-drv"\nwhere = "container"\n'
        + '[[rule]]\ntype = "hw-beats-sw"\nalgorithm = "cbc(aes)"\nhw = "hw-drv"\nsw = "sw-drv"\n',
        Path("p.toml"),
    )
    inside_rule, host_rule = (c.rule for c in rules_from_profile(profile))
    assert inside_rule is not None and host_rule is not None

    def measured(driver: str, rate: float, where: str | None) -> Measurement:
        extra = {"where": where} if where else {}
        return measurement(driver, rate, key_bits=256, block_size=65536, extra=extra)

    # Inside, hw wins; on the host it loses: each rule judges its own place only.
    data = [
        measured("hw-drv", 200.0, "container"),
        measured("sw-drv", 100.0, "container"),
        measured("hw-drv", 50.0, None),
        measured("sw-drv", 100.0, None),
    ]
    assert inside_rule.evaluate(data, []).verdict.passed
    assert not host_rule.evaluate(data, []).verdict.passed


def test_a_rule_place_other_than_host_or_container_names_the_key() -> None:
    from pytest_hwcrypto.verdict.rules import rules_from_profile

    profile = parse_profile(
        HEAD + '[[rule]]\ntype = "floor"\nalgorithm = "x"\ndriver = "d"\nmin_mib_s = 1\n'
        'where = "vm"\n',
        Path("p.toml"),
    )
    (collected,) = rules_from_profile(profile)
    assert collected.rule is None
    assert "p.toml:3: [rule #1]: key 'where' must be one of host, container" in str(collected.error)
