# SPDX-License-Identifier: MIT
"""Property: no text makes the parsers raise anything but ParseError, or emit a bad rate.

Two sources of input: random text salted with the words the parsers look for, and the
real recordings (tests/data/paste/raw) with lines dropped, repeated, cut, glued to the
next one or interleaved with noise.  Whatever comes out must be a results file that
`Results.from_json` accepts (every rate finite and >= 0) and JSON without NaN/inf.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.parsers.parse import TOOLS, ParseError, parse_text, to_results

RAW = sorted((Path(__file__).parent.parent / "data" / "paste" / "raw").glob("*.txt"))
RAW_TEXTS = [path.read_text(encoding="utf-8") for path in RAW]
WORDS = [
    "aes-xts 512b",
    " 88.7 MiB/s",
    "N/A",
    "PBKDF2-sha256 1 iterations per second for 256-bit key",
    "argon2id 4 iterations, 1 memory, 4 parallel threads (CPUs)",
    "# Algorithm | Key | Encryption | Decryption",
    "type 16 bytes 64 bytes",
    "aes-128-cbc 1190581.81k 0.00k",
    "+H:16:64",
    "+F:25:AES-128-CBC:1e309:99999999999999999999999999999999999999999.00",
    "+F2:2:2048:1.0:2.0",
    "+DT:AES-128-CBC:1:16",
    "+R:5:AES-128-CBC:0.000000",
    "Doing aes-128-cbc for 1s on 16 size blocks: 9 aes-128-cbc's in 0.00s",
    "sign verify sign/s verify/s",
    "rsa 2048 bits 0.1s 0.2s 1.0 2.0",
    'Engine "afalg" set.',
    "version: 3.0.19",
    "randrw: (groupid=0, jobs=1): err= 0: pid=1",
    "  read: IOPS=98, BW=392KiB/s",
    "   bw (  KiB/s): min=  304, max=  463, per=99.98%, avg=392.80, stdev=37.09, samples=15",
    "    dm-1: ios=775/805, merge=0/0, util=98.72%",
    '{"fio version": "fio-3.33", "jobs": [{"read": {"bw_bytes": -1, "total_ios": 1}}]}',
    "tcrypt: testing speed of async cbc(aes) (cbc-aes-aesni) encryption",
    "test 0 (128 bit key, 16 byte blocks): 1 operations in 0 seconds (16 bytes)",
    "$ openssl speed -evp aes-128-cbc -engine",
    "[root@host ~]# ",
    "9" * 400,
    # what posts add (parsers/normalise.py) and older and newer tool versions print
    "**",
    "<br>",
    "&gt; ",
    "- ",
    "| ",
    "                                                  |  ",
    "[...] ",
    "Dec  6 10:00:00 host kernel: [ 1.5] ",
    "690,1 MiB/s",
    "# Die Tests sind nur annähernd genau.",
    "#   Algorithmus | Schlüssel | Verschlüsselung | Entschlüsselung",
    "serpent-cbc 128b N/D N/D",
    "xchacha12,aes-adiantum 256b 1,5 MiB/s",
    "AES-128-CBC infk infk 15355084.80k",
    "Doing AES-128-CBC ops for 3s on 16 size blocks: 37316 AES-128-CBC ops in 0.00s",
    "$ ./util/wrap.pl -fips ./apps/openssl speed -mb -multi 1 -bytes 99999999999999999999",
    "randrw: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=4",
    "  read : io=1024.0MB, bw=34952KB/s, iops=8738, runt= 30001msec",
    "  read : io=1KiB, bw=12KB/s, iops=3",
    "  write: IOPS=98, BW=",
    "   READ: io=21013MB, aggrb=1126.5MB/s, minb=1126.5MB/s, maxb=1126.5MB/s",
    "  WRITE: bw=390MiB/s (409MB/s), 390MiB/s-390MiB/s (409MB/s-409MB/s), io=10.6GiB",
    "Run status group 0 (all jobs):",
    "# fio --name=x --bs=99999999999999999999999999k",
    "1 operation in 339 cycles (16 bytes)",
    "1 operation in 0 nsecs (16 bytes)",
    "test 0 (128 bit key, 16 byte blocks): 1 operation in 534 cycles",
    "    12 nsecs/operation,    1 nsecs/byte",
    "seconds (30692752 bytes)",
]
SEPARATORS = ["", " ", "\n", "\r\n", "\r", "\t", "\n\n"]


def check(tool: str, text: str) -> None:
    try:
        document = parse_text(tool, text, "fuzz.txt")
    except ParseError as error:
        assert "\n" not in str(error) and str(error).startswith("fuzz.txt")
        return
    for measurement in document.measurements:
        rate = measurement.bytes_per_second
        assert math.isfinite(rate) and rate >= 0, measurement
    data = to_results(document).to_json()
    encoded = json.dumps(data, allow_nan=False)  # no NaN/inf anywhere, records included
    Results.from_json(json.loads(encoded), "fuzz.json")


noise = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(WORDS)), max_size=30).flatmap(
    lambda parts: st.lists(
        st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)
    ).map(lambda seps: "".join(part + sep for part, sep in zip(parts, seps)))
)


@st.composite
def damaged_recordings(draw: st.DrawFn) -> str:
    """A real output (or two run together) with lines dropped, repeated, cut or glued."""
    lines = draw(st.sampled_from(RAW_TEXTS)).splitlines()
    if draw(st.booleans()):
        lines += draw(st.sampled_from(RAW_TEXTS)).splitlines()
    for _ in range(draw(st.integers(0, 6))):
        if not lines:
            break
        where = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "cut", "glue", "noise"]))
        if action == "drop":
            del lines[where]
        elif action == "repeat":
            lines.insert(where, lines[where])
        elif action == "cut":
            lines[where] = lines[where][: draw(st.integers(0, len(lines[where])))]
        elif action == "glue" and where + 1 < len(lines):
            lines[where : where + 2] = [lines[where] + lines[where + 1]]
        elif action == "noise":
            lines.insert(where, draw(st.one_of(st.text(max_size=30), st.sampled_from(WORDS))))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines)
    return text[: draw(st.integers(0, len(text)))] if draw(st.booleans()) else text


FUZZ = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@FUZZ
@given(tool=st.sampled_from(TOOLS), text=noise)
def test_random_text_never_breaks_the_parsers(tool: str, text: str) -> None:
    check(tool, text)


@FUZZ
@given(tool=st.sampled_from(["auto", "auto", *TOOLS]), text=damaged_recordings())
def test_damaged_recordings_never_break_the_parsers(tool: str, text: str) -> None:
    check(tool, text)
