# SPDX-License-Identifier: MIT
"""Interleaved A/B measurement of two kernels (or two configurations of one): `hwcrypto ab`
and `hwcrypto bisect-run`. docs/ab.md says why pairs, and how they are judged."""
