"""Board profile `[containers]`: the devices a board's containers must get, the configs to
audit, and waiving an unrestricted config by its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.profile import ProfileError, parse_profile
from pytest_hwcrypto.vocabulary import FindingKind

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
