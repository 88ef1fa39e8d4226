# SPDX-License-Identifier: MIT
"""procfs: /proc/crypto text -> CryptoAlg records, on real captures and hand-made edge cases.

Captures live in tests/data/proc_crypto/*.txt (one per kernel/board). Every file there is
checked by the generic tests below; add a file and it is covered.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.procfs import (
    CryptoAlg,
    ProcCryptoError,
    parse_capture_bytes,
    parse_proc_crypto,
    parse_proc_crypto_detailed,
    read_capture,
    read_proc_crypto,
)

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"
CAPTURE_FILES = sorted(CAPTURES.glob("*.txt"))
UML = CAPTURES / "uml-6.1.176.txt"
UML_TEMPLATES = CAPTURES / "uml-6.1.176-templates.txt"
HOST = CAPTURES / "host-6.18.44-fc-v782.txt"


def capture(path: Path) -> list[CryptoAlg]:
    return read_proc_crypto(path)


def only(algs: list[CryptoAlg], driver: str) -> CryptoAlg:
    found = [alg for alg in algs if alg.driver == driver]
    assert len(found) == 1, f"{driver}: {len(found)} records"
    return found[0]


# --- every capture -------------------------------------------------------------------------


def test_captures_are_present() -> None:
    assert {UML, UML_TEMPLATES, HOST} <= set(CAPTURE_FILES)


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: path.name)
def test_capture_parses_into_one_record_per_name_line(path: Path) -> None:
    text = path.read_text()
    algs = parse_proc_crypto(text, str(path))
    assert len(algs) == text.count("\nname ") + text.startswith("name ")
    assert all(alg.name and alg.driver and alg.module for alg in algs)
    assert all(isinstance(alg.priority, int) for alg in algs)
    assert all(alg.source == str(path) for alg in algs)


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: path.name)
def test_capture_keeps_every_printed_line_in_fields(path: Path) -> None:
    text = path.read_text()
    algs = parse_proc_crypto(text)
    printed = [line for line in text.splitlines() if line.strip()]
    assert sum(len(alg.fields) for alg in algs) == len(printed)


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: path.name)
def test_capture_record_lines_point_at_their_name_line(path: Path) -> None:
    lines = path.read_text().splitlines()
    for alg in parse_proc_crypto(path.read_text()):
        assert lines[alg.line - 1].startswith("name")
        assert alg.name in lines[alg.line - 1]


# --- concrete values from the UML capture (kernel 6.1.176, AF_ALG binds done) ---------------


def test_uml_aes_generic_record() -> None:
    aes = only(capture(UML), "aes-generic")
    assert (aes.name, aes.module, aes.priority, aes.refcnt) == ("aes", "kernel", 100, 1)
    assert (aes.selftest, aes.internal, aes.type) == ("passed", False, "cipher")
    assert (aes.blocksize, aes.min_keysize, aes.max_keysize) == (16, 16, 32)
    assert aes.ivsize is None and aes.is_async is None and aes.fips is None
    assert aes.passed_selftest and not aes.is_internal


def test_uml_skcipher_record_has_async_walksize_and_raw_fields_in_order() -> None:
    xts = only(capture(UML), "xts(ecb(aes-generic))")
    assert xts.name == "xts(aes)" and xts.module == "xts" and xts.type == "skcipher"
    assert xts.is_async is False
    assert (xts.min_keysize, xts.max_keysize, xts.ivsize) == (32, 64, 16)
    assert (xts.chunksize, xts.walksize) == (16, 16)
    assert list(xts.fields) == [
        "name",
        "driver",
        "module",
        "priority",
        "refcnt",
        "selftest",
        "internal",
        "type",
        "async",
        "blocksize",
        "min keysize",
        "max keysize",
        "ivsize",
        "chunksize",
        "walksize",
    ]
    assert xts.fields["min keysize"] == "32"


def test_uml_first_record_is_the_most_recently_registered() -> None:
    algs = capture(UML)
    # The AF_ALG binds instantiated ctr, cbc, xts, ecb last; the kernel lists newest first.
    assert [alg.driver for alg in algs[:4]] == [
        "ctr(aes-generic)",
        "cbc(aes-generic)",
        "xts(ecb(aes-generic))",
        "ecb(aes-generic)",
    ]
    assert algs[0].line == 1


def test_uml_same_name_with_two_types_is_two_records() -> None:
    lzo = [alg for alg in capture(UML) if alg.name == "lzo"]
    assert [(alg.driver, alg.type) for alg in lzo] == [
        ("lzo-scomp", "scomp"),
        ("lzo-generic", "compression"),
    ]
    assert lzo[0].refcnt == 3


def test_uml_templates_capture_aead_fields() -> None:
    gcm = only(capture(UML_TEMPLATES), "gcm_base(ctr(aes-fixed-time),ghash-generic)")
    assert (gcm.name, gcm.module, gcm.type) == ("gcm(aes)", "gcm", "aead")
    assert (gcm.ivsize, gcm.maxauthsize, gcm.geniv) == (12, 16, "<none>")
    authenc = only(capture(UML_TEMPLATES), "authenc(hmac(sha256-generic),cryptd(cbc(aes-generic)))")
    assert authenc.priority == 1600 and authenc.is_async is True


def test_uml_templates_capture_rng_seedsize_and_several_drivers_of_one_name() -> None:
    stdrng = [alg for alg in capture(UML_TEMPLATES) if alg.name == "stdrng"]
    assert len(stdrng) == 8
    assert stdrng[0].driver == "drbg_nopr_hmac_sha512" and stdrng[0].priority == 207
    assert all(alg.seedsize == 0 and alg.type == "rng" for alg in stdrng)


def test_host_capture_lskcipher_statesize_and_kpp() -> None:
    algs = capture(HOST)
    cbc = only(algs, "cbc(ecb(aes-fixed-time))")
    assert (cbc.type, cbc.statesize, cbc.chunksize) == ("lskcipher", 0, 16)
    assert cbc.is_async is None  # lskcipher blocks do not print "async"
    kpp = only(algs, "ecdh-nist-p384-generic")
    assert kpp.type == "kpp" and kpp.blocksize is None


def test_read_proc_crypto_names_the_path_in_records(tmp_path: Path) -> None:
    copy = tmp_path / "crypto"
    copy.write_text(UML.read_text())
    algs = read_proc_crypto(copy)
    assert algs[0].source == str(copy)
    assert algs[0].location == f"{copy}:1"


# --- hand-made edge cases --------------------------------------------------------------------

ONE = """name         : aes
driver       : aes-generic
module       : kernel
priority     : 100
refcnt       : 1
selftest     : passed
internal     : no
type         : cipher
blocksize    : 16
min keysize  : 16
max keysize  : 32

