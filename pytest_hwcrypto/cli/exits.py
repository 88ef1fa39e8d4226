# SPDX-License-Identifier: MIT
"""Every exit code of the `hwcrypto` command, in one place.

Commands return EXIT_OK or EXIT_FAIL (a verdict that failed); a user's mistake raises
UsageError (pytest_hwcrypto/usage.py), which main() turns into one line and EXIT_USAGE.
bisect-run answers `git bisect run`, which reads its own codes: 0 good, 1 bad, 125 skip,
>= 128 stops the bisection.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C
# 128 + SIGPIPE: what a shell reports for `yes | head -1`'s yes.
EXIT_CLOSED_PIPE = 141

BISECT_GOOD = 0
BISECT_BAD = 1
BISECT_SKIP = 125
BISECT_ABORT = 128  # git bisect run stops on >= 128: a usage error must not read as "bad"

# bisect-confirm: the first candidate's drop confirmed, every candidate alike, or some
# could not tell (2 is EXIT_USAGE)
CONFIRM_FOUND = 0
CONFIRM_ALIKE = 1
CONFIRM_UNTOLD = 3
