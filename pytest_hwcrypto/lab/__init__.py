# SPDX-License-Identifier: MIT
"""Running in a lab of many boards: LAVA test definitions and jobs, a job's results read
back from LAVA, a local LAVA lab for CI, and KernelCI's KCIDB output."""
