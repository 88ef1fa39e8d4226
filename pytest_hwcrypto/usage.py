# SPDX-License-Identifier: MIT
"""The one error for a user's mistake: a bad option, a missing file, a file that says
something impossible. The `hwcrypto` command prints it as one line and exits with
EXIT_USAGE (cli/exits.py); it lives at the bottom layer so that ab/ and the other
layers under the CLI can raise it for what the user named."""

from __future__ import annotations


class UsageError(Exception):
    """A mistake on the command line or in a file it names; printed as one line."""
