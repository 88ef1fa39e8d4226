# SPDX-License-Identifier: MIT
"""Block devices the plugin makes for itself: loop devices on its own backing files and
dm-crypt volumes on them, each recorded in the run's ledger before it exists."""
