# SPDX-License-Identifier: MIT
"""Where containers cannot be made (not root, LXC or busybox missing), hwcrypto_lxc skips
with how to fix it instead of erroring. In-process sessions, so the missing tool or
privilege can be arranged here; nothing is ever started on this host."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

USER_TEST = "def test_container(hwcrypto_lxc):\n    hwcrypto_lxc(['/dev/null'])\n"


def _skipped_with(pytester: pytest.Pytester, reason: str) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest("--hwcrypto", "-p", "no:cacheprovider", "-rs", "test_user.py")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"*{reason}*"])


def test_not_root_skips_saying_root_is_needed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    _skipped_with(pytester, "LXC containers with devices need root: run as root")


def test_missing_lxc_skips_with_the_package_to_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the root check comes first for a non-root user")
    monkeypatch.setenv("PATH", str(tmp_path))  # no lxc-start, no busybox
    _skipped_with(pytester, "lxc-start is not installed: apt-get install lxc")
