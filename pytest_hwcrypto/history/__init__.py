# SPDX-License-Identifier: MIT
"""A history of CI runs, one run per kernel and board, and the change points in it.

model.py holds the shapes every part shares; the store writes and reads them, the
detection judges them, and neither knows how the other works.
"""
