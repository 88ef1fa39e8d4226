# SPDX-License-Identifier: MIT
"""tcrypt's multibuffer modes as a concurrency level: num_mb on the command line, and each
multibuffer result marked with the requests it kept in flight (measure/tcrypt_runner.py).

The log lines are the format of crypto/tcrypt.c's test_mb_skcipher_speed (6.1): a batch
of num_mb requests timed together, its operations and bytes those of the whole batch.
"""

from __future__ import annotations

import pytest

from pytest_hwcrypto.measure import tcrypt_runner
from pytest_hwcrypto.measure.tcrypt_runner import TcryptRequest, with_levels
from pytest_hwcrypto.parsers.tcrypt import parse_tcrypt

MULTIBUFFER_LOG = """\
tcrypt: testing speed of multibuffer cbc(aes) (cbc-aes-hwcrypto-test-async) encryption
tcrypt: test 0 (128 bit key, 16 byte blocks): 400 operations in 1 seconds (6400 bytes)
tcrypt: test 1 (128 bit key, 4096 byte blocks): 396 operations in 1 seconds (1622016 bytes)
tcrypt: testing speed of async cbc(aes) (cbc-aes-hwcrypto-test-async) encryption
tcrypt: test 0 (128 bit key, 16 byte blocks): 99 operations in 1 seconds (1584 bytes)
"""


def test_num_mb_is_passed_to_the_multibuffer_modes_only() -> None:
    request = TcryptRequest(mode=tcrypt_runner.MULTIBUFFER_SPEED_MODE, sec=1, num_mb=4)
    assert request.modprobe_argv() == ["modprobe", "tcrypt", "mode=600", "sec=1", "num_mb=4"]
    assert request.in_flight == 4
    assert TcryptRequest(mode=600).in_flight == tcrypt_runner.DEFAULT_NUM_MB
    assert TcryptRequest(mode=500).in_flight is None
    with pytest.raises(ValueError, match="multibuffer modes 600-699"):
        TcryptRequest(mode=500, num_mb=4)
    with pytest.raises(ValueError, match="1 or more"):
        TcryptRequest(mode=600, num_mb=0)


def test_multibuffer_results_carry_their_level_and_the_others_none() -> None:
    measured = parse_tcrypt(MULTIBUFFER_LOG, "log")
    marked = with_levels(measured, TcryptRequest(mode=600, num_mb=4))
    multibuffer = [m for m in marked if m.extra.get("tcrypt_mode") == "multibuffer"]
    single = [m for m in marked if m.extra.get("tcrypt_mode") == "async"]
    assert len(multibuffer) == 2 and len(single) == 1
    assert all(m.concurrency == 4 for m in multibuffer)
    assert single[0].concurrency is None and single[0].level == 1
    # the batch's bytes: four requests of 4096 B, 99 batches a second
    at_4k = next(m for m in multibuffer if m.block_size == 4096)
    assert at_4k.bytes_per_second == pytest.approx(1622016)
    assert at_4k.driver == "cbc-aes-hwcrypto-test-async"
