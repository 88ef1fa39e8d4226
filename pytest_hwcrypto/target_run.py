# SPDX-License-Identifier: MIT
"""A host-driven run's board (--hwcrypto-target): connected on first use, closed at the
end, and the suites not ported to it yet skipped with the reason.

Apart from fixtures.py so that module keeps to what a suite asks of the kernel under test;
plugin.py, run_output.py and the suites reach the board's session through here.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_hwcrypto.run import HwcryptoRun
from pytest_hwcrypto.target.protocol import TargetError
from pytest_hwcrypto.target.session import TargetSession, open_transport
from pytest_hwcrypto.vocabulary import Suite

# The suites a host-driven run has ported so far; the others skip on a target, saying so,
# rather than measure the host's kernel under the board's name.
TARGET_SUITES = frozenset({Suite.INVENTORY, Suite.THROUGHPUT, Suite.CORRECTNESS})
TARGET_EVIDENCE_NOTE = (
    "host-driven run: sysfs devices and crypto_user flags are not read from the board yet"
)


def target_session(run: HwcryptoRun) -> TargetSession | None:
    """The board of --hwcrypto-target, connected on first use; None without a target."""
    spec = run.options.target
    if spec is None:
        return None
    if run.target is None:
        try:
            run.target = TargetSession(open_transport(spec, run.options.target_key))
        except TargetError as error:
            raise pytest.UsageError(f"--hwcrypto-target: {error}") from None
    return run.target


def disconnect_target(run: HwcryptoRun) -> None:
    """Remove what the run put on the board (the helper) and close the connection."""
    if run.target is not None:
        run.target.close()
        run.target = None


def skip_suites_off_target(run: HwcryptoRun, items: Sequence[pytest.Item]) -> None:
    """On a target, the suites not ported yet skip with their name and why."""
    if run.options.target is None:
        return
    for item in items:
        suites = {suite for suite in Suite if item.get_closest_marker(suite.marker)}
        if suites and not suites & TARGET_SUITES:
            names = ", ".join(sorted(suites))
            item.add_marker(
                pytest.mark.skip(
                    reason=f"{names}: not host-driven yet (--hwcrypto-target runs "
                    f"{', '.join(sorted(TARGET_SUITES))})"
                )
            )