"""

TWO_DRIVERS = """name         : xts(aes)
driver       : xts-aes-aesni
module       : aesni_intel
priority     : 401
refcnt       : 1
selftest     : passed
internal     : no
type         : skcipher
async        : yes

name         : __xts(aes)
driver       : __xts-aes-aesni
module       : aesni_intel
priority     : 401
refcnt       : 1
selftest     : passed
internal     : yes
type         : skcipher
async        : no

name         : xts(aes)
driver       : xts(ecb(aes-generic))
module       : xts
priority     : 100
refcnt       : 1
selftest     : passed
internal     : no
type         : skcipher
async        : no

"""


def test_blank_lines_of_any_number_and_whitespace_only_lines_separate_records() -> None:
    text = "\n\n" + ONE.replace("\n\n", "\n   \n\n\n") + "\n\n" + ONE
    algs = parse_proc_crypto(text)
    assert len(algs) == 2
    assert algs[0] == algs[1]
    assert algs[0].line == 3 and algs[1].line == 19


def test_empty_text_has_no_records() -> None:
    assert parse_proc_crypto("") == []
    assert parse_proc_crypto("\n\n  \n") == []


def test_unknown_fields_are_kept_in_order() -> None:
    text = ONE.replace("blocksize", "flavour      : spicy\nblocksize")
    (alg,) = parse_proc_crypto(text)
    assert alg.fields["flavour"] == "spicy"
    assert list(alg.fields).index("flavour") == list(alg.fields).index("blocksize") - 1


def test_fips_field_of_fips_kernels() -> None:
    text = ONE.replace("type ", "fips         : no\ntype ")
    (alg,) = parse_proc_crypto(text)
    assert alg.fips is False


def test_missing_optional_fields_are_none() -> None:
    text = "name         : aes\ndriver       : aes-generic\n\n"
    (alg,) = parse_proc_crypto(text)
    assert alg.module is None and alg.priority is None and alg.refcnt is None
    assert alg.selftest is None and alg.internal is None and alg.type is None
    assert not alg.passed_selftest and not alg.is_internal


def test_record_without_driver_is_left_out_with_a_note_naming_source_and_line() -> None:
    lines = [line for line in ONE.splitlines() if not line.startswith("driver")]
    text = ONE + "\n".join(lines) + "\n\n"
    parsed = parse_proc_crypto_detailed(text, "board.txt")
    assert [alg.driver for alg in parsed.algs] == ["aes-generic"]
    assert parsed.notes == ("board.txt:13: record 'aes' has no 'driver' line: skipped",)


def test_fields_without_a_name_line_above_are_left_out_with_one_note() -> None:
    lines = [line for line in ONE.splitlines() if not line.startswith(("name", "driver"))]
    text = ONE + "\n".join(lines) + "\n\n"
    parsed = parse_proc_crypto_detailed(text, "board.txt")
    assert len(parsed.algs) == 1
    assert parsed.notes == (
        "board.txt:13: 'module : kernel' outside a record (no 'name' line above)",
    )


def test_a_file_with_no_record_at_all_is_one_error_naming_it() -> None:
    with pytest.raises(ProcCryptoError, match=r"^notes.txt: no /proc/crypto record in it"):
        parse_proc_crypto("Hello: world\nsome prose\n", "notes.txt")


def test_duplicate_names_and_identical_records_are_all_kept() -> None:
    algs = parse_proc_crypto(TWO_DRIVERS + TWO_DRIVERS)
    assert len(algs) == 6
    assert [alg.driver for alg in algs[:3]] == [
        "xts-aes-aesni",
        "__xts-aes-aesni",
        "xts(ecb(aes-generic))",
    ]
    assert algs[0] == algs[3] and algs[0].line != algs[3].line
    assert algs[1].is_internal and algs[1].internal is True
    assert algs[0].is_async is True


def test_records_are_hashable_despite_their_fields_dict() -> None:
    algs = parse_proc_crypto(TWO_DRIVERS + TWO_DRIVERS)
    assert len(set(algs)) == 3


def test_records_are_frozen() -> None:
    (alg,) = parse_proc_crypto(ONE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        alg.priority = 5  # type: ignore[misc]


def test_a_field_line_without_its_colon_is_skipped_with_a_note() -> None:
    text = ONE.replace("refcnt       : 1", "refcnt 1")
    parsed = parse_proc_crypto_detailed(text, "x")
    (alg,) = parsed.algs
    assert alg.refcnt is None and alg.type == "cipher" and alg.max_keysize == 32
    assert parsed.notes == ("x:5: malformed line 'refcnt 1' (expected 'key : value'): skipped",)


def test_non_numeric_priority_is_left_out_with_a_note_at_its_line() -> None:
    parsed = parse_proc_crypto_detailed(
        ONE + ONE.replace("priority     : 100", "priority     : high")
    )
    assert [alg.priority for alg in parsed.algs] == [100, None]
    assert parsed.notes == ("/proc/crypto:16: unexpected value 'high' for 'priority': left out",)


def test_yes_no_field_with_other_value_is_left_out_with_a_note() -> None:
    parsed = parse_proc_crypto_detailed(ONE.replace("internal     : no", "internal     : maybe"))
    assert parsed.algs[0].internal is None
    assert parsed.notes[0].endswith(":7: unexpected value 'maybe' for 'internal': left out")


def test_records_without_blank_lines_between_them_are_split_at_each_name_line() -> None:
    # As the sun4i-ss big-endian dump was mailed: the kernel's blank lines lost.
    text = ONE.rstrip("\n") + "\n" + TWO_DRIVERS.replace("\n\n", "\n")
    parsed = parse_proc_crypto_detailed(text)
    assert [alg.driver for alg in parsed.algs] == [
        "aes-generic",
        "xts-aes-aesni",
        "__xts-aes-aesni",
        "xts(ecb(aes-generic))",
    ]
    assert [alg.line for alg in parsed.algs] == [1, 12, 21, 30]
    assert parsed.algs[0] == parse_proc_crypto(ONE)[0] and parsed.notes == ()


def test_a_repeated_field_without_a_name_line_drops_the_lines_up_to_the_next_record() -> None:
    block = ONE.split("\n", 1)[1]  # a record that lost its name line
    text = ONE.rstrip("\n") + "\n" + block.replace("driver       : aes-generic\n", "") + ONE
    parsed = parse_proc_crypto_detailed(text)
    assert len(parsed.algs) == 2 and parsed.algs[0] == parsed.algs[1]
    assert len(parsed.notes) == 1 and "field 'module' repeated" in parsed.notes[0]


PASTED = """Here is what my board says:

