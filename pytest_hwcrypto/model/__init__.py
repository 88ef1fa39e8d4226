# SPDX-License-Identifier: MIT
"""The data every layer passes around: Measurement, Finding, Verdict, Results, SampleStats."""
