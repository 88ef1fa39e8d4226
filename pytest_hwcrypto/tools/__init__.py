# SPDX-License-Identifier: MIT
"""Deprecated: the paste parsers are pytest_hwcrypto.parsers now. Importing
pytest_hwcrypto.tools (or any pytest_hwcrypto.tools.X) warns and hands out the same
module objects as pytest_hwcrypto.parsers, so old imports keep working for a release."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings

from pytest_hwcrypto import parsers

warnings.warn(
    "pytest_hwcrypto.tools is renamed pytest_hwcrypto.parsers; import from there",
    DeprecationWarning,
    stacklevel=2,
)

for _module in pkgutil.iter_modules(parsers.__path__):
    sys.modules[f"{__name__}.{_module.name}"] = importlib.import_module(
        f"{parsers.__name__}.{_module.name}"
    )
