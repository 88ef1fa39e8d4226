# SPDX-License-Identifier: MIT