root@board:~# cat /proc/crypto
name         : cbc(aes)\r
driver       : cbc-aes-sun8i-ce\r
module       : kernel\r
priority     : 400\r
type         : skcipher\r
root@board:~# grep -B1 -A3 -n 'driver.*generic' /proc/crypto
12-name         : aes
13:driver       : aes-generic
14-module       : kernel
15-priority     : 100
16-refcnt       : 1
--
30-name         : sha256
31:driver       : sha256-generic
32-module       : kernel
33-priority     : 100
34-refcnt       : 1
$ grep -H -A1 xts /proc/crypto
/proc/crypto:name         : xts(aes)
/proc/crypto-driver       : xts-aes-ce
> \tname : ctr(aes)
> \tdriver : ctr-aes-ce<br>
Thanks!
"""


def test_pasted_text_prompts_prose_crlf_grep_prefixes_separators_and_quoting() -> None:
    parsed = parse_proc_crypto_detailed(PASTED, "mail.txt")
    assert [(alg.name, alg.driver) for alg in parsed.algs] == [
        ("cbc(aes)", "cbc-aes-sun8i-ce"),
        ("aes", "aes-generic"),
        ("sha256", "sha256-generic"),
        ("xts(aes)", "xts-aes-ce"),
        ("ctr(aes)", "ctr-aes-ce"),
    ]
    assert parsed.algs[0].priority == 400 and parsed.algs[1].refcnt == 1
    assert parsed.algs[1].line == 10 and parsed.notes == ()


def test_driver_lines_alone_and_wrapped_values_name_their_drivers() -> None:
    # `grep 'pcrypt(' /proc/crypto` in a narrow terminal: the value wrapped to the next line.
    text = (
        "$ grep pcrypt /proc/crypto\n"
        "driver       : \n"
        "pcrypt(pcrypt(ccm_base(ctr(aes-generic),\n"
        "cbcmac(aes-generic))))\n"
        "driver       : pcrypt(gcm_base(ctr(aes-generic),ghash-generic))\n"
    )
    parsed = parse_proc_crypto_detailed(text)
    assert [alg.driver for alg in parsed.algs] == [
        "pcrypt(pcrypt(ccm_base(ctr(aes-generic),cbcmac(aes-generic))))",
        "pcrypt(gcm_base(ctr(aes-generic),ghash-generic))",
    ]
    assert {alg.name for alg in parsed.algs} == {""} and parsed.notes == ()


def test_elided_fields_keep_the_record_open() -> None:
    text = "\tname : __xts(aes)\n\tdriver : __xts-aes-ce\n\t...\n\twalksize : 128\n"
    (alg,) = parse_proc_crypto(text)
    assert alg.walksize == 128


def test_a_grep_excerpt_keeps_its_last_record_though_no_record_has_a_type_line() -> None:
    text = "name : ecdh\ndriver : ecdh-generic\nname : ecdsa\ndriver : ecdsa-generic\n"
    parsed = parse_proc_crypto_detailed(text)
    assert [alg.driver for alg in parsed.algs] == ["ecdh-generic", "ecdsa-generic"]
    assert not parsed.truncated


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "cap.txt: empty: no /proc/crypto record in it"),
        (b"\x7fELF\x02\x01\x00\x00", "cap.txt:1: binary data (a NUL byte)"),
        (bytes(range(128, 256)) * 4, "cap.txt: binary data (not UTF-8 text)"),
        (
            b"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel name\t: EPYC\n",
            "cap.txt: this is /proc/cpuinfo, not /proc/crypto",
        ),
        (b"name : aes\nmodule : kernel\n\n", "cap.txt: no usable /proc/crypto record (first"),
    ],
)
def test_captures_that_cannot_be_used_are_one_line_errors(data: bytes, message: str) -> None:
    with pytest.raises(ProcCryptoError) as raised:
        parse_capture_bytes(data, "cap.txt")
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_read_capture_names_a_directory_and_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProcCryptoError, match="is a directory"):
        read_capture(tmp_path)
    with pytest.raises(ProcCryptoError, match="no such file"):
        read_capture(tmp_path / "absent.txt")


def test_truncated_mid_line_keeps_complete_records() -> None:
    text = TWO_DRIVERS + ONE[: ONE.index("priority") + 12]  # "priority   " cut mid-line
    parsed = parse_proc_crypto_detailed(text, "cut.txt")
    assert [alg.driver for alg in parsed.algs] == [
        "xts-aes-aesni",
        "__xts-aes-aesni",
        "xts(ecb(aes-generic))",
        "aes-generic",
    ]
    # The cut record still names its driver; it is marked so it cannot win its name.
    assert [alg.complete for alg in parsed.algs] == [True, True, True, False]
    assert parsed.algs[3].priority is None and parsed.algs[3].module == "kernel"
    assert parsed.truncated and parsed.truncated_at_line == 31
    assert parse_proc_crypto(text) == list(parsed.algs)


def test_truncated_mid_value_leaves_the_cut_value_out() -> None:
    # "priority : 10" could be the start of "100": the value cannot be trusted.
    text = ONE + ONE[: ONE.index("refcnt") - 2]
    parsed = parse_proc_crypto_detailed(text)
    assert len(parsed.algs) == 2 and parsed.truncated_at_line == 13
    assert parsed.algs[1].priority is None and not parsed.algs[1].complete


def test_truncated_at_a_line_end_before_the_driver_line() -> None:
    text = ONE + "name         : sha256\n"
    parsed = parse_proc_crypto_detailed(text)
    assert len(parsed.algs) == 1 and parsed.truncated_at_line == 13


def test_truncated_at_a_line_end_before_the_type_line() -> None:
    # Without "type" the record may lack selftest/internal, which decide the winner.
    text = ONE + ONE[: ONE.index("selftest")]
    parsed = parse_proc_crypto_detailed(text, "cut.txt")
    assert len(parsed.algs) == 2 and parsed.truncated_at_line == 13
    assert parsed.algs[1].refcnt == 1 and not parsed.algs[1].complete
    assert parsed.notes == (
        "cut.txt:13: record cut off before its 'type' line: kept, but it cannot win its name",
    )


def test_truncated_inside_the_first_key_of_a_new_record() -> None:
    parsed = parse_proc_crypto_detailed(ONE + "nam")
    assert len(parsed.algs) == 1 and parsed.truncated_at_line == 13


def test_stripped_text_keeps_its_last_record() -> None:
    # Text passed around with .strip() lost the final blank line but no data.
    parsed = parse_proc_crypto_detailed(TWO_DRIVERS.strip())
    assert len(parsed.algs) == 3
    # Without its newline the last line might have been cut: it is ignored and reported.
    assert parsed.algs[2].is_async is None and parsed.algs[2].priority == 100
    assert parsed.truncated_at_line == 29


def test_complete_last_record_without_trailing_blank_line_is_kept() -> None:
    parsed = parse_proc_crypto_detailed(ONE.rstrip("\n") + "\n")
    assert len(parsed.algs) == 1 and not parsed.truncated
    assert parsed.algs[0] == parse_proc_crypto(ONE)[0]


@pytest.mark.parametrize("path", [UML, UML_TEMPLATES], ids=lambda path: path.name)
def test_real_capture_cut_anywhere_never_raises_nor_alters_a_value(path: Path) -> None:
    text = path.read_text()
    full = parse_proc_crypto(text)
    for cut in range(0, len(text), 37):
        algs = parse_proc_crypto(text[:cut])
        complete_blocks = text[:cut].count("\n\n")
        assert complete_blocks <= len(algs) <= complete_blocks + 1
        for partial, whole in zip(algs, full):
            assert partial.fields.items() <= whole.fields.items()
            for attribute in ("name", "driver", "priority", "internal", "selftest", "type"):
                value = getattr(partial, attribute)
                if partial.complete or value is not None:
                    assert value == getattr(whole, attribute), (cut, attribute)


def test_serial_console_carriage_returns_and_indentation_are_ignored() -> None:
    text = "\r\n".join("  " + line for line in ONE.splitlines()) + "\r\n"
    (alg,) = parse_proc_crypto(text)
    assert alg.driver == "aes-generic" and alg.max_keysize == 32
