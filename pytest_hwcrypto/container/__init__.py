# SPDX-License-Identifier: MIT
"""LXC containers the plugin makes for itself, with host devices passed through the way a
user does it (device cgroup, bind mount, autodev hook), each recorded in the run's ledger
before it exists."""
