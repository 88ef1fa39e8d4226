# SPDX-License-Identifier: MIT
"""Only for this repository's own test runs (not shipped): nothing here is needed by users."""
