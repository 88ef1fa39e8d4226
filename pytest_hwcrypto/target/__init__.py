# SPDX-License-Identifier: MIT
"""Host-driven targets: a board reached over SSH or its serial console, driven from the host."""
