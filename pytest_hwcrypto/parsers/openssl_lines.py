# SPDX-License-Identifier: MIT
"""The lines `openssl speed` prints, one pattern each, and what they are worth (pure).

apps/speed.c in OpenSSL 1.1 and 3.x prints, per run:

* ``Engine "afalg" set.`` (with ``-engine``; ``Invalid engine "devcrypto"`` when it could
  not be loaded, and the run goes on without it), ``You have chosen to measure elapsed time
  instead of user CPU time.`` (with ``-elapsed``; not with ``-mr``);
* ``Doing AES-128-CBC for 1s on 16 size blocks: 89103449 AES-128-CBC's in 1.00s`` per
  cipher or digest and size (the legacy names in 3.x are lowercase: ``aes-128-cbc``; in
  1.1 they are spelt ``aes-128 cbc``), ``Doing 2048 bits private rsa's for 1s: ...``;
* the build header: ``version: 3.0.19`` (1.1: ``OpenSSL 1.1.1n  15 Mar 2022``),
  ``built on:``, ``options:``, ``compiler:``, ``CPUINFO:`` (3.x), ``platform:``;
* ``The 'numbers' are in 1000s of bytes per second processed.``, the header
  ``type  16 bytes  64 bytes ...`` and a row per algorithm, ``1190581.81k`` meaning
  1190581.81 x 1000 bytes/s (values under 10000 bytes/s are printed without the k);
* sign/verify tables: ``sign verify sign/s verify/s`` then ``rsa 2048 bits 0.000479s
  0.000015s 2086.0 66689.0`` (and ``op op/s`` for key exchange) -- operations, not bytes;
* with ``-mr`` instead: ``+DT:name:seconds:size``, ``+R:count:name:time``, ``+H:16:64:...``
  (the sizes) and ``+F:index:name:v1:v2...`` (bytes/s, no k), ``+F2:index:bits:sign/s:
  verify/s`` for RSA and likewise ``+F3``.. for the other public-key kinds;
* with ``-multi N``: ``Forked child 0``, the children's ``-mr`` lines, ``Got: +F:... from
  0`` per child, and the summed row at the end without a ``type`` header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pytest_hwcrypto.parsers.tables import Record, finite_rate

DEFAULT_SIZES = (16, 64, 256, 1024, 8192, 16384)
# OpenSSL before 1.1.0 measured five sizes, without 16384
DEFAULT_SIZES_1_0 = (16, 64, 256, 1024, 8192)
# -mb (multi-block ciphers such as AES-128-CBC-HMAC-SHA256): speed.c's mblengths
MB_SIZES = (8192, 16384, 32768, 65536, 131072)
_NUMBER = r"\d+(?:\.\d+)?"

ENGINE_SET = re.compile(r'^\s*engine\s+"(?P<engine>[^"]+)"\s+set\.?', re.IGNORECASE)
# the engine could not be loaded: openssl goes on without it
ENGINE_INVALID = re.compile(r'^\s*invalid engine\s+"(?P<engine>[^"]+)"', re.IGNORECASE)
ELAPSED = re.compile(r"^\s*You have chosen to measure elapsed time", re.IGNORECASE)
DOING = re.compile(
    r"^\s*Doing\s+(?P<name>.+?)(?:\s+ops)?\s+for\s+(?P<seconds>\d+)s\s+on\s+(?P<size>\d+)"
    r"\s+size\s+blocks?:"
    rf"(?:\s*(?P<count>\d+)\s+.+?(?:'s|\s+ops)\s+in\s+(?P<time>{_NUMBER})s)?"
)
DOING_PKEY = re.compile(r"^\s*Doing\s+\d+\s+bits?\s+.+?\s+for\s+\d+s\b")
FORKED = re.compile(r"^\s*Forked child \d+")
GOT = re.compile(r"^\s*Got:\s*(?P<line>\+\S+)(?:\s+from\s+(?P<child>\d+))?")
MR = re.compile(r"^\s*\+(?:H|F\d*|DTP?|R\d*):")
MR_SIZES = re.compile(r"^\s*\+H((?::\d+)+)")
MR_RESULT = re.compile(rf"^\s*\+F:(?P<index>\d+):(?P<name>[^:]+)(?P<values>(?::{_NUMBER})+)")
MR_PKEY = re.compile(
    rf"^\s*\+F(?P<kind>\d+):(?P<index>\d+):(?P<bits>\d+)(?P<values>(?::{_NUMBER})+)"
)
MR_START = re.compile(r"^\s*\+DT:(?P<name>[^:]+):(?P<seconds>\d+):(?P<size>\d+)")
MR_COUNT = re.compile(rf"^\s*\+R:(?P<count>\d+):(?P<name>[^:]+):(?P<time>{_NUMBER})")
VERSION = re.compile(
    r"^\s*(?:version:\s*(?P<v3>\d\S*)"
    r"|OpenSSL\s+(?P<v1>\d+\.\d+\.\d+\w*)\s+(?:\S+\s+)?\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})"
)
BUILD = re.compile(r"^\s*(?P<key>built on|options|compiler|CPUINFO|platform)\s*:\s*(?P<value>.*)$")
NUMBERS = re.compile(r"^\s*The 'numbers' are in 1000s of bytes per second", re.IGNORECASE)
TYPE = re.compile(r"^\s*type\s+(?P<sizes>(?:\d+\s*bytes?\s*)+)$")
# a value is printed "%.2f" ("%.2fk" from 10000 bytes/s on); a run that counted no CPU
# time divides by zero and prints "infk" (or "nan")
_ROW_NUMBER = r"(?:\d+\.\d\dk?|-?(?:inf|nan)k?)"
ROW = re.compile(
    r"^\s*(?P<name>[A-Za-z][\w()./+-]*(?:\s[A-Za-z][\w()./+-]*)?)"
    rf"(?P<values>(?:\s+{_ROW_NUMBER})+)\s*$",
    re.IGNORECASE,
)
MORE_VALUES = re.compile(rf"^\s*{_ROW_NUMBER}(?:\s+{_ROW_NUMBER})*\s*$", re.IGNORECASE)
MORE_SIZES = re.compile(r"^\s*(?:\d+\s*bytes?\s*)+$")
ROW_VALUE = re.compile(r"(?P<number>\d+\.\d\d|-?inf|-?nan)(?P<k>k?)", re.IGNORECASE)
PKEY_HEADER = re.compile(r"^\s*(?P<columns>(?:[a-z]+(?:/s)?\s+)*[a-z]+/s)\s*$")
PKEY_ROW = re.compile(
    rf"^\s*(?P<name>.*?[A-Za-z].*?)\s+(?P<times>(?:{_NUMBER}s\s+)+)"
    rf"(?P<rates>{_NUMBER}(?:\s+{_NUMBER})*)\s*$"
)

# Where a pasted openssl line may have lost its line break (paste.read_paste).
SPLITTERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<=\d\.\d\dk)\s*(?=[^\s\d,;:)\]])"),
    re.compile(r"(?<=[^\s:])\s*(?=\+(?:H|F\d*|DTP?|R\d*):)"),
    re.compile(r"\s*(?=The 'numbers' are in 1000s)"),
    re.compile(r"(?<=processed\.)\s*(?=\S)"),
    re.compile(r"\s+(?=type\s+\d+\s*bytes)"),
    re.compile(r"\s*(?=Doing\s+\S.*?\s+for\s+\d+s\s+on\s+\d+\s+size\s+blocks)"),
    re.compile(r"\s*(?=You have chosen to measure elapsed)"),
)

_DIGESTS = re.compile(
    r"^(?:md[245]|mdc2|sha\d*(?:-\d+)?|sha3-\d+|shake\d+|rmd160|ripemd160|whirlpool|sm3|"
    r"blake2[bs]\d*|ghash|poly1305|siphash|kmac\d+|hmac\(.*\)|cmac\(.*\)|hmac|cmac|rand)$"
)
_KEY_BITS = re.compile(r"-(?P<bits>128|192|256)(?:-|$)")
# +F<kind> of -mr output: the public-key kind and the meaning of its two values
MR_PKEY_KINDS = {
    2: ("rsa", ("sign/s", "verify/s")),
    3: ("dsa", ("sign/s", "verify/s")),
    4: ("ecdsa", ("sign/s", "verify/s")),
    5: ("ecdh", ("op/s", "op")),
    6: ("eddsa", ("sign/s", "verify/s")),
    7: ("sm2", ("sign/s", "verify/s")),
    8: ("ffdh", ("op/s", "op")),
}


@dataclass
class NoRateRecord(Record):
    """A row whose values openssl could not compute ("infk": no CPU time was counted)."""

    KIND = "openssl-no-rate"
    algorithm: str
    block_sizes: list[int] = field(default_factory=list)

    def describe(self) -> str:
        sizes = ", ".join(map(str, self.block_sizes))
        return f"{self.algorithm}: no rate at {sizes} B (openssl printed inf: no CPU time counted)"


@dataclass
class PublicKeyRecord(Record):
    """A sign/verify (or key-exchange) row: operations per second, never bytes/s."""

    KIND = "openssl-public-key"
    algorithm: str
    bits: int | None = None
    curve: str | None = None
    per_second: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        name = self.algorithm + (f" {self.bits} bits" if self.bits else "")
        name += f" ({self.curve})" if self.curve else ""
        rates = ", ".join(f"{value:g} {key}" for key, value in self.per_second.items())
        return f"{name}: {rates or 'no rate'}"


def normalise_name(name: str) -> str:
    """'aes-128 cbc' (1.1 legacy), 'AES-128-CBC' (3.x EVP) -> 'aes-128-cbc'."""
    return re.sub(r"\s+", "-", name.strip()).lower()


def is_digest(algorithm: str) -> bool:
    return _DIGESTS.match(algorithm) is not None


def key_bits(algorithm: str) -> int | None:
    if algorithm.startswith("chacha20"):
        return 256
    match = _KEY_BITS.search(algorithm)
    return int(match["bits"]) if match else None


def row_rates(values: str) -> list[float | None]:
    """Bytes/s of each value of a table row: 'k' is 1000 bytes/s, a bare value bytes/s."""
    rates: list[float | None] = []
    for match in ROW_VALUE.finditer(values):
        rate = float(match["number"]) * (1000.0 if match["k"] else 1.0)
        rates.append(rate if finite_rate(rate) else None)
    return rates


def numbers(text: str) -> list[float]:
    """The ':'-separated numbers of an -mr line's tail (':1.0:2.5' -> [1.0, 2.5])."""
    return [float(item) for item in text.split(":") if item]


def pkey_record(name: str, columns: list[str], times: str, rates: str) -> PublicKeyRecord:
    """A PublicKeyRecord from a sign/verify row under its header's columns."""
    time_names = [column for column in columns if not column.endswith("/s")]
    rate_names = [column for column in columns if column.endswith("/s")]
    record = pkey_name(name)
    for column, value in zip(time_names, re.findall(_NUMBER, times)):
        if finite_rate(float(value)):
            record.seconds[column] = float(value)
    for column, value in zip(rate_names, rates.split()):
        if finite_rate(float(value)):
            record.per_second[column] = float(value)
    return record


def pkey_name(name: str) -> PublicKeyRecord:
    """'rsa 2048 bits', ' 256 bits ecdsa (nistp256)', '253 bits EdDSA (Ed25519)'."""
    bits = re.search(r"(\d+)\s*bits?", name)
    curve = re.search(r"\(([^)]+)\)", name)
    words = [word for word in re.findall(r"[A-Za-z][\w-]*", name) if word.lower() != "bits"]
    return PublicKeyRecord(
        algorithm=words[0].lower() if words else "unknown",
        bits=int(bits[1]) if bits and len(bits[1]) <= 6 else None,
        curve=curve[1].lower() if curve else None,
    )
