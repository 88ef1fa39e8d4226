# SPDX-License-Identifier: MIT
"""pytest_hwcrypto.tools, renamed parsers: old imports still work for a release, warn, and
give the very objects of pytest_hwcrypto.parsers (an old `except ParseError` still catches)."""

from __future__ import annotations

import importlib
import sys

import pytest

from pytest_hwcrypto.parsers import parse


def test_the_old_name_warns_and_gives_the_new_modules() -> None:
    for name in [
        m
        for m in sys.modules
        if m == "pytest_hwcrypto.tools" or m.startswith("pytest_hwcrypto.tools.")
    ]:
        del sys.modules[name]
    with pytest.warns(DeprecationWarning, match="pytest_hwcrypto.parsers"):
        importlib.import_module("pytest_hwcrypto.tools")
    old = importlib.import_module("pytest_hwcrypto.tools.parse")
    assert old is parse
    assert old.ParseError is parse.ParseError
