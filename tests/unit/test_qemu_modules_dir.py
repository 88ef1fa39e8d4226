# SPDX-License-Identifier: MIT
"""--hwcrypto-modules naming the host's own /lib/modules/<release>: nothing to stage (staged,
it was linked onto itself and the guest loaded no module); any other directory is staged."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.boards import qemu
from pytest_hwcrypto.boards.qemu import QemuBoard

RELEASE = "6.1.0-57-amd64"


@pytest.fixture
def host_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host whose /lib is a link to /usr/lib, as on Debian 12."""
    (tmp_path / "usr" / "lib" / "modules" / RELEASE).mkdir(parents=True)
    (tmp_path / "lib").symlink_to(tmp_path / "usr" / "lib")
    root = tmp_path / "lib" / "modules"
    monkeypatch.setattr(qemu, "HOST_MODULES_ROOT", root)
    return root


def test_the_hosts_own_modules_are_not_staged_by_either_name(
    host_modules: Path, tmp_path: Path
) -> None:
    for given in (host_modules / RELEASE, tmp_path / "usr" / "lib" / "modules" / RELEASE):
        board = QemuBoard(kernel=tmp_path / f"vmlinuz-{RELEASE}", modules_dir=given)
        assert qemu.is_host_modules_dir(given)
        assert board._modules_setup() == ""  # no bind of the directory onto itself


def test_a_modules_directory_elsewhere_is_staged(host_modules: Path, tmp_path: Path) -> None:
    own = tmp_path / "build" / "lib" / "modules" / RELEASE
    own.mkdir(parents=True)
    board = QemuBoard(kernel=tmp_path / f"vmlinuz-{RELEASE}", modules_dir=own)
    assert not qemu.is_host_modules_dir(own)
    assert board._modules_setup() != ""
