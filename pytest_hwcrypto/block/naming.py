# SPDX-License-Identifier: MIT
"""Names of what the plugin creates: `hwcrypto-<run id>-<n>`, unique per run and boot.

The run id is this process's ledger identity (pid and boot), so two runs at once never
pick the same name, and a name alone tells a sweep nothing: only what a ledger recorded is
ever removed (a decoy named `hwcrypto-...` by hand survives).
"""

from __future__ import annotations

import itertools
import os

from pytest_hwcrypto.ledger import boot_id

PREFIX = "hwcrypto"
_counter = itertools.count(1)


def run_id() -> str:
    return f"{os.getpid()}-{boot_id()[:8]}"


def next_name() -> str:
    """A fresh `hwcrypto-<run id>-<n>` for one loop + dm pair."""
    return f"{PREFIX}-{run_id()}-{next(_counter)}"
