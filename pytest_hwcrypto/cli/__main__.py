# SPDX-License-Identifier: MIT
"""`python -m pytest_hwcrypto.cli`: the `hwcrypto` command without its console script."""

import sys

from pytest_hwcrypto.cli import main

sys.exit(main())
