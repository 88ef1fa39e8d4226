# SPDX-License-Identifier: MIT
"""Every table of a run gives a driver one class: the throughput suite re-reads /proc/crypto
after its run and classes it as the run's inventory is (profile [[classify]], live facts,
names), not by names alone -- which made the test drivers `unknown` in AF_ALG's table and
`offload` in dm-crypt's in one run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import parse_proc_crypto
from pytest_hwcrypto.profile import ClassifyEntry
from pytest_hwcrypto.run import HwcryptoRun

LISTING = """name         : cbc(aes)
driver       : cbc-aes-hwcrypto-test-a
module       : hwcrypto_test
priority     : 50
refcnt       : 1
selftest     : passed
internal     : no
type         : skcipher
async        : no
blocksize    : 16
min keysize  : 16
max keysize  : 32
ivsize       : 16
chunksize    : 16
walksize     : 16

name         : cbc(aes)
driver       : cbc(aes-generic)
module       : kernel
priority     : 100
refcnt       : 1
selftest     : passed
internal     : no
type         : skcipher
async        : no
blocksize    : 16
min keysize  : 16
max keysize  : 32
ivsize       : 16
chunksize    : 16
walksize     : 16
"""


def run_with(*entries: ClassifyEntry) -> HwcryptoRun:
    profile: Any = SimpleNamespace(classify=entries) if entries else None
    # no --hwcrypto-target: the kernel under test is this one
    options = SimpleNamespace(target=None)
    return cast(HwcryptoRun, SimpleNamespace(profile=profile, options=options))


def test_a_re_read_listing_is_classed_as_the_runs_inventory_is() -> None:
    algs = parse_proc_crypto(LISTING)
    engine = ClassifyEntry("cbc-aes-hwcrypto-test-*", "offload", "board.toml:3")
    classes = {e.driver: e.driver_class for e in fixtures.classified(run_with(engine), algs)}
    assert classes == {"cbc-aes-hwcrypto-test-a": "offload", "cbc(aes-generic)": "generic"}
    # what the suite did before: names alone, blind to the board profile
    by_name = {e.driver: e.driver_class for e in build_inventory(algs)}
    assert by_name["cbc-aes-hwcrypto-test-a"] == "unknown"
    # without a profile, the same evidence as the run's inventory (here: names)
    plain = {e.driver: e.driver_class for e in fixtures.classified(run_with(), algs)}
    assert plain == by_name
