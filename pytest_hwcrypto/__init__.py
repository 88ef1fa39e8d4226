# SPDX-License-Identifier: MIT
"""pytest-hwcrypto: test that kernel hardware crypto is registered, correct, used and fast."""
